/**
 * A new merchant's way to its first real payment (issue 29 point 4), read from what it has done: its
 * provider keys stored, a test payment collected in sandbox, a webhook endpoint, then live enabled by the
 * operator. The dashboard's Home shows it as a checklist until every step is done.
 *
 * @example
 * ```ts
 * await onboarding(deps, "ten_01…"); // { steps: [{ step: "credentials", done: true }, …], done: false }
 * ```
 */
import { z } from "zod";
import type { Deps } from "../deps.ts";

export const ONBOARDING_STEPS = ["credentials", "testPayment", "webhook", "live"] as const;

export const onboardingSchema = z
  .object({
    steps: z.array(z.object({ step: z.enum(ONBOARDING_STEPS), done: z.boolean() })).meta({
      description:
        "In order: credentials (a provider's keys stored), testPayment (a sandbox payment collected), webhook (an endpoint added), " +
        "live (the operator let the tenant take real money)",
    }),
    done: z.boolean().meta({ description: "Every step is done" }),
  })
  .meta({ id: "Onboarding" });

export type Onboarding = z.infer<typeof onboardingSchema>;

/** Where a tenant stands on its way to live: four small reads, each stopping at the first row it finds. */
export async function onboarding(deps: Pick<Deps, "db">, tenantId: string): Promise<Onboarding> {
  const db = deps.db;
  const [credentials, payment, webhook, tenant] = await Promise.all([
    db.selectFrom("provider_credentials").select("id").where("tenant_id", "=", tenantId).where("active", "=", true).limit(1).executeTakeFirst(),
    db
      .selectFrom("payments")
      .select("id")
      .where("tenant_id", "=", tenantId)
      .where("environment", "=", "sandbox")
      .where("state", "in", ["succeeded", "refunded"])
      .limit(1)
      .executeTakeFirst(),
    db.selectFrom("webhook_endpoints").select("id").where("tenant_id", "=", tenantId).limit(1).executeTakeFirst(),
    db.selectFrom("tenants").select("live_enabled").where("id", "=", tenantId).executeTakeFirst(),
  ]);
  const done = {
    credentials: credentials !== undefined,
    testPayment: payment !== undefined,
    webhook: webhook !== undefined,
    live: tenant?.live_enabled ?? false,
  };
  const steps = ONBOARDING_STEPS.map((step) => ({ step, done: done[step] }));
  return { steps, done: steps.every((step) => step.done) };
}
