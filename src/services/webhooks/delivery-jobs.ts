/**
 * The `webhooks` queue's jobs: which delivery, which attempt, and under which job id (contract §8: "job
 * id = delivery id: a duplicate enqueue is a no-op").
 *
 * Job ids:
 * - attempt 1: `<deliveryId>` — exactly the contract's id;
 * - attempt k ≥ 2: `<deliveryId>.<k>`. A job is still live while its handler runs, so the handler of
 *   attempt k could not enqueue attempt k + 1 under the same id; one id per attempt keeps "a duplicate
 *   enqueue is a no-op" for every attempt (the sweeper and a scheduler racing on attempt k meet on it);
 * - the sweeper re-running an attempt whose worker died (its lease ran out with no result recorded):
 *   `<deliveryId>.<k>.lease<lockedUntilMs>` — the crashed job may still look live (BullMQ only notices a
 *   stalled job after its stalled interval), and the lease's time makes the id unique per lost lease,
 *   so sweeps that see the same lost lease still de-duplicate;
 * - a manual retry or replay whose regular id is already live (an automatic retry waiting for its time):
 *   `<deliveryId>.<k>.manual<nowMs>`, so "deliver again now" is not swallowed by a job due hours later.
 *
 * Job ids only spare work. What makes a delivery go out at most once per attempt is the lease that
 * `deliverOnce` takes in the database, and the attempt number in the job: a job for attempt k runs
 * only while the delivery has made k − 1 attempts, so a stale job left behind by a manual retry is a
 * no-op when it fires.
 */
import type { Deps } from "../deps.ts";

/** The queue deliveries run on (contract §8). */
export const WEBHOOKS_QUEUE = "webhooks";
/** The job name on {@link WEBHOOKS_QUEUE}. */
export const DELIVER_JOB = "deliver";

/** What a `webhooks` job carries: ids only, the database has the rest. */
export interface DeliveryJobData {
  deliveryId: string;
  /** The attempt this job makes (1-based); a job whose attempt has been made already does nothing. */
  attempt: number;
}

/**
 * The job id of attempt `attempt` of a delivery.
 *
 * @example
 * ```ts
 * deliveryJobId("dlv_01J…", 1); // "dlv_01J…"
 * deliveryJobId("dlv_01J…", 3); // "dlv_01J….3"
 * ```
 */
export function deliveryJobId(deliveryId: string, attempt: number): string {
  return attempt <= 1 ? deliveryId : `${deliveryId}.${attempt}`;
}

/** The job id the sweeper uses to re-run an attempt whose lease ran out without a result. */
export function lostLeaseJobId(deliveryId: string, attempt: number, lockedUntil: Date): string {
  return `${deliveryId}.${attempt}.lease${lockedUntil.getTime()}`;
}

/**
 * Enqueues one attempt. Never throws: a failed enqueue is logged and left to the sweeper, which finds
 * every due pending delivery whose job is missing.
 */
export async function enqueueDeliveryAttempt(
  deps: Pick<Deps, "queue" | "logger">,
  job: DeliveryJobData,
  opts: { delayMs?: number; jobId?: string } = {},
): Promise<boolean> {
  const jobId = opts.jobId ?? deliveryJobId(job.deliveryId, job.attempt);
  try {
    await deps.queue.add<DeliveryJobData>(WEBHOOKS_QUEUE, DELIVER_JOB, job, { jobId, delayMs: Math.max(0, opts.delayMs ?? 0) });
    return true;
  } catch (err) {
    deps.logger.warn({ err, deliveryId: job.deliveryId, attempt: job.attempt, jobId }, "could not enqueue a delivery; the sweeper will pick it up");
    return false;
  }
}

/**
 * Enqueues attempt `attempt` to run now, for a manual retry or a replay: under its regular id, or under
 * a fresh `.manual<ms>` id when the regular one is live (an automatic retry waiting for a later time).
 */
export async function enqueueManualAttempt(deps: Pick<Deps, "queue" | "logger" | "now">, job: DeliveryJobData): Promise<boolean> {
  let jobId = deliveryJobId(job.deliveryId, job.attempt);
  try {
    if (await deps.queue.has(WEBHOOKS_QUEUE, jobId)) jobId = `${jobId}.manual${deps.now().getTime()}`;
  } catch {
    jobId = `${jobId}.manual${deps.now().getTime()}`;
  }
  return enqueueDeliveryAttempt(deps, job, { jobId });
}
