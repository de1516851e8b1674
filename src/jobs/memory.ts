/**
 * The in-process job driver: the embedded default when `REDIS_URL` is unset. Same semantics as the
 * BullMQ driver (see `queue.ts`), nothing persisted: jobs still waiting when the process stops are
 * lost, and the sweeper re-enqueues them from the database on the next start.
 *
 * @module
 */

import { assertEveryMs, assertId, assertQueueName, backoffDelayMs, normalizeConcurrency, normalizeTimeLimit, normalizeJobOptions } from "./job-options.ts";
import type { JobBackoff, JobHandler, JobLogger, JobOptions, JobQueue, ProcessOptions, QueueStats } from "./queue.ts";
import { withinTimeLimit } from "./time-limit.ts";
import { REAL_TIMERS, type TimerHandle, type Timers } from "../timers.ts";

/** Options for {@link createMemoryQueue}. */
export interface MemoryQueueOptions {
  /** Receives failed attempts (`warn`) and failed jobs (`error`). Default: silent. */
  logger?: JobLogger;
  /**
   * The clock and timers of due times, delays, retries' backoff and repeats (a test's virtual time); default the
   * process's. An attempt's time limit always runs on the process's: it guards against a handler that hangs.
   */
  timers?: Timers;
}

type JobState = "waiting" | "delayed" | "active";

interface MemoryJob {
  id: string;
  name: string;
  data: unknown;
  state: JobState;
  /** The attempt the next (or current) run is, 1-based. */
  attempt: number;
  attempts: number;
  backoff: JobBackoff | undefined;
  dueAt: number;
  timer: TimerHandle | undefined;
  schedulerId: string | undefined;
}

interface Scheduler {
  id: string;
  everyMs: number;
  name: string;
  data: unknown;
  /** Due time of the last run that started, for the next one. */
  lastDueAt: number | undefined;
  /** The id of its run that is waiting or delayed, if any. */
  pendingJobId: string | undefined;
}

interface Consumer {
  handler: JobHandler<unknown>;
  concurrency: number;
  timeLimitMs: number;
  active: number;
}

interface QueueState {
  name: string;
  /** Live jobs (waiting, delayed, active) by id. */
  jobs: Map<string, MemoryJob>;
  /** Waiting jobs, oldest first. */
  waiting: MemoryJob[];
  schedulers: Map<string, Scheduler>;
  worker: Consumer | undefined;
  nextAutoId: number;
}

/**
 * Creates the in-process {@link JobQueue}: delayed jobs and retries on timers, de-duplicating job
 * ids, repeatable jobs, per-queue concurrency, and a `close()` that waits for running jobs.
 *
 * @example
 * ```ts
 * const jobs = createMemoryQueue({ logger });
 * jobs.process("webhooks", async (job) => deliver(deps, job.data), { concurrency: 4 });
 * await jobs.start();
 * await jobs.add("webhooks", "deliver", { deliveryId }, { jobId: deliveryId });
 * ```
 */
export function createMemoryQueue(options: MemoryQueueOptions = {}): JobQueue {
  const logger = options.logger;
  const timers = options.timers ?? REAL_TIMERS;
  const now = () => timers.now();
  const queues = new Map<string, QueueState>();
  const running = new Set<Promise<void>>();
  let started = false;
  let closed = false;

  function assertOpen(): void {
    if (closed) throw new Error("job queue is closed");
  }

  function queueState(name: string): QueueState {
    let state = queues.get(name);
    if (!state) {
      state = { name, jobs: new Map(), waiting: [], schedulers: new Map(), worker: undefined, nextAutoId: 1 };
      queues.set(name, state);
    }
    return state;
  }

  /** Puts a job in the waiting list now, or on a timer when it is due later. */
  function schedule(q: QueueState, job: MemoryJob, delayMs: number): void {
    job.dueAt = now() + delayMs;
    if (delayMs <= 0) {
      job.state = "waiting";
      q.waiting.push(job);
      pump(q);
      return;
    }
    job.state = "delayed";
    job.timer = timers.setTimeout(() => {
      job.timer = undefined;
      job.state = "waiting";
      q.waiting.push(job);
      pump(q);
    }, delayMs);
  }

  function enqueue(q: QueueState, job: Omit<MemoryJob, "state" | "dueAt" | "timer">, delayMs: number): void {
    const live: MemoryJob = { ...job, state: "waiting", dueAt: 0, timer: undefined };
    q.jobs.set(live.id, live);
    schedule(q, live, delayMs);
  }

  /** Removes a job that is waiting or delayed (an active one is left to finish). */
  function dropPending(q: QueueState, jobId: string): void {
    const job = q.jobs.get(jobId);
    if (!job || job.state === "active") return;
    if (job.timer) timers.clearTimeout(job.timer);
    q.waiting = q.waiting.filter((waiting) => waiting !== job);
    q.jobs.delete(jobId);
  }

  function enqueueSchedulerRun(q: QueueState, scheduler: Scheduler, dueAt: number): void {
    const id = `repeat:${scheduler.id}:${dueAt}`;
    scheduler.pendingJobId = id;
    enqueue(
      q,
      { id, name: scheduler.name, data: scheduler.data, attempt: 1, attempts: 1, backoff: undefined, schedulerId: scheduler.id },
      Math.max(0, dueAt - now()),
    );
  }

  /** Like BullMQ, the next run of a scheduler is created when the current one starts. */
  function onSchedulerRunStarted(q: QueueState, job: MemoryJob): void {
    const scheduler = job.schedulerId === undefined ? undefined : q.schedulers.get(job.schedulerId);
    if (!scheduler || scheduler.pendingJobId !== job.id) return;
    scheduler.lastDueAt = job.dueAt;
    enqueueSchedulerRun(q, scheduler, Math.max(now(), job.dueAt + scheduler.everyMs));
  }

  function pump(q: QueueState): void {
    const worker = q.worker;
    if (!started || closed || !worker) return;
    while (worker.active < worker.concurrency) {
      const job = q.waiting.shift();
      if (!job) return;
      worker.active += 1;
      job.state = "active";
      onSchedulerRunStarted(q, job);
      const run = runAttempt(q, worker, job);
      running.add(run);
      void run.finally(() => running.delete(run));
    }
  }

  async function runAttempt(q: QueueState, worker: Consumer, job: MemoryJob): Promise<void> {
    const context = { id: job.id, name: job.name, queue: q.name, data: job.data, attempt: job.attempt };
    try {
      await withinTimeLimit(() => worker.handler(context), worker.timeLimitMs, `${q.name} job ${job.id}`);
      q.jobs.delete(job.id);
    } catch (err) {
      const fields = { queue: q.name, jobId: job.id, name: job.name, attempt: job.attempt, attempts: job.attempts, err };
      if (job.attempt < job.attempts && !closed) {
        const delayMs = backoffDelayMs(job.backoff, job.attempt);
        logger?.warn({ ...fields, retryInMs: delayMs }, "job attempt failed; retrying");
        job.attempt += 1;
        schedule(q, job, delayMs);
      } else {
        logger?.error(fields, "job failed after its last attempt");
        q.jobs.delete(job.id);
      }
    } finally {
      worker.active -= 1;
      pump(q);
    }
  }

  return {
    driver: "memory",

    async add<T>(queue: string, name: string, data: T, opts?: JobOptions): Promise<void> {
      assertQueueName(queue);
      const o = normalizeJobOptions(opts);
      assertOpen();
      const q = queueState(queue);
      const id = o.jobId ?? `auto-${q.nextAutoId++}`;
      if (q.jobs.has(id)) return;
      enqueue(q, { id, name, data, attempt: 1, attempts: o.attempts, backoff: o.backoff, schedulerId: undefined }, o.delayMs);
    },

    async repeat<T>(queue: string, schedulerId: string, everyMs: number, name: string, data: T): Promise<void> {
      assertQueueName(queue);
      assertId("schedulerId", schedulerId);
      assertEveryMs(everyMs);
      assertOpen();
      const q = queueState(queue);
      const existing = q.schedulers.get(schedulerId);
      const scheduler: Scheduler = {
        id: schedulerId,
        everyMs,
        name,
        data,
        lastDueAt: existing?.lastDueAt,
        pendingJobId: undefined,
      };
      if (existing?.pendingJobId !== undefined) dropPending(q, existing.pendingJobId);
      q.schedulers.set(schedulerId, scheduler);
      const dueAt = scheduler.lastDueAt === undefined ? now() : Math.max(now(), scheduler.lastDueAt + everyMs);
      enqueueSchedulerRun(q, scheduler, dueAt);
    },

    async removeRepeat(queue: string, schedulerId: string): Promise<void> {
      assertQueueName(queue);
      assertId("schedulerId", schedulerId);
      assertOpen();
      const q = queues.get(queue);
      const scheduler = q?.schedulers.get(schedulerId);
      if (!q || !scheduler) return;
      q.schedulers.delete(schedulerId);
      if (scheduler.pendingJobId !== undefined) dropPending(q, scheduler.pendingJobId);
    },

    async has(queue: string, jobId: string): Promise<boolean> {
      assertQueueName(queue);
      assertId("jobId", jobId);
      assertOpen();
      return queues.get(queue)?.jobs.has(jobId) ?? false;
    },

    process<T>(queue: string, handler: JobHandler<T>, opts?: ProcessOptions): void {
      assertQueueName(queue);
      const concurrency = normalizeConcurrency(opts);
      const timeLimitMs = normalizeTimeLimit(opts);
      assertOpen();
      const q = queueState(queue);
      if (q.worker) throw new Error(`a handler is already registered for queue "${queue}"`);
      q.worker = { handler: handler as JobHandler<unknown>, concurrency, timeLimitMs, active: 0 };
      pump(q);
    },

    async start(): Promise<void> {
      assertOpen();
      started = true;
      for (const q of queues.values()) pump(q);
    },

    async ping(): Promise<void> {
      assertOpen();
    },

    async stats(): Promise<QueueStats[]> {
      assertOpen();
      const at = now();
      return [...queues.values()].map((q) => {
        // Retries join the end of the waiting list: the oldest due time is not always the first one.
        const oldestDueAt = q.waiting.reduce((oldest, job) => Math.min(oldest, job.dueAt), Infinity);
        const oldestWaitingSeconds = q.waiting.length === 0 ? 0 : Math.max(0, (at - oldestDueAt) / 1000);
        return { queue: q.name, depth: q.jobs.size, oldestWaitingSeconds };
      });
    },

    async close(): Promise<void> {
      if (!closed) {
        closed = true;
        for (const q of queues.values()) {
          for (const job of q.jobs.values()) if (job.timer) timers.clearTimeout(job.timer);
        }
      }
      while (running.size > 0) await Promise.allSettled([...running]);
    },
  };
}
