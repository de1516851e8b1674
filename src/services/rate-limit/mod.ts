/**
 * Rate limits per tenant and environment (contract §9): a token bucket — `burst` requests at once,
 * `rps` per second sustained — shared through Redis when configured, in process memory otherwise,
 * failing open when Redis fails. No HTTP here: the caller throws `RateLimitedError`.
 *
 * @module
 */
export {
  createRateLimiter,
  FAIL_OPEN_WARN_INTERVAL_MS,
  rateLimitKey,
  type RateLimitDecision,
  type RateLimiter,
  type RateLimiterOptions,
  type RateLimitLogger,
} from "./rate-limiter.ts";
export { DEFAULT_REDIS_TIMEOUT_MS, LEASE_MIN_TOKENS, LEASE_MS, LEASE_SHARE, type RedisClient } from "./redis-buckets.ts";
export { DEFAULT_MAX_BUCKETS } from "./memory-buckets.ts";
export { takeToken, type RateLimit } from "./token-bucket.ts";
