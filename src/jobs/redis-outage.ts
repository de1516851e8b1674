/**
 * Telling a Redis outage from other Redis errors, and reporting it once: every connection of a process
 * (BullMQ's queues and workers, their blocking duplicates, the rate limiter's client) reports each failed
 * reconnect attempt, several a second. The tracker turns them into one `down` when the first arrives and one
 * `up` when a connection is ready again.
 *
 * @module
 */
import type { OutageChange } from "../logger.ts";
import { REDIS_TIMEOUT } from "./with-timeout.ts";

/** Socket errors of a connection that could not be made or was lost, and a call Redis did not answer in time. */
const CONNECTION_CODES = new Set([REDIS_TIMEOUT, "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
/** ioredis's and BullMQ's messages for a connection that is gone (they carry no code). */
const CONNECTION_MESSAGES =
  /Connection is closed|Socket closed unexpectedly|connect ETIMEDOUT|ECONNREFUSED|ECONNRESET|Stream isn't writeable|Reached the max retries per request limit/;

/** Is `error` about the connection to Redis rather than about a command? */
export function isRedisConnectionError(error: unknown): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  if (typeof code === "string" && CONNECTION_CODES.has(code)) return true;
  return typeof message === "string" && CONNECTION_MESSAGES.test(message);
}

/** The connections of one process report to it; see the module documentation. */
export interface RedisOutageTracker {
  /** A connection reported an error: true when it is a connection error (now accounted for), false otherwise. */
  connectionError(error: unknown): boolean;
  /** A connection is ready (connected and usable). */
  ready(): void;
}

/**
 * Creates the tracker. After Redis comes back, connection errors are ignored for `settleMs`: connections whose
 * attempt was already under way when it returned may still fail once, and that is not a new outage.
 *
 * @example
 * ```ts
 * const redisOutage = createRedisOutageTracker(logOutage(logger, "redis"));
 * client.on("error", (err) => redisOutage.connectionError(err) || logger.error({ err }, "Redis error"));
 * client.on("ready", () => redisOutage.ready());
 * ```
 */
export function createRedisOutageTracker(report: OutageChange, options: { settleMs?: number; now?: () => number } = {}): RedisOutageTracker {
  const settleMs = options.settleMs ?? 5000;
  const now = options.now ?? Date.now;
  let down = false;
  let settledAt = 0;
  return {
    connectionError(error) {
      if (!isRedisConnectionError(error)) return false;
      if (!down && now() >= settledAt) {
        down = true;
        report("down", error);
      }
      return true;
    },
    ready() {
      if (!down) return;
      down = false;
      settledAt = now() + settleMs;
      report("up");
    },
  };
}
