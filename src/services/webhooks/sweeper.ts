/**
 * The sweeper (contract §6 and §8): what makes the queue's loss survivable. The database is the source
 * of truth, so every pending delivery that is due and free and has no live job — an enqueue that failed,
 * Redis flushed or failed over, the in-process driver restarted, a worker killed mid-attempt — is found
 * here and enqueued again. It runs every minute on the `sweeper` queue (see `workers/mod.ts`).
 */
import { sharedNow } from "../../db/shared-clock.ts";
import type { Deps } from "../deps.ts";
import { sweepDirectPaymentSyncs } from "../direct-payments/sync-jobs.ts";
import { sweepPayoutSyncs } from "../payouts/advance-payout.ts";
import { deliveryJobId, enqueueDelivery, isDeliveryJobLive, lostLeaseJobId } from "../../jobs/queues.ts";

export interface SweepOptions {
  /** Deliveries looked at per query. Default 200. */
  batchSize?: number;
  /** Queries per sweep; what is left waits for the next sweep. Default 25 (5,000 deliveries). */
  maxBatches?: number;
}

export interface SweepReport {
  /** Due, free, pending deliveries looked at. */
  due: number;
  /** Of those, the ones whose job was missing and were enqueued again. */
  enqueued: number;
}

/**
 * Re-enqueues the due pending deliveries (`next_attempt_at <= now`, lease free) whose job is missing,
 * oldest first, in bounded batches. A delivery whose lease ran out without a result (its worker died)
 * is enqueued under a job id of its own, since the dead worker's job may still look live to the queue.
 *
 * @example
 * ```ts
 * const { due, enqueued } = await sweepDueDeliveries(deps);
 * ```
 */
export async function sweepDueDeliveries(
  deps: Pick<Deps, "db" | "queue" | "logger" | "now" | "sharedClock">,
  options: SweepOptions = {},
): Promise<SweepReport> {
  const batchSize = options.batchSize ?? 200;
  const maxBatches = options.maxBatches ?? 25;
  // Due and free on the shared clock (the database's: `db/shared-clock.ts`), not this worker's.
  const now = sharedNow(deps);
  const report: SweepReport = { due: 0, enqueued: 0 };
  let after: { at: Date; id: string } | undefined;
  for (let batch = 0; batch < maxBatches; batch++) {
    let query = deps.db
      .selectFrom("deliveries")
      .select(["id", "attempts", "locked_until", "next_attempt_at"])
      .where("state", "=", "pending")
      .where("next_attempt_at", "<=", now)
      .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<", now)]))
      .orderBy("next_attempt_at")
      .orderBy("id")
      .limit(batchSize);
    if (after) {
      const { at, id } = after;
      query = query.where((eb) => eb.or([eb("next_attempt_at", ">", at), eb.and([eb("next_attempt_at", "=", at), eb("id", ">", id)])]));
    }
    const rows = await query.execute();
    report.due += rows.length;
    const enqueued = await Promise.all(
      rows.map(async (row) => {
        const attempt = row.attempts + 1;
        const jobId = row.locked_until ? lostLeaseJobId(row.id, attempt, row.locked_until) : deliveryJobId(row.id, attempt);
        if (await isDeliveryJobLive(deps, jobId)) return false;
        return enqueueDelivery(deps, { deliveryId: row.id, attempt }, { jobId });
      }),
    );
    report.enqueued += enqueued.filter(Boolean).length;
    if (rows.length < batchSize) break;
    const last = rows[rows.length - 1]!;
    after = { at: last.next_attempt_at, id: last.id };
  }
  if (report.enqueued > 0) deps.logger.info({ ...report }, "sweeper re-enqueued deliveries whose job was missing");
  return report;
}

/**
 * One run of the `sweeper` job: due deliveries, then the syncs whose jobs are missing. (Expired idempotency keys
 * are pruned with the other old rows, `services/retention`.)
 */
export async function runSweeper(deps: Pick<Deps, "db" | "queue" | "logger" | "now" | "sharedClock">, options: SweepOptions = {}): Promise<SweepReport> {
  const report = await sweepDueDeliveries(deps, options);
  // Pending direct payments whose sync chain lost its job get their due step again (contract §8).
  await sweepDirectPaymentSyncs(deps);
  // So do pending payouts and refunds (issue 15).
  await sweepPayoutSyncs(deps);
  return report;
}
