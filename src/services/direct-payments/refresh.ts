/**
 * Reading a direct payment again from provider A and applying what it says (contract §4, "Freshness"):
 * - {@link syncFromProvider}: one read and its application, used by the sync job and after a webhook;
 * - {@link refreshOnRead}: what a status read does — a pending record is refreshed at most once a second
 *   per payment, and concurrent readers share one upstream call. In a process they await the same
 *   promise; across processes, the conditional update of `provider_synced_at` lets one reader win the
 *   second and the others serve the row as stored.
 *
 * A payment whose create call got no answer has no provider id yet: it is found by our `pay_` id, sent
 * as the transaction's `merchant_reference`. When the provider has no such transaction long after the
 * call, it never received it, and the payment is `failed` (contract §4: `failed` = refused or never received).
 */
import type { Payment } from "../../db/schema.ts";
import { ProviderCallError } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { noteDifferenceOfPayment } from "../reports/differences.ts";
import { applyDirectPaymentUpdate } from "./apply-update.ts";

/** A pending record is read again from the provider at most this often. */
export const REFRESH_FLOOR_MS = 1_000;

/** After this long without the provider knowing our `merchant_reference`, the create call never reached it. */
export const NOT_RECEIVED_AFTER_MS = 2 * 60_000;

type SyncDeps = Pick<Deps, "db" | "queue" | "logger" | "now" | "config" | "keyring" | "providers" | "metrics" | "syncHold" | "caches">;

/**
 * Reads the payment from its provider (the port's `readPayment`) and applies the answer. Never throws for a
 * provider failure: it logs it and returns the row as stored (the sync job tries again later).
 */
export async function syncFromProvider(deps: SyncDeps, row: Payment): Promise<Payment> {
  try {
    const report = await deps.providers.get(row.provider).readPayment(deps as Deps, row);
    if (report === undefined) return row;
    if (report === null) {
      // The provider does not know it: after long enough, the create call never reached it.
      if (deps.now().getTime() - row.created_at.getTime() >= NOT_RECEIVED_AFTER_MS)
        return (await applyDirectPaymentUpdate(deps, row.id, { kind: "failed", failureCode: "not_received" })).row;
      return row;
    }
    // `row` is what the caller read before this call: applied with a guarded update when it still holds.
    const after = (await applyDirectPaymentUpdate(deps, row.id, { kind: "provider", report }, row)).row;
    // Ours final and the provider's word another: kept for the reconciliation report.
    if (after.state !== "pending" && after.state !== report.state) await noteDifferenceOfPayment(deps.db, deps.now(), after, report);
    return after;
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    deps.logger.warn({ paymentId: row.id, kind: error.kind, status: error.status }, "could not read a direct payment from its provider");
    return row;
  }
}

/**
 * The row to show a reader: refreshed from provider A when it is pending and was not read in the last
 * second; served from the database otherwise. Concurrent readers of one payment share one refresh
 * (`deps.caches.refreshes`, the gateway's refreshes in flight by payment id).
 *
 * @example
 * ```ts
 * const fresh = await refreshOnRead(deps, row);
 * ```
 */
export async function refreshOnRead(deps: SyncDeps, row: Payment): Promise<Payment> {
  if (row.state !== "pending") return row;
  const now = deps.now();
  if (row.provider_synced_at && now.getTime() - row.provider_synced_at.getTime() < REFRESH_FLOOR_MS) return row;
  const flights = deps.caches.refreshes;
  const running = flights.get(row.id);
  if (running) return running;
  const flight = (async () => {
    const floor = new Date(now.getTime() - REFRESH_FLOOR_MS);
    const claimed = await deps.db
      .updateTable("payments")
      .set({ provider_synced_at: now })
      .where("id", "=", row.id)
      .where((eb) => eb.or([eb("provider_synced_at", "is", null), eb("provider_synced_at", "<=", floor)]))
      .returningAll()
      .executeTakeFirst();
    // Another process read it within the second: its answer is in the row.
    if (!claimed) return (await deps.db.selectFrom("payments").selectAll().where("id", "=", row.id).executeTakeFirst()) ?? row;
    return syncFromProvider(deps, claimed);
  })();
  flights.set(row.id, flight);
  try {
    return await flight;
  } finally {
    flights.delete(row.id);
  }
}
