/**
 * A gateway's copies of final provider A transactions (see `read-transaction.ts`), in a module of its own
 * so that `apply-update.ts` can drop a copy without importing the read path (which imports it back). The
 * cache itself is `deps.caches.finalReads`, built with the gateway (`services/caches.ts`).
 * {@link FINAL_READ_CACHE_MS} is the refresh floor of `refresh.ts` (`REFRESH_FLOOR_MS`, 1 s).
 *
 * @module
 */
import { ExpiringMap } from "../expiring-map.ts";
import type { Environment, Payment } from "../../db/schema.ts";
import type { IsApprovedView, TransactionStatusView } from "./status.ts";

/** How long a process may serve a final transaction's answer without reading the database again. */
export const FINAL_READ_CACHE_MS = 1_000;

/** How many final transactions a process keeps (a row and its two views: a few KB each at most). */
export const FINAL_READ_CACHE_SIZE = 5_000;

/** A final row and the views built from it (built on first use, then shared: never mutated). */
export interface FinalRead {
  row: Payment;
  status?: TransactionStatusView;
  approved?: IsApprovedView;
}

/** The cached answers, and the reads in flight (concurrent misses of one key share one query): `deps.caches.finalReads`. */
export interface FinalReadCache {
  final: ExpiringMap<string, FinalRead>;
  inFlight: Map<string, Promise<FinalRead>>;
}

/** A gateway's final-read cache, empty (built by `createGatewayCaches`). */
export function createFinalReadCache(): FinalReadCache {
  return { final: new ExpiringMap<string, FinalRead>(FINAL_READ_CACHE_SIZE, FINAL_READ_CACHE_MS), inFlight: new Map() };
}

export function cacheKey(lookup: { tenantId: string; environment: Environment; transactionId: number | string }): string {
  return `${lookup.tenantId}\u0000${lookup.environment}\u0000${lookup.transactionId}`;
}

/**
 * Drops this process's copy of a transaction that just moved (called by `applyDirectPaymentUpdate`), so
 * the instance that applied a change answers with it at once; other instances within {@link FINAL_READ_CACHE_MS}.
 */
export function forgetFinalRead(
  deps: { caches: { finalReads: FinalReadCache } },
  row: Pick<Payment, "tenant_id" | "environment" | "provider_transaction_id">,
): void {
  if (row.provider_transaction_id === null) return;
  deps.caches.finalReads.final.delete(`${row.tenant_id}\u0000${row.environment}\u0000${row.provider_transaction_id}`);
}
