/**
 * `GET /providerA/transaction/{transaction_id}/status` and `…/is-approved` (spec endpoints 2–3, contract
 * §4): the caller's direct payment by provider A's id, refreshed on read when it is pending.
 *
 * A final answer (any state but `pending`) is kept per process for at most {@link FINAL_READ_CACHE_MS},
 * keyed by tenant, environment and transaction id, in a map of {@link FINAL_READ_CACHE_SIZE} entries (`expiring-map.ts`):
 * a client polling a settled transaction costs no database round trip. A final state can still move
 * forward (a refund, a transfer, a late success after `failed`/`declined`) through a webhook or the sync
 * job on any instance, so a read may show the previous final state for up to that long — the same order
 * as a pending record, which is read again from provider A at most once a second ({@link REFRESH_FLOOR_MS}).
 * Pending answers are never cached. The process that applies a change drops its own copy at once
 * ({@link forgetFinalRead}).
 */
import type { Environment } from "../../config.ts";
import type { Payment } from "../../db/schema.ts";
import { NotFoundError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { refreshOnRead } from "./refresh.ts";
import { specProviders } from "./spec-provider.ts";
import { cacheKey, type FinalRead } from "./final-read-cache.ts";
import { directPaymentStatus, isApprovedStatus, toTransactionStatusView, type IsApprovedView, type TransactionStatusView } from "./status.ts";

export { FINAL_READ_CACHE_MS, FINAL_READ_CACHE_SIZE, forgetFinalRead } from "./final-read-cache.ts";

export interface TransactionLookup {
  tenantId: string;
  environment: Environment;
  transactionId: number;
}

/**
 * The caller's payment with that provider A id. Provider ids are unique per account, so a tenant with its
 * own account and the service's may have two; the newest is shown.
 *
 * @throws {NotFoundError} when it is not the caller's (tenant and environment): never reveals another's.
 */
async function findTransaction(deps: Pick<Deps, "db" | "providers">, lookup: TransactionLookup): Promise<Payment> {
  const row = await deps.db
    .selectFrom("payments")
    .selectAll()
    .where("tenant_id", "=", lookup.tenantId)
    .where("environment", "=", lookup.environment)
    .where("provider", "in", specProviders(deps))
    .where("provider_transaction_id", "=", String(lookup.transactionId))
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
  if (!row) throw new NotFoundError("Transaction not found");
  return row;
}

/**
 * The row to answer with: a cached final one (at once, without a promise), or read (and refreshed when
 * pending), cached when final. Readers of one transaction that miss together share the read: when an entry
 * expires under load, the 50 requests in flight make one query, not 50.
 */
function readTransaction(deps: Deps, lookup: TransactionLookup): FinalRead | Promise<FinalRead> {
  const cache = deps.caches.finalReads;
  const key = cacheKey(lookup);
  return cache.final.get(key) ?? readMissing(deps, lookup, key);
}

async function readMissing(deps: Deps, lookup: TransactionLookup, key: string): Promise<FinalRead> {
  const cache = deps.caches.finalReads;
  const running = cache.inFlight.get(key);
  if (running) return running;
  const read = (async (): Promise<FinalRead> => {
    const row = await refreshOnRead(deps, await findTransaction(deps, lookup));
    const answer: FinalRead = { row };
    if (row.state !== "pending") cache.final.set(key, answer);
    return answer;
  })();
  cache.inFlight.set(key, read);
  try {
    return await read;
  } finally {
    cache.inFlight.delete(key);
  }
}

/** The detailed status (refreshed from provider A when pending and not read in the last second); a cached one at once. */
export function getTransactionStatus(deps: Deps, lookup: TransactionLookup): TransactionStatusView | Promise<TransactionStatusView> {
  const read = readTransaction(deps, lookup);
  return read instanceof Promise ? read.then(statusOf) : statusOf(read);
}

/** `{ transactionId, approved, status }`; a cached one at once. */
export function isTransactionApproved(deps: Deps, lookup: TransactionLookup): IsApprovedView | Promise<IsApprovedView> {
  const read = readTransaction(deps, lookup);
  return read instanceof Promise ? read.then((found) => approvedOf(found, lookup)) : approvedOf(read, lookup);
}

function statusOf(read: FinalRead): TransactionStatusView {
  return (read.status ??= toTransactionStatusView(read.row));
}

function approvedOf(read: FinalRead, lookup: TransactionLookup): IsApprovedView {
  if (read.approved) return read.approved;
  const status = directPaymentStatus(read.row);
  return (read.approved = { transactionId: lookup.transactionId, approved: isApprovedStatus(status), status });
}
