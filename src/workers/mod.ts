/**
 * The gateway's workers on a `JobQueue`: which handler runs each queue, how many at once, and the
 * repeatable jobs. The rules live in `services/`, the queue machinery in `jobs/`; this folder only wires one to
 * the other. Every queue's name, job names, job data and job ids, and the functions services enqueue through,
 * are in `jobs/queues.ts`.
 *
 * | Queue             | Job names                                   | Handler                                    | At once | Registered in           |
 * |-------------------|---------------------------------------------|--------------------------------------------|---------|-------------------------|
 * | `webhooks`        | `deliver`                                   | `deliverOnce` of one delivery's attempt    | 100 ¹   | here                    |
 * | `sweeper`         | `sweep` (repeatable ²)                      | `runSweeper`, `sweepProviderB`,            | 1       | here                    |
 * |                   |                                             | `rereadSettledPayments`, `auditIfDue`,     |         |                         |
 * |                   |                                             | `pruneIfDue`, `sweepOutbox`, `sweepRescues` |         |                         |
 * | `permits`         | `sweep` (repeatable ²), `charge`            | `sweepRenewals`; `runRenewalCharge`        | 5       | here                    |
 * | `mail`            | `send-email`                                | `sendOutboxEmail` of one outbox message    | 5       | here                    |
 * | `ipn`             | `process-ipn`                               | `processIpn` of one stored provider B IPN  | 20      | `ipn-worker.ts`         |
 * | `<provider>-sync` | `sync`, `confirm-checkout`,                 | one step of a pending subject's sync chain | 10 ³    | `sync-workers.ts`       |
 * |                   | `confirm-permit-charge`, `confirm-permit`,  |                                            |         |                         |
 * |                   | `advance-payout`                            |                                            |         |                         |
 *
 * ¹ `webhookConcurrency`. ² Every `sweepEveryMs` / `renewalSweepEveryMs` (default 1 minute). ³ Per provider queue:
 * one queue per provider the gateway runs.
 *
 * Every attempt has a time limit (`jobs/time-limit.ts`): a delivery 2 × `WEBHOOK_TIMEOUT_MS` + 30 s, a job that calls
 * a provider 3 × `PROVIDER_TIMEOUT_MS` + 30 s, the sweeps 5 minutes. A hung attempt fails and is retried.
 *
 * The sweeper's and the renewal sweep's schedules live in the queue's backend, so losing Redis loses them too: while the workers
 * run, each process re-asserts it once per interval (an upsert of the same schedule changes nothing),
 * so a flushed Redis gets its sweeper back within one interval, and the sweeper then re-enqueues the
 * deliveries whose jobs went with it.
 *
 * @module
 */
import {
  type DeliveryJobData,
  type EmailJobData,
  MAIL_QUEUE,
  PERMITS_QUEUE,
  RENEWAL_SWEEP_JOB,
  type RenewalJobData,
  scheduleRenewalSweep,
  scheduleSweeper,
  SWEEPER_QUEUE,
  WEBHOOKS_QUEUE,
} from "../jobs/queues.ts";
import { isRedisConnectionError } from "../jobs/redis-outage.ts";
import { type AuditResult, auditIfDue } from "../services/audit/audit.ts";
import type { Deps } from "../services/deps.ts";
import { rereadSettledPayments } from "../services/direct-payments/settled-rereads.ts";
import { sweepProviderB } from "../services/ipn/sweep-provider-b.ts";
import { sendOutboxEmail, sweepOutbox } from "../services/mail/outbox.ts";
import { sweepRescues } from "../services/rescue/mod.ts";
import { createMailTransport, type MailTransport } from "../services/mail/transport.ts";
import { runRenewalCharge, sweepRenewals } from "../services/permits/renewals.ts";
import { type PruneReport, pruneIfDue } from "../services/retention/mod.ts";
import { deliverOnce, type DeliverOptions } from "../services/webhooks/deliver.ts";
import { runSweeper, type SweepOptions } from "../services/webhooks/sweeper.ts";
import { registerIpnWorker } from "./ipn-worker.ts";
import { providerJobTimeLimitMs } from "./provider-job-time-limit.ts";
import { registerSyncWorkers } from "./sync-workers.ts";

/** Options of {@link registerWorkers}; the defaults are production's, tests shorten them. */
export interface WorkerOptions {
  /**
   * Deliveries attempted at once by this process. Default 100: the deliveries in flight share their lease and
   * record statements (`deliver.ts`), so more in flight costs the database less per delivery.
   */
  webhookConcurrency?: number;
  /** How often the sweeper runs. Default 60 000 ms. */
  sweepEveryMs?: number;
  /** How often the renewal sweep runs. Default 60 000 ms. */
  renewalSweepEveryMs?: number;
  sweep?: SweepOptions;
  /** Passed to every `deliverOnce` (the jitter's randomness, a resolver). */
  deliver?: Omit<DeliverOptions, "attempt">;
  /** Receives what each periodic audit found (the gateway sets its gauges with it). */
  onAudit?: (result: AuditResult) => void;
  /** Receives what each periodic pruning deleted (the gateway counts it in its metrics). */
  onPrune?: (report: PruneReport) => void;
  /** How outbox e-mails leave; default: the configuration's (`SMTP_URL`, or the log in development). */
  mailTransport?: MailTransport;
}

/** The registered workers: `start()` when the queue starts running them, `stop()` before it closes. */
export interface Workers {
  /** Puts the sweeper's schedule in place (and keeps it there). Never rejects: failures are logged. */
  start(): Promise<void>;
  stop(): void;
}

/** Deliveries in flight per worker process (the bench's fan-out reference runs as many). */
export const DEFAULT_WEBHOOK_CONCURRENCY = 100;

/**
 * Registers every handler on `deps.queue`. Call it once per queue instance, before `queue.start()`;
 * a process that only enqueues (`serve --no-workers`) registers them too and never starts them.
 *
 * @example
 * ```ts
 * const workers = registerWorkers(deps, { webhookConcurrency: 20 });
 * await workers.start();
 * await deps.queue.start();
 * ```
 */
export function registerWorkers(deps: Deps, options: WorkerOptions = {}): Workers {
  const sweepEveryMs = options.sweepEveryMs ?? 60_000;
  const renewalSweepEveryMs = options.renewalSweepEveryMs ?? 60_000;
  deps.queue.process<DeliveryJobData>(
    WEBHOOKS_QUEUE,
    async (job) => {
      await deliverOnce(deps, job.data.deliveryId, { ...options.deliver, attempt: job.data.attempt });
    },
    // One delivery: its POST (WEBHOOK_TIMEOUT_MS, with the DNS check and connect) and the statements around it.
    { concurrency: options.webhookConcurrency ?? DEFAULT_WEBHOOK_CONCURRENCY, timeLimitMs: 2 * deps.config.webhookTimeoutMs + 30_000 },
  );
  const providerTimeLimitMs = providerJobTimeLimitMs(deps.config);
  registerSyncWorkers(deps);
  deps.queue.process(SWEEPER_QUEUE, async () => {
    // Each step runs whatever another one did (a statement timeout in one under load must not starve the
    // rest); the run still fails, and is retried, when one of them threw.
    const steps: [string, () => Promise<unknown>][] = [
      ["deliveries and sync chains", () => runSweeper(deps, options.sweep)],
      ["provider B notifications", () => sweepProviderB(deps)],
      ["settled payments read again", () => rereadSettledPayments(deps)],
      ["audit", () => auditIfDue(deps, options.onAudit)],
      ["retention", () => pruneIfDue(deps, options.onPrune)],
      ["e-mail outbox", () => sweepOutbox(deps)],
      // Stalled pushes offer a rescue; earlier pushes of a rescued payment are read again (issue 31 point 3).
      ["rescues", () => sweepRescues(deps)],
    ];
    let failed: unknown;
    for (const [step, run] of steps) {
      try {
        await run();
      } catch (err) {
        deps.logger.warn({ err, step }, "a sweeper step failed; the others ran");
        failed ??= err;
      }
    }
    if (failed !== undefined) throw failed;
  });
  const mailTransport = options.mailTransport ?? createMailTransport(deps.config, deps.logger);
  deps.queue.process<EmailJobData>(MAIL_QUEUE, (job) => sendOutboxEmail(deps, mailTransport, job.data.emailId), {
    concurrency: 5,
    // nodemailer's own timeouts (connection 2 min, greeting 30 s, socket 10 min) are longer than a stuck server deserves.
    timeLimitMs: 120_000,
  });
  registerIpnWorker(deps);
  deps.queue.process<RenewalJobData | Record<string, never>>(
    PERMITS_QUEUE,
    async (job) => {
      if (job.name === RENEWAL_SWEEP_JOB) await sweepRenewals(deps);
      else await runRenewalCharge(deps, job.data as RenewalJobData);
    },
    { concurrency: 5, timeLimitMs: providerTimeLimitMs },
  );

  let timer: ReturnType<typeof setInterval> | undefined;
  const assertSchedule = async (): Promise<void> => {
    // While Redis is down, the outage is logged once (jobs/redis-outage.ts): these say nothing more then.
    try {
      await scheduleSweeper(deps, sweepEveryMs);
    } catch (err) {
      if (!isRedisConnectionError(err)) deps.logger.warn({ err, queue: SWEEPER_QUEUE }, "could not schedule the sweeper; trying again in one interval");
    }
    try {
      await scheduleRenewalSweep(deps, renewalSweepEveryMs);
    } catch (err) {
      if (!isRedisConnectionError(err)) deps.logger.warn({ err, queue: PERMITS_QUEUE }, "could not schedule the renewal sweep; trying again in one interval");
    }
  };
  return {
    async start() {
      if (timer) return;
      await assertSchedule();
      // Only Redis can lose the schedule; the in-process driver keeps it as long as the process lives.
      if (deps.queue.driver === "bullmq") {
        timer = setInterval(() => void assertSchedule(), sweepEveryMs);
        timer.unref?.();
      }
    },
    stop() {
      if (timer) clearInterval(timer);
      timer = undefined;
      mailTransport.close();
    },
  };
}
