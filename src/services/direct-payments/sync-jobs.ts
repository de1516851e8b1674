/**
 * The `providerA-sync` queue (contract §8): each pending direct payment is read again from provider A
 * 5 s, 15 s, 30 s and 1 min after the previous run, then every 5 min, until it is final or 24 h old;
 * still pending then, it is left for the operator (logged at `warn`), never assumed failed.
 *
 * The schedule's position lives in the row (`sync_attempt`, `next_sync_at`) and the job id derives from
 * it, so the sweeper can see a pending payment whose job vanished (Redis flushed) and enqueue it again
 * ({@link sweepDirectPaymentSyncs}). A stale or duplicate job finds `sync_attempt` moved on and does nothing.
 */
import { precompile } from "../../db/precompiled.ts";
import type { Deps } from "../deps.ts";
import { SYNC_SCHEDULE } from "../payments/sync-chain.ts";
import { syncFromProvider } from "./refresh.ts";

export const PROVIDER_A_SYNC_QUEUE = "providerA-sync";
export const PROVIDER_A_SYNC_JOB = "sync";

export interface SyncJobData {
  paymentId: string;
  /** The row's `sync_attempt` when the job was scheduled. */
  attempt: number;
}

/**
 * The wait before the run that follows `attempt` runs (0 → the first run): contract §8's schedule read as
 * waits between runs — 5 s, 15 s, 30 s, 1 min, then every 5 min.
 */
export function syncWaitMs(attempt: number): number {
  return SYNC_SCHEDULE.firstMs[attempt] ?? SYNC_SCHEDULE.everyMs;
}

/** One job id per payment and schedule position: a duplicate enqueue is a no-op. */
export function syncJobId(paymentId: string, attempt: number): string {
  return `${paymentId}:${attempt}`;
}

type SyncDeps = Pick<Deps, "db" | "queue" | "logger" | "now" | "config" | "keyring" | "providers" | "metrics">;

/** Precompiled: one run per payment at least (usually finding it final already). */
const paymentById = precompile<{ id: string }>()((db, p) => db.selectFrom("payments").selectAll().where("id", "=", p.id));

/** Enqueues the run at the row's schedule position. Never throws: the sweeper covers a failed enqueue. */
export async function enqueueSync(deps: Pick<Deps, "queue" | "logger" | "now">, job: SyncJobData, dueAt: Date): Promise<void> {
  try {
    await deps.queue.add<SyncJobData>(PROVIDER_A_SYNC_QUEUE, PROVIDER_A_SYNC_JOB, job, {
      jobId: syncJobId(job.paymentId, job.attempt),
      delayMs: Math.max(0, dueAt.getTime() - deps.now().getTime()),
    });
  } catch (err) {
    deps.logger.warn({ err, paymentId: job.paymentId }, "could not enqueue a providerA-sync job; the sweeper will");
  }
}

/**
 * One run of the sync job: read the payment at provider A and apply it; when it is still pending,
 * schedule the next run (or, past 24 h, stop and flag it for the operator).
 */
export async function runSyncJob(deps: SyncDeps, job: SyncJobData): Promise<void> {
  const row = (await paymentById(deps.db, { id: job.paymentId })).rows[0];
  if (row?.kind !== "direct_payment" || row.state !== "pending" || row.sync_attempt !== job.attempt) return;
  const after = await syncFromProvider(deps, row);
  if (after.state !== "pending") return;
  const now = deps.now();
  const next = job.attempt + 1;
  const dueAt = new Date(now.getTime() + syncWaitMs(next));
  const tooOld = dueAt.getTime() - row.created_at.getTime() > SYNC_SCHEDULE.horizonMs;
  const moved = await deps.db
    .updateTable("payments")
    .set({ sync_attempt: next, next_sync_at: tooOld ? null : dueAt })
    .where("id", "=", row.id)
    .where("sync_attempt", "=", job.attempt)
    .where("state", "=", "pending")
    .executeTakeFirst();
  if (Number(moved.numUpdatedRows) === 0) return;
  if (tooOld) {
    deps.logger.warn(
      { paymentId: row.id, tenantId: row.tenant_id, environment: row.environment },
      "direct payment still pending after 24 h: left for the operator",
    );
    return;
  }
  await enqueueSync(deps, { paymentId: row.id, attempt: next }, dueAt);
}

/**
 * The sweeper's clause (contract §8): pending direct payments whose sync run is due and whose job is
 * missing are enqueued again. Bounded per sweep; what is left waits for the next one.
 *
 * @example
 * ```ts
 * const { enqueued } = await sweepDirectPaymentSyncs(deps);
 * ```
 */
export async function sweepDirectPaymentSyncs(
  deps: Pick<Deps, "db" | "queue" | "logger" | "now">,
  options: { batchSize?: number } = {},
): Promise<{ due: number; enqueued: number }> {
  const now = deps.now();
  const rows = await deps.db
    .selectFrom("payments")
    .select(["id", "sync_attempt"])
    .where("kind", "=", "direct_payment")
    .where("state", "=", "pending")
    .where("next_sync_at", "is not", null)
    .where("next_sync_at", "<=", now)
    .orderBy("next_sync_at")
    .limit(options.batchSize ?? 500)
    .execute();
  let enqueued = 0;
  for (const row of rows) {
    if (await deps.queue.has(PROVIDER_A_SYNC_QUEUE, syncJobId(row.id, row.sync_attempt))) continue;
    await enqueueSync(deps, { paymentId: row.id, attempt: row.sync_attempt }, now);
    enqueued++;
  }
  if (enqueued > 0) deps.logger.info({ due: rows.length, enqueued }, "sweeper re-enqueued providerA-sync jobs that were missing");
  return { due: rows.length, enqueued };
}
