/**
 * The per-tenant rate limiter (contract §9): a token bucket per (tenant, environment) — `burst`
 * requests at once, `rps` per second sustained — in Redis when the gateway has one (shared by every
 * process), in process memory otherwise. No HTTP here: the caller turns a refusal into
 * `RateLimitedError(retryAfterSeconds)` (429 with `Retry-After`).
 *
 * When Redis fails (down, unreachable, too slow, any error) the limiter **fails open**: the request is
 * allowed, the answer says `failedOpen: true`, and a warning is logged (the first failure at once, then
 * at most one line per {@link FAIL_OPEN_WARN_INTERVAL_MS} with the count). A rate limiter protects the
 * gateway; a Redis outage must not turn into a payment outage. Each call waits at most `timeoutMs`, and
 * not at all while the client is reconnecting.
 *
 * @module
 */

import type { Environment } from "../../config.ts";
import { REAL_TIMERS, type Timers } from "../../timers.ts";
import { createMemoryBuckets } from "./memory-buckets.ts";
import { createRedisBuckets, type RedisClient } from "./redis-buckets.ts";
import { assertRateLimit, type BucketAnswer, retryAfterSeconds, type BucketStore, type RateLimit } from "./token-bucket.ts";

/** At most one fail-open warning per this many milliseconds. */
export const FAIL_OPEN_WARN_INTERVAL_MS = 10_000;

/** The part of a logger the limiter uses; pino's fits. */
export interface RateLimitLogger {
  warn(fields: Record<string, unknown>, message: string): void;
}

/** Options for {@link createRateLimiter}. */
export interface RateLimiterOptions {
  /** An ioredis client → buckets in Redis, shared across processes. Unset → process memory. Not closed by the limiter. */
  redis?: RedisClient | undefined;
  /** Redis key prefix, e.g. `passerelle:rate-limit`; keys are `<prefix>:<key>`. */
  prefix: string;
  /**
   * The buckets' clock in milliseconds. Default: the Redis server's clock (instances agree even when theirs
   * drift), or `timers`' in memory. Tests pass their own.
   */
  now?: () => number;
  /**
   * The process's own clock, for what it measures by itself: a lease's `LEASE_MS`, the memory buckets
   * (unless `now` is given) and the interval between fail-open warnings (likewise). Default the process's
   * monotonic clock (`REAL_TIMERS`); a test's virtual time.
   */
  timers?: Pick<Timers, "now">;
  /** Receives the fail-open warnings. Default: silent. */
  logger?: RateLimitLogger;
  /** Bound on one Redis call before failing open. Default 250 ms. */
  timeoutMs?: number;
  /** Memory store only: how many buckets to keep (LRU). Default 100 000. */
  maxBuckets?: number;
}

/** The answer for one request. */
export interface RateLimitDecision {
  allowed: boolean;
  /** For `Retry-After`: whole seconds until one request would be allowed, ≥ 1 when refused; 0 when allowed. */
  retryAfterSeconds: number;
  /** Whole requests left in the burst after this one (0 when refused or failed open). */
  remaining: number;
  /**
   * Whole seconds, rounded up, until the bucket is full again at `rps` (for the `RateLimit` header's `t`),
   * reckoned from `remaining`; 0 when failed open.
   */
  resetSeconds: number;
  /** True when Redis failed and the request was let through unchecked. */
  failedOpen: boolean;
}

/** A rate limiter; see {@link createRateLimiter}. */
export interface RateLimiter {
  readonly store: "redis" | "memory";
  /**
   * Counts one request against `key` under `limit` (the tenant's override or the configured default;
   * a changed limit applies from this call on). Rejects only on a bad argument, never because Redis
   * failed. Throws a RangeError on an unusable limit (rps ≤ 0, burst < 1).
   */
  consume(key: string, limit: RateLimit): Promise<RateLimitDecision>;
  /**
   * The same count, decided at once when this process can (the memory buckets; a leased slice of a Redis bucket:
   * no promise on the hot path), else undefined — and nothing counted: call {@link consume}.
   */
  consumeNow(key: string, limit: RateLimit): RateLimitDecision | undefined;
  /** Drops the in-memory buckets; leaves the Redis client open (its owner closes it). */
  close(): Promise<void>;
}

/**
 * The bucket key of a tenant in one environment: sandbox and live are limited separately.
 *
 * @example
 * ```ts
 * rateLimitKey("ten_01J…", "live"); // "ten_01J…:live"
 * ```
 */
export function rateLimitKey(tenantId: string, environment: Environment): string {
  if (typeof tenantId !== "string" || tenantId.length === 0) throw new TypeError("tenantId must be a non-empty string");
  return `${tenantId}:${environment}`;
}

/**
 * Creates the rate limiter: on Redis when `redis` is given, in memory otherwise.
 *
 * @example
 * ```ts
 * const limiter = createRateLimiter({ redis, prefix: `${config.queuePrefix}:rate-limit`, logger });
 * const decision = await limiter.consume(rateLimitKey(tenant.id, env), tenant.rateLimit ?? config.rateLimit);
 * if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds);
 * ```
 */
function decisionOf(answer: BucketAnswer, limit: RateLimit): RateLimitDecision {
  return {
    allowed: answer.allowed,
    retryAfterSeconds: answer.allowed ? 0 : retryAfterSeconds(answer.retryAfterMs),
    remaining: answer.remaining,
    resetSeconds: Math.ceil((limit.burst - answer.remaining) / limit.rps),
    failedOpen: false,
  };
}

export function createRateLimiter(options: RateLimiterOptions): RateLimiter {
  const { redis, prefix, now, logger } = options;
  const timers = options.timers ?? REAL_TIMERS;
  if (typeof prefix !== "string" || prefix.length === 0) throw new TypeError("a non-empty prefix is required");
  const store: BucketStore = redis
    ? createRedisBuckets({
        redis,
        prefix,
        timers,
        ...(now && { now }),
        ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
      })
    : createMemoryBuckets({
        now: now ?? timers.now,
        ...(options.maxBuckets !== undefined && { maxBuckets: options.maxBuckets }),
      });
  const wallClock = now ?? timers.now;
  let lastWarnAt = -Infinity;
  let unreported = 0;

  function reportFailOpen(key: string, err: unknown): void {
    unreported += 1;
    const at = wallClock();
    if (at - lastWarnAt < FAIL_OPEN_WARN_INTERVAL_MS) return;
    logger?.warn({ err, key, failedOpen: unreported }, "rate limiter: Redis failed, allowing requests without a limit (failing open)");
    lastWarnAt = at;
    unreported = 0;
  }

  return {
    store: redis ? "redis" : "memory",

    async consume(key, limit) {
      if (typeof key !== "string" || key.length === 0) throw new TypeError("key must be a non-empty string");
      assertRateLimit(limit);
      let answer: BucketAnswer;
      try {
        answer = await store.take(key, limit);
      } catch (err) {
        reportFailOpen(key, err);
        return { allowed: true, retryAfterSeconds: 0, remaining: 0, resetSeconds: 0, failedOpen: true };
      }
      return decisionOf(answer, limit);
    },

    consumeNow(key, limit) {
      if (typeof key !== "string" || key.length === 0) throw new TypeError("key must be a non-empty string");
      assertRateLimit(limit);
      const answer = store.takeNow?.(key, limit);
      return answer && decisionOf(answer, limit);
    },

    close: () => store.close(),
  };
}
