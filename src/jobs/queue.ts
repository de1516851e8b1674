/**
 * The background-jobs interface shared by the BullMQ driver (`bullmq.ts`) and the in-process
 * driver (`memory.ts`). Which one runs is configuration (`createJobQueue` in `mod.ts`).
 *
 * The database is the source of truth; a queue only carries ids. Jobs can be lost (Redis loss,
 * in-process driver on restart) and the sweeper re-enqueues what is still due, so handlers must be
 * idempotent against the database and `add` must be safe to call again with the same `jobId`.
 *
 * Semantics common to both drivers:
 * - A job is *live* while it is waiting, delayed (including waiting for a retry) or active.
 * - `add` with a `jobId` that is live is a no-op. Finished jobs (completed or failed) are removed at
 *   once, so the same `jobId` can be enqueued again afterwards.
 * - A handler that throws (or rejects), or outlives its queue's time limit, is retried per `attempts` / `backoff`; each failed attempt
 *   that will be retried is logged at `warn`, the last one at `error`, then the job is dropped.
 * - Queue names must be non-empty and contain no `:`. Job and scheduler ids may hold any
 *   non-empty string (the BullMQ driver maps the characters BullMQ forbids).
 *
 * @module
 */

/** Retry delay policy after a failed attempt. */
export interface JobBackoff {
  /**
   * `fixed`: wait `delayMs` before every retry.
   * `exponential`: wait `delayMs * 2^(n-1)` after failed attempt n (BullMQ's built-in formula).
   */
  type: "fixed" | "exponential";
  delayMs: number;
}

/** Options for {@link JobQueue.add}. */
export interface JobOptions {
  /** De-duplication key: adding a job whose id is still live is a no-op. Default: a generated id. */
  jobId?: string;
  /** Run no earlier than this many milliseconds from now. Default 0. */
  delayMs?: number;
  /** Total number of attempts, including the first (integer ≥ 1). Default 1 (no retry). */
  attempts?: number;
  /** Delay before each retry. Default: retry immediately. */
  backoff?: JobBackoff;
}

/** What a handler receives. */
export interface JobContext<T = unknown> {
  /** The `jobId` given to `add` (or the generated one); `repeat:<schedulerId>:<ms>` for repeats. */
  id: string;
  name: string;
  queue: string;
  data: T;
  /** 1 on the first run, 2 on the first retry, and so on. */
  attempt: number;
}

/** A worker function; it fails the attempt by throwing. */
export type JobHandler<T = unknown> = (job: JobContext<T>) => Promise<void>;

/** Worker options for {@link JobQueue.process}. */
export interface ProcessOptions {
  /** Jobs of this queue run at once in this process (integer ≥ 1). Default 1. */
  concurrency?: number;
  /**
   * An attempt whose handler has not settled after this long fails with `JobTimeLimitError` (and is retried per
   * its `attempts`); the handler is not awaited any further. Default 5 minutes (`time-limit.ts`).
   */
  timeLimitMs?: number;
}

/**
 * The part of a logger the drivers use; pino's and `console`'s `warn`/`error` both fit.
 * Called as `logger.warn({ queue, jobId, name, attempt, attempts, err }, "message")`.
 */
export interface JobLogger {
  /** An outage's end (the BullMQ driver); `warn` when absent. */
  info?(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
}

/** One queue's load, for the metrics (`JobQueue.stats`). */
export interface QueueStats {
  queue: string;
  /** Jobs waiting, delayed (including between retries) or active. */
  depth: number;
  /** Seconds since the oldest waiting job became due (0 when none waits): how far behind its workers are. */
  oldestWaitingSeconds: number;
}

/** The queue both drivers implement. Every method validates its arguments and throws a TypeError on bad ones. */
export interface JobQueue {
  readonly driver: "bullmq" | "memory";
  /**
   * Enqueues a job. A `jobId` that is already waiting, delayed or active is a no-op (de-duplication);
   * one that has finished is enqueued again. With BullMQ it rejects when Redis does not answer in time
   * (the job may still land later: ids de-duplicate and the sweeper covers the rest).
   */
  add<T>(queue: string, name: string, data: T, opts?: JobOptions): Promise<void>;
  /**
   * Creates or updates a repeatable job: the first run is due at once, then one every `everyMs`
   * (BullMQ `upsertJobScheduler` with `every`). At most one run per scheduler is pending at a time,
   * so a stopped worker does not pile up runs. Calling it again with the same id updates it.
   */
  repeat<T>(queue: string, schedulerId: string, everyMs: number, name: string, data: T): Promise<void>;
  /** Removes a repeatable job and its pending run; a run already active finishes. Unknown ids are a no-op. */
  removeRepeat(queue: string, schedulerId: string): Promise<void>;
  /** Is a job with this id still waiting, delayed (including between retries) or active? The sweeper uses this. */
  has(queue: string, jobId: string): Promise<boolean>;
  /**
   * Registers the handler of a queue (one per queue per instance; a second call throws). It runs
   * only after `start()`; registering after `start()` starts it at once.
   */
  process<T>(queue: string, handler: JobHandler<T>, opts?: ProcessOptions): void;
  /** Starts the registered workers. A process started with `--no-workers` never calls it and only enqueues. */
  start(): Promise<void>;
  /** Resolves when the backend answers; rejects within a bounded time otherwise (for `/health/ready`). */
  ping(): Promise<void>;
  /**
   * The load of every queue this instance has used or registered a handler for (metrics, on scrape).
   * Rejects within a bounded time when the backend does not answer. Optional: a queue without it has no queue metrics.
   */
  stats?(): Promise<QueueStats[]>;
  /**
   * Stops taking jobs, waits for the active ones to finish, then releases timers and connections.
   * Afterwards every method rejects. Idempotent.
   */
  close(): Promise<void>;
}
