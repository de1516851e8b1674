/**
 * The BullMQ driver: production background jobs on Redis (`REDIS_URL` set). Same semantics as the
 * in-process driver (see `queue.ts`).
 *
 * Decisions:
 * - Every key lives under `<prefix>:<queue>:…`, so deployments and test runs sharing a Redis never
 *   collide (for Redis Cluster, give a hash-tagged prefix such as `{passerelle}`).
 * - `removeOnComplete` and `removeOnFail` are `true`: the database is the source of truth and a queue
 *   only carries ids, so a finished job keeps nothing worth reading in Redis, and keeping it would
 *   make a later `add` with the same id a silent no-op (BullMQ de-duplicates against every stored
 *   job, finished ones included). Failures are reported through the injected logger instead.
 * - Ids are escaped with `encodeBullmqId` (BullMQ refuses `:` and integer-looking custom ids);
 *   handlers and `has()` see the original ids.
 * - One ioredis connection per instance (`maxRetriesPerRequest: null`, which BullMQ requires for
 *   workers) is shared by the queues; BullMQ duplicates it for each worker's own and blocking
 *   connections (see `bullmq-connections.ts`). `ping()` uses a separate connection without an
 *   offline queue, so it fails at once on a refused connection.
 * - Nothing waits for Redis without a bound: add, repeat, removeRepeat, has and ping reject after
 *   `timeoutMs`, and close() returns even while Redis is down (it only waits, unbounded, for the
 *   handlers that are running).
 *
 * @module
 */

import { Queue, Worker, type Job } from "bullmq";
import { createBullmqConnections, MAX_RECONNECT_DELAY_MS } from "./bullmq-connections.ts";
import { decodeBullmqId, encodeBullmqId } from "./bullmq-job-id.ts";
import { assertEveryMs, assertId, assertQueueName, normalizeConcurrency, normalizeTimeLimit, normalizeJobOptions } from "./job-options.ts";
import type { JobContext, JobHandler, JobLogger, JobOptions, JobQueue, ProcessOptions, QueueStats } from "./queue.ts";
import { createRedisOutageTracker, type RedisOutageTracker } from "./redis-outage.ts";
import { withinTimeLimit } from "./time-limit.ts";
import { withTimeout } from "./with-timeout.ts";

/** Options for {@link createBullmqQueue}. */
export interface BullmqQueueOptions {
  /** `redis://…` or `rediss://…`. */
  redisUrl: string;
  /** Key prefix for every queue of this instance (`QUEUE_PREFIX`, default `passerelle`). */
  prefix: string;
  /** Receives failed attempts (`warn`), failed jobs and Redis errors (`error`). Default: silent. */
  logger?: JobLogger;
  /** Bound on `ping()` and on each call that waits for Redis (add, repeat, removeRepeat, has). Default 3000. */
  timeoutMs?: number;
  /**
   * Receives the connections' errors and readiness, so that an outage is logged once when it starts and once
   * when it ends (share one with the process's other Redis clients). Default: one of its own, on `logger`.
   */
  redisOutage?: RedisOutageTracker;
}

/** Job states in which a job is live (see `queue.ts`). */
const LIVE_STATES = new Set(["waiting", "delayed", "active", "prioritized", "waiting-children"]);

/** Same job id reused at once after it finishes. */
const REMOVE_FINISHED = { removeOnComplete: true, removeOnFail: true } as const;

/**
 * Creates the BullMQ {@link JobQueue}. Nothing connects until the first call that needs Redis;
 * queues and workers are created per queue name on first use and cached in the instance.
 *
 * @example
 * ```ts
 * const jobs = createBullmqQueue({ redisUrl: "redis://127.0.0.1:6379", prefix: "passerelle", logger });
 * jobs.process("webhooks", async (job) => deliver(deps, job.data), { concurrency: 8 });
 * await jobs.start();
 * await jobs.add("webhooks", "deliver", { deliveryId }, { jobId: deliveryId });
 * ```
 */
export function createBullmqQueue(options: BullmqQueueOptions): JobQueue {
  const { redisUrl, prefix, logger } = options;
  const timeoutMs = options.timeoutMs ?? 3000;
  if (typeof prefix !== "string" || prefix.length === 0) throw new TypeError("a non-empty prefix is required");
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new TypeError(`invalid timeoutMs ${timeoutMs}`);

  const queues = new Map<string, Queue>();
  const handlers = new Map<string, { handler: JobHandler<unknown>; concurrency: number; timeLimitMs: number }>();
  const workers = new Map<string, Worker>();
  /** Handler runs in progress, so that close() waits for them even when BullMQ cannot. */
  const running = new Set<Promise<void>>();
  let started = false;
  let closed = false;

  const redisOutage =
    options.redisOutage ??
    createRedisOutageTracker((state, error) => {
      if (state === "down") logger?.warn({ dependency: "redis", reason: error instanceof Error ? error.message : String(error) }, "redis unreachable");
      else (logger?.info ?? logger?.warn)?.call(logger, { dependency: "redis" }, "redis reachable again");
    });

  // An outage makes every connection report an error per reconnect attempt (several a second): the
  // outage tracker logs its start and end once. Other errors: a repeated message once a minute per
  // source. Nothing once closing.
  const lastLogged = new Map<string, { message: string; at: number }>();
  function reportRedisError(source: string, err: Error): void {
    if (closed) return;
    if (redisOutage.connectionError(err)) return;
    const at = Date.now();
    const last = lastLogged.get(source);
    if (last && last.message === err.message && at - last.at < 60_000) return;
    lastLogged.set(source, { message: err.message, at });
    logger?.error({ source, prefix, err }, "Redis connection error");
  }

  function assertOpen(): void {
    if (closed) throw new Error("job queue is closed");
  }

  const connections = createBullmqConnections(redisUrl, reportRedisError, () => redisOutage.ready());

  function queueFor(name: string): Queue {
    let queue = queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: connections.shared(), prefix, defaultJobOptions: REMOVE_FINISHED });
      queue.on("error", (err: Error) => reportRedisError(`queue ${name}`, err));
      queues.set(name, queue);
    }
    return queue;
  }

  function startWorker(name: string, handler: JobHandler<unknown>, concurrency: number, timeLimitMs: number): void {
    const processor = async (job: Job): Promise<void> => {
      const attempts = job.opts.attempts ?? 1;
      const context: JobContext<unknown> = {
        id: decodeBullmqId(job.id ?? ""),
        name: job.name,
        queue: name,
        data: job.data,
        attempt: job.attemptsMade + 1,
      };
      // The attempt fails at its time limit, so a hung handler never holds the job (and its lock) forever.
      const run = withinTimeLimit(() => handler(context), timeLimitMs, `${name} job ${context.id}`);
      running.add(run);
      try {
        await run;
      } catch (err) {
        const fields = { queue: name, jobId: context.id, name: job.name, attempt: context.attempt, attempts, err };
        if (context.attempt < attempts) logger?.warn(fields, "job attempt failed; retrying");
        else logger?.error(fields, "job failed after its last attempt");
        // BullMQ expects Error instances (it reads `message` and `stack`).
        throw err instanceof Error ? err : new Error(String(err));
      } finally {
        running.delete(run);
      }
    };
    const worker = new Worker(name, processor, {
      connection: connections.shared(),
      prefix,
      concurrency,
      // Only for jobs enqueued without our options (the job's own options win).
      removeOnComplete: { count: 0 },
      removeOnFail: { count: 0 },
      autorun: false,
    });
    worker.on("error", (err: Error) => reportRedisError(`worker ${name}`, err));
    workers.set(name, worker);
    // Run only once connected: BullMQ cannot close a running worker whose connection never
    // became ready (its lock-renewal timer then keeps the process alive), while one that never
    // ran closes cleanly.
    worker
      .waitUntilReady()
      .then(() => (closed ? undefined : worker.run()))
      .catch((err: unknown) => {
        if (!closed) logger?.error({ queue: name, prefix, err }, "worker stopped");
      });
  }

  async function closeQuietly(what: string, close: () => Promise<unknown>): Promise<void> {
    try {
      await withTimeout(close(), timeoutMs, `closing ${what}`);
    } catch (err) {
      logger?.warn({ prefix, err }, `could not close ${what} cleanly`);
    }
  }

  return {
    driver: "bullmq",

    async add<T>(queue: string, name: string, data: T, opts?: JobOptions): Promise<void> {
      assertQueueName(queue);
      const o = normalizeJobOptions(opts);
      assertOpen();
      const added = queueFor(queue).add(name, data, {
        ...(o.jobId === undefined ? {} : { jobId: encodeBullmqId(o.jobId) }),
        ...(o.delayMs > 0 ? { delay: o.delayMs } : {}),
        attempts: o.attempts,
        ...(o.backoff ? { backoff: { type: o.backoff.type, delay: o.backoff.delayMs } } : {}),
      });
      await withTimeout(added, timeoutMs, `add to ${queue}`);
    },

    async repeat<T>(queue: string, schedulerId: string, everyMs: number, name: string, data: T): Promise<void> {
      assertQueueName(queue);
      assertId("schedulerId", schedulerId);
      assertEveryMs(everyMs);
      assertOpen();
      const upserted = queueFor(queue).upsertJobScheduler(encodeBullmqId(schedulerId), { every: everyMs }, { name, data, opts: REMOVE_FINISHED });
      await withTimeout(upserted, timeoutMs, `repeat on ${queue}`);
    },

    async removeRepeat(queue: string, schedulerId: string): Promise<void> {
      assertQueueName(queue);
      assertId("schedulerId", schedulerId);
      assertOpen();
      await withTimeout(queueFor(queue).removeJobScheduler(encodeBullmqId(schedulerId)), timeoutMs, `removeRepeat on ${queue}`);
    },

    async has(queue: string, jobId: string): Promise<boolean> {
      assertQueueName(queue);
      assertId("jobId", jobId);
      assertOpen();
      const state = await withTimeout(queueFor(queue).getJobState(encodeBullmqId(jobId)), timeoutMs, `has on ${queue}`);
      return LIVE_STATES.has(state);
    },

    process<T>(queue: string, handler: JobHandler<T>, opts?: ProcessOptions): void {
      assertQueueName(queue);
      const concurrency = normalizeConcurrency(opts);
      const timeLimitMs = normalizeTimeLimit(opts);
      assertOpen();
      if (handlers.has(queue)) throw new Error(`a handler is already registered for queue "${queue}"`);
      handlers.set(queue, { handler: handler as JobHandler<unknown>, concurrency, timeLimitMs });
      if (started) startWorker(queue, handler as JobHandler<unknown>, concurrency, timeLimitMs);
    },

    async start(): Promise<void> {
      assertOpen();
      if (started) return;
      started = true;
      for (const [queue, { handler, concurrency, timeLimitMs }] of handlers) startWorker(queue, handler, concurrency, timeLimitMs);
    },

    async ping(): Promise<void> {
      assertOpen();
      await connections.ping(timeoutMs);
    },

    async stats(): Promise<QueueStats[]> {
      assertOpen();
      const names = [...new Set([...queues.keys(), ...handlers.keys()])];
      const one = async (name: string): Promise<QueueStats> => {
        const queue = queueFor(name);
        const [counts, [oldest]] = await Promise.all([queue.getJobCounts("waiting", "prioritized", "delayed", "active"), queue.getWaiting(0, 0)]);
        const depth = (counts.waiting ?? 0) + (counts.prioritized ?? 0) + (counts.delayed ?? 0) + (counts.active ?? 0);
        // Due at its creation plus its delay, or (a retry) no earlier than its last attempt's start.
        const dueAt = oldest ? Math.max(oldest.timestamp + (oldest.delay ?? 0), oldest.processedOn ?? 0) : undefined;
        return { queue: name, depth, oldestWaitingSeconds: dueAt === undefined ? 0 : Math.max(0, (Date.now() - dueAt) / 1000) };
      };
      // One bound for the whole read, so a scrape during a Redis outage answers without the queue metrics.
      return withTimeout(Promise.all(names.map(one)), timeoutMs, "queue stats");
    },

    async close(): Promise<void> {
      if (closed) return;
      closed = true;
      const workersClosed = Promise.all([...workers.values()].map((worker) => worker.close()));
      // The graceful part, without a bound: the handlers that are running finish.
      while (running.size > 0) await Promise.allSettled([...running]);
      // The rest (recording the last results, hanging up) needs Redis and is bounded. From here a
      // connection that is down ends instead of retrying, so BullMQ's own waits end too. A job whose
      // completion could not be recorded stays active in Redis; BullMQ's stalled-job check re-runs it.
      connections.stopReconnecting();
      try {
        await withTimeout(workersClosed, timeoutMs + MAX_RECONNECT_DELAY_MS, "closing workers");
      } catch (err) {
        logger?.warn({ prefix, err }, "workers did not close cleanly");
      }
      await Promise.all([...queues.values()].map((queue) => closeQuietly("queue", () => queue.close())));
      await connections.close(timeoutMs);
    },
  };
}
