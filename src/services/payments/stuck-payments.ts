/**
 * Payments still pending after the 24 h sync window (contract §8: "still pending then → flagged for the
 * operator (metric + admin list), never assumed failed"). Both sync jobs (`providerA-sync`,
 * `providerB-sync`) stop 24 h after a payment's creation; a payment still `pending` past that point is
 * "stuck": nothing of ours will move it any more, only a provider webhook/IPN or an operator.
 *
 * Decision: "stuck" is derived, not stored — `state = 'pending'` and `created_at` at least
 * {@link STUCK_AFTER_MS} before the gateway's clock — so a payment whose sync chain was lost (Redis) is
 * flagged all the same, and one that a late webhook settles leaves the list by itself. A partial index
 * on pending payments (migration 0007) keeps both the list and the gauge off the settled rows.
 */
import { sql } from "kysely";
import type { Gauge, Registry } from "prom-client";
import { Gauge as PromGauge } from "prom-client";
import type { Environment } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { decodeCursor, encodeCursor } from "../paging.ts";
import { assertKnownProvider, toPaymentView, type PaymentView } from "./payment-view.ts";

/** The sync window of both providers (contract §8): after it, a pending payment is stuck. */
export const STUCK_AFTER_MS = 24 * 60 * 60_000;

/** The moment before which a still-pending payment is stuck. */
export function stuckBefore(now: Date): Date {
  return new Date(now.getTime() - STUCK_AFTER_MS);
}

export interface ListStuckInput {
  limit: number;
  cursor?: string;
  provider?: string;
  environment?: Environment;
  tenantId?: string;
}

export type StuckPaymentView = PaymentView & { tenantId: string; pendingSeconds: number };

/**
 * Stuck payments of every tenant, oldest first (keyset paging on the id).
 *
 * @example
 * ```ts
 * const page = await listStuckPayments(deps, { limit: 50, provider: "providerA" });
 * ```
 */
export async function listStuckPayments(
  deps: Pick<Deps, "db" | "now" | "providers">,
  input: ListStuckInput,
): Promise<{ data: StuckPaymentView[]; nextCursor: string | null }> {
  assertKnownProvider(deps, input.provider);
  const now = deps.now();
  const after = input.cursor === undefined ? undefined : decodeCursor("pay", input.cursor);
  let query = deps.db.selectFrom("payments").selectAll().where("state", "=", "pending").where("created_at", "<=", stuckBefore(now));
  if (input.provider !== undefined) query = query.where("provider", "=", input.provider);
  if (input.environment !== undefined) query = query.where("environment", "=", input.environment);
  if (input.tenantId !== undefined) query = query.where("tenant_id", "=", input.tenantId);
  if (after !== undefined) query = query.where("id", ">", after);
  const rows = await query
    .orderBy("id", "asc")
    .limit(input.limit + 1)
    .execute();
  const page = rows.slice(0, input.limit);
  return {
    data: page.map((row) => ({
      ...toPaymentView(row),
      tenantId: row.tenant_id,
      pendingSeconds: Math.floor((now.getTime() - row.created_at.getTime()) / 1000),
    })),
    nextCursor: rows.length > input.limit ? encodeCursor(page[page.length - 1]!.id) : null,
  };
}

/** How many payments are stuck, per provider (every provider the gateway runs always present). */
export async function countStuckPayments(deps: Pick<Deps, "db" | "now" | "providers">): Promise<Record<string, number>> {
  const rows = await deps.db
    .selectFrom("payments")
    .select(["provider", sql<string>`count(*)`.as("n")])
    .where("state", "=", "pending")
    .where("created_at", "<=", stuckBefore(deps.now()))
    .groupBy("provider")
    .execute();
  const counts: Record<string, number> = Object.fromEntries(deps.providers.all.map((provider) => [provider.name, 0]));
  for (const row of rows) counts[row.provider] = Number(row.n);
  return counts;
}

/**
 * Registers `passerelle_payments_stuck_pending{provider}` on the gateway's registry: computed from the
 * database at each scrape (a failed count leaves the last values and is logged).
 */
export function registerStuckPaymentsGauge(registry: Registry, deps: Pick<Deps, "db" | "now" | "logger" | "providers">): Gauge<"provider"> {
  return new PromGauge({
    name: "passerelle_payments_stuck_pending",
    help: "Payments still pending after the 24 h sync window, flagged for the operator (GET /admin/payments/stuck), by provider",
    labelNames: ["provider"] as const,
    registers: [registry],
    async collect() {
      try {
        const counts = await countStuckPayments(deps);
        for (const [provider, n] of Object.entries(counts)) this.set({ provider }, n);
      } catch (err) {
        deps.logger.warn({ err }, "could not count the stuck pending payments for the metrics");
      }
    },
  });
}
