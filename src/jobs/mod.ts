/**
 * Background jobs: the {@link JobQueue} interface and the driver chosen by configuration.
 *
 * @module
 */

import { createBullmqQueue } from "./bullmq.ts";
import { createMemoryQueue } from "./memory.ts";
import type { JobLogger, JobQueue } from "./queue.ts";
import type { RedisOutageTracker } from "./redis-outage.ts";
import type { Timers } from "../timers.ts";

export type {
  JobBackoff,
  JobContext,
  JobHandler,
  JobLogger,
  JobOptions,
  JobQueue,
  ProcessOptions,
} from "./queue.ts";
export { createBullmqQueue, type BullmqQueueOptions } from "./bullmq.ts";
export { createMemoryQueue, type MemoryQueueOptions } from "./memory.ts";
export { createRedisOutageTracker, isRedisConnectionError, type RedisOutageTracker } from "./redis-outage.ts";
export { REAL_TIMERS, type TimerHandle, type Timers } from "../timers.ts";

/** Options for {@link createJobQueue}, read from `Config` (`REDIS_URL`, `QUEUE_PREFIX`). */
export interface JobQueueConfig {
  /** Set → BullMQ on this Redis; unset or empty → the in-process driver. */
  redisUrl?: string | undefined;
  /** BullMQ key prefix (ignored by the in-process driver). */
  prefix: string;
  logger?: JobLogger;
  /** Shared with the process's other Redis clients, so that an outage is logged once (BullMQ only). */
  redisOutage?: RedisOutageTracker;
  /** The in-process driver's clock and timers (a test's virtual time); BullMQ's are Redis's. */
  timers?: Timers;
}

/**
 * Creates the job queue the configuration asks for: BullMQ when `redisUrl` is set, the in-process
 * driver otherwise. Never connects by itself; the first call that needs Redis does.
 *
 * @example
 * ```ts
 * const jobs = createJobQueue({ redisUrl: config.redisUrl, prefix: config.queuePrefix, logger });
 * jobs.driver; // "bullmq" | "memory"
 * ```
 */
export function createJobQueue(config: JobQueueConfig): JobQueue {
  if (config.redisUrl) {
    return createBullmqQueue({
      redisUrl: config.redisUrl,
      prefix: config.prefix,
      logger: config.logger,
      ...(config.redisOutage ? { redisOutage: config.redisOutage } : {}),
    });
  }
  return createMemoryQueue({ logger: config.logger, ...(config.timers ? { timers: config.timers } : {}) });
}
