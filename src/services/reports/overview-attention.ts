/**
 * What needs the merchant's attention, whatever the overview's window (issue 29): its payments stuck past the
 * 24 h sync window (`payments/stuck-payments.ts`), its webhook endpoints that fail or that the gateway disabled,
 * its payouts and refunds still pending, and the providers it cannot be paid through for want of keys (the
 * provider's own `accountFor` says so, as the wallets list does). Each is read by index: the tenant's pending
 * payments (`payments_tenant_state_idx`), its endpoints (`webhook_endpoints_tenant_idx`), its pending payouts
 * (`payouts_tenant_pending_idx`, migration 0018).
 *
 * @module
 */
import { sql } from "kysely";
import { z } from "zod";
import type { Environment } from "../../db/schema.ts";
import { NotConfiguredError } from "../../errors.ts";
import { amountFrom, wholeUnits } from "../amounts.ts";
import type { Deps } from "../deps.ts";
import { CURRENCIES } from "../payments/payment-view.ts";
import { listStuckPayments, stuckBefore } from "../payments/stuck-payments.ts";

const timestamp = z.string().meta({ format: "date-time" });

/** How many stuck payments the overview names (the count is all of them). */
export const STUCK_LISTED = 5;

export const attentionSchema = z
  .object({
    stuckPayments: z
      .object({
        count: z.number().int(),
        oldest: z
          .array(z.object({ id: z.string(), provider: z.string(), amount: wholeUnits("Whole units"), currency: z.enum(CURRENCIES), createdAt: timestamp }))
          .meta({ description: `The oldest ${STUCK_LISTED}` }),
      })
      .meta({ description: "Payments still pending more than 24 h after they were created: nothing of ours moves them any more" }),
    webhookEndpoints: z
      .array(
        z.object({
          id: z.string(),
          url: z.string(),
          enabled: z.boolean(),
          disabledReason: z.string().nullable().meta({ description: "Why the gateway disabled it" }),
          failingSince: timestamp.nullable().meta({ description: "Since when its deliveries fail" }),
        }),
      )
      .meta({ description: "Endpoints whose deliveries fail, or that the gateway disabled (not those the merchant switched off)" }),
    pendingMoneyOut: z
      .array(z.object({ purpose: z.enum(["refund", "payout"]), count: z.number().int(), oldestCreatedAt: timestamp }))
      .meta({ description: "Payouts and refunds not final yet, whenever they were made" }),
    missingCredentials: z
      .array(z.object({ provider: z.string(), label: z.string() }))
      .meta({ description: "Providers the tenant has no account at in this environment: its keys are missing" }),
  })
  .meta({ id: "OverviewAttention" });

export type Attention = z.infer<typeof attentionSchema>;

/** How many of the tenant's payments are stuck (also what the index test explains). */
export function stuckCountQuery(deps: Pick<Deps, "db" | "now">, scope: { tenantId: string; environment: Environment }) {
  return deps.db
    .selectFrom("payments")
    .select(sql<string>`count(*)`.as("n"))
    .where("tenant_id", "=", scope.tenantId)
    .where("environment", "=", scope.environment)
    .where("state", "=", "pending")
    .where("created_at", "<=", stuckBefore(deps.now()));
}

/** The tenant's payouts and refunds still pending, per purpose (also what the index test explains). */
export function pendingMoneyOutQuery(deps: Pick<Deps, "db">, scope: { tenantId: string; environment: Environment }) {
  return deps.db
    .selectFrom("payouts")
    .select(["purpose", sql<string>`count(*)`.as("n"), sql<Date>`min(created_at)`.as("oldest")])
    .where("tenant_id", "=", scope.tenantId)
    .where("environment", "=", scope.environment)
    .where("state", "=", "pending")
    .groupBy("purpose")
    .orderBy("purpose");
}

/** What needs the attention of one tenant in one environment. */
export async function attentionOf(deps: Deps, scope: { tenantId: string; environment: Environment }): Promise<Attention> {
  const [stuckCount, stuck, endpoints, pending, missing] = await Promise.all([
    stuckCountQuery(deps, scope).executeTakeFirstOrThrow(),
    listStuckPayments(deps, { limit: STUCK_LISTED, tenantId: scope.tenantId, environment: scope.environment }),
    deps.db
      .selectFrom("webhook_endpoints")
      .select(["id", "url", "enabled", "disabled_reason", "failing_since"])
      .where("tenant_id", "=", scope.tenantId)
      .where("environment", "=", scope.environment)
      .where((eb) =>
        eb.or([
          eb.and([eb("enabled", "=", true), eb("failing_since", "is not", null)]),
          eb.and([eb("enabled", "=", false), eb("disabled_reason", "is not", null)]),
        ]),
      )
      .orderBy("id", "desc")
      .execute(),
    pendingMoneyOutQuery(deps, scope).execute(),
    missingCredentials(deps, scope),
  ]);
  return {
    stuckPayments: {
      count: Number(stuckCount.n),
      oldest: stuck.data.map((payment) => ({
        id: payment.id,
        provider: payment.provider,
        amount: payment.amount,
        currency: payment.currency,
        createdAt: payment.createdAt,
      })),
    },
    webhookEndpoints: endpoints.map((endpoint) => ({
      id: endpoint.id,
      url: endpoint.url,
      enabled: endpoint.enabled,
      disabledReason: endpoint.disabled_reason,
      failingSince: endpoint.failing_since?.toISOString() ?? null,
    })),
    pendingMoneyOut: pending.map((row) => ({ purpose: row.purpose, count: amountFrom(row.n), oldestCreatedAt: new Date(row.oldest).toISOString() })),
    missingCredentials: missing,
  };
}

/** The providers the tenant cannot take a payment through in this environment: none of their accounts is open to it. */
async function missingCredentials(deps: Deps, scope: { tenantId: string; environment: Environment }): Promise<Attention["missingCredentials"]> {
  const missing: Attention["missingCredentials"] = [];
  for (const provider of deps.providers.all) {
    try {
      await provider.accountFor(deps, scope.tenantId, scope.environment);
    } catch (error) {
      if (!(error instanceof NotConfiguredError)) throw error;
      missing.push({ provider: provider.name, label: provider.label });
    }
  }
  return missing;
}
