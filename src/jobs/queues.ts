/**
 * Every queue of the gateway (contract §8), in one place: its name, its job names, what a job carries, its job
 * ids, and the typed functions services enqueue through. Which handler runs each queue, how many at once and
 * for how long is registered in `src/workers/` (`mod.ts`, `sync-workers.ts`, `ipn-worker.ts`).
 *
 * | Queue             | Job names                       | Job data                       | Enqueued through                                  |
 * |-------------------|---------------------------------|--------------------------------|---------------------------------------------------|
 * | `webhooks`        | `deliver`                       | {@link DeliveryJobData}        | {@link enqueueDelivery}, {@link enqueueManualDelivery} |
 * | `ipn`             | `process-ipn`                   | {@link IpnJobData}             | {@link enqueueIpn}                                |
 * | `permits`         | `sweep` (repeatable), `charge`  | `{}`, {@link RenewalJobData}   | {@link scheduleRenewalSweep}, {@link enqueueRenewalCharge} |
 * | `sweeper`         | `sweep` (repeatable)            | `{}`                           | {@link scheduleSweeper}                           |
 * | `mail`            | `send-email`                    | {@link EmailJobData}           | {@link enqueueEmail}                              |
 * | `<provider>-sync` | one per sync chain ¹            | `{ <subject>Id, step }`        | each chain's `enqueue`, on {@link syncQueueOf}    |
 *
 * ¹ `sync` (direct payments), `confirm-checkout`, `confirm-permit-charge`, `confirm-permit`: each chain declares its
 * job name with `defineSyncChain` (`services/payments/sync-chain.ts`), which enqueues on its provider's queue.
 *
 * Names, job names, job ids and data shapes are what Redis holds: a job enqueued by the previous release is
 * run by the next one, so none of them changes without a migration of the jobs in flight.
 *
 * This module imports no service (services import it; `src/workers/` imports both).
 *
 * @module
 */
import type { ProviderName } from "../providers/provider.ts";
import type { JobLogger, JobQueue } from "./queue.ts";

/** What an enqueue needs of the gateway's deps (`Deps` fits). */
export interface EnqueueDeps {
  readonly queue: JobQueue;
  readonly logger: Pick<JobLogger, "warn">;
}

// ---------------------------------------------------------------------------------------------------------------
// webhooks

/** The queue deliveries run on. */
export const WEBHOOKS_QUEUE = "webhooks";
/** The job name on {@link WEBHOOKS_QUEUE}. */
export const DELIVER_JOB = "deliver";

/** What a `webhooks` job carries: ids only, the database has the rest. */
export interface DeliveryJobData {
  deliveryId: string;
  /** The attempt this job makes (1-based); a job whose attempt has been made already does nothing. */
  attempt: number;
}

/*
 * Job ids of deliveries (contract §8: "job id = delivery id: a duplicate enqueue is a no-op"):
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

/** Is a delivery job with this id waiting, delayed or running? */
export function isDeliveryJobLive(deps: Pick<EnqueueDeps, "queue">, jobId: string): Promise<boolean> {
  return deps.queue.has(WEBHOOKS_QUEUE, jobId);
}

/**
 * Enqueues one attempt of a delivery, under {@link deliveryJobId} unless `opts.jobId` names another. Never
 * throws: a failed enqueue is logged and left to the sweeper, which finds every due pending delivery whose job
 * is missing.
 *
 * @example
 * ```ts
 * await enqueueDelivery(deps, { deliveryId, attempt: 2 }, { delayMs: 30_000 });
 * ```
 */
export async function enqueueDelivery(deps: EnqueueDeps, job: DeliveryJobData, opts: { delayMs?: number; jobId?: string } = {}): Promise<boolean> {
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
export async function enqueueManualDelivery(deps: EnqueueDeps & { now(): Date }, job: DeliveryJobData): Promise<boolean> {
  let jobId = deliveryJobId(job.deliveryId, job.attempt);
  try {
    if (await isDeliveryJobLive(deps, jobId)) jobId = `${jobId}.manual${deps.now().getTime()}`;
  } catch {
    jobId = `${jobId}.manual${deps.now().getTime()}`;
  }
  return enqueueDelivery(deps, job, { jobId });
}

// ---------------------------------------------------------------------------------------------------------------
// ipn

/** Provider B's IPNs: one job per stored IPN (`services/ipn/ipn-jobs.ts` processes it). */
export const IPN_QUEUE = "ipn";
/** The job name on {@link IPN_QUEUE}. */
export const PROCESS_IPN_JOB = "process-ipn";

/** What an `ipn` job carries: the stored IPN's id. */
export interface IpnJobData {
  ipnId: number;
}

/** The job id of a stored IPN's processing: `ipn<id>`. */
export function ipnJobId(ipnId: number): string {
  return `ipn${ipnId}`;
}

/** Is the processing of this stored IPN waiting, delayed or running? */
export function isIpnJobLive(deps: Pick<EnqueueDeps, "queue">, ipnId: number): Promise<boolean> {
  return deps.queue.has(IPN_QUEUE, ipnJobId(ipnId));
}

/**
 * Enqueues the processing of a stored IPN (5 attempts, exponential backoff from 1 s). Never throws: the
 * sweeper finds it otherwise.
 */
export async function enqueueIpn(deps: EnqueueDeps, ipnId: number, options: { jobId?: string } = {}): Promise<boolean> {
  try {
    await deps.queue.add<IpnJobData>(
      IPN_QUEUE,
      PROCESS_IPN_JOB,
      { ipnId },
      { jobId: options.jobId ?? ipnJobId(ipnId), attempts: 5, backoff: { type: "exponential", delayMs: 1_000 } },
    );
    return true;
  } catch (err) {
    deps.logger.warn({ err, ipnId }, "could not enqueue an IPN; the sweeper will");
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// permits

/** The queue of the renewal sweep and of the charge jobs (`services/permits/renewals.ts`). */
export const PERMITS_QUEUE = "permits";
/** The renewal sweep's job scheduler id on {@link PERMITS_QUEUE}. */
export const RENEWAL_SCHEDULER_ID = "renewals";
/** The renewal sweep's job name. */
export const RENEWAL_SWEEP_JOB = "sweep";
/** The charge job's name. */
export const RENEWAL_CHARGE_JOB = "charge";

/** One charge job: a schedule's period and dunning attempt. */
export interface RenewalJobData {
  scheduleId: string;
  period: string;
  attempt: number;
}

/** The charge job's id: one live job per (schedule, period, attempt), `<scheduleId>.<period>.<attempt>`. */
export function renewalJobId(job: RenewalJobData): string {
  return `${job.scheduleId}.${job.period}.${job.attempt}`;
}

/** Enqueues one charge job (a live id is a no-op). Rejects when the queue does not take it. */
export async function enqueueRenewalCharge(deps: Pick<EnqueueDeps, "queue">, job: RenewalJobData): Promise<void> {
  await deps.queue.add<RenewalJobData>(PERMITS_QUEUE, RENEWAL_CHARGE_JOB, job, { jobId: renewalJobId(job) });
}

/** Puts the renewal sweep's schedule in place, one run every `everyMs` (an upsert: calling it again changes nothing). */
export function scheduleRenewalSweep(deps: Pick<EnqueueDeps, "queue">, everyMs: number): Promise<void> {
  return deps.queue.repeat(PERMITS_QUEUE, RENEWAL_SCHEDULER_ID, everyMs, RENEWAL_SWEEP_JOB, {});
}

// ---------------------------------------------------------------------------------------------------------------
// sweeper

/** The queue of the periodic sweep (contract §8). */
export const SWEEPER_QUEUE = "sweeper";
/** The repeatable job's id on {@link SWEEPER_QUEUE}. */
export const SWEEPER_SCHEDULER_ID = "sweep";
/** The repeatable job's name. */
export const SWEEP_JOB = "sweep";

/** Puts the sweeper's schedule in place, one run every `everyMs` (an upsert: calling it again changes nothing). */
export function scheduleSweeper(deps: Pick<EnqueueDeps, "queue">, everyMs: number): Promise<void> {
  return deps.queue.repeat(SWEEPER_QUEUE, SWEEPER_SCHEDULER_ID, everyMs, SWEEP_JOB, {});
}

// ---------------------------------------------------------------------------------------------------------------
// mail

/** The e-mail outbox's queue (`services/mail/outbox.ts` sends). */
export const MAIL_QUEUE = "mail";
/** The job name on {@link MAIL_QUEUE}. */
export const SEND_EMAIL_JOB = "send-email";

/** What a `mail` job carries: the outbox row's id (job id too). */
export interface EmailJobData {
  emailId: string;
}

/**
 * Enqueues the sending of an outbox message (6 attempts, exponential backoff from 5 s; the outbox counts its own
 * attempts across jobs). Never throws: the sweeper finds a pending message without a job.
 */
export async function enqueueEmail(deps: EnqueueDeps, emailId: string): Promise<boolean> {
  try {
    await deps.queue.add<EmailJobData>(
      MAIL_QUEUE,
      SEND_EMAIL_JOB,
      { emailId },
      { jobId: emailId, attempts: 6, backoff: { type: "exponential", delayMs: 5_000 } },
    );
    return true;
  } catch (err) {
    deps.logger.warn({ err, emailId }, "could not enqueue an e-mail; the sweeper will");
    return false;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// <provider>-sync

/**
 * The sync queue of a provider's pending subjects: `providerA-sync`, `providerB-sync`… Its job names are the
 * sync chains' (each declared with `defineSyncChain`, which enqueues on this queue).
 */
export function syncQueueOf(provider: ProviderName): string {
  return `${provider}-sync`;
}
