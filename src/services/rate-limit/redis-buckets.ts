/**
 * Buckets in Redis, shared by every gateway process (architecture: "Scaling past one machine").
 *
 * Decisions:
 * - One Lua script per request (EVALSHA through ioredis `defineCommand`): read, refill, take and write
 *   happen atomically in Redis, so any number of processes share one exact budget in one round trip.
 * - One key per bucket, `<prefix>:<key>`, a hash `{ tokens, ts }`. It expires when the bucket would be
 *   full again (a missing key *is* a full bucket), so idle tenants leave nothing behind. One key per
 *   script call also suits Redis Cluster.
 * - The clock is Redis's own (`TIME`), so instances with skewed clocks still agree; tests may pass
 *   `now` instead.
 * - Never waits for Redis without a bound: a client that is reconnecting (or closed) fails at once, and
 *   any call fails after `timeoutMs`. What a failure means is decided by the caller (`rate-limiter.ts`).
 *
 * @module
 */

import type { Cluster, Redis } from "ioredis";
import { withTimeout } from "../../jobs/with-timeout.ts";
import type { BucketAnswer, BucketStore, RateLimit } from "./token-bucket.ts";

/** An ioredis client: a single node (or Sentinel) or a Cluster. */
export type RedisClient = Redis | Cluster;

/** The ioredis command name the script is registered under. */
const COMMAND = "passerelleTakeRateLimitToken";

/**
 * The token bucket of `token-bucket.ts`, in Lua. KEYS[1] = the bucket; ARGV = rps, burst, and the time
 * in milliseconds, or "" for the Redis server's clock. Returns { allowed 0|1, whole tokens left,
 * milliseconds until one token is back }.
 */
const TAKE_TOKEN_LUA = `
local rps = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
if now == nil then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000 + tonumber(time[2]) / 1000
end
local tokens = burst
local ts = now
local stored = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local storedTokens = tonumber(stored[1])
local storedTs = tonumber(stored[2])
if storedTokens ~= nil and storedTs ~= nil then
  tokens = math.min(burst, storedTokens + math.max(0, now - storedTs) * rps / 1000)
  ts = math.max(now, storedTs)
end
local allowed = 0
local retryMs = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
else
  retryMs = math.ceil((1 - tokens) * 1000 / rps)
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'ts', string.format('%.17g', ts))
redis.call('PEXPIRE', KEYS[1], math.ceil((burst - tokens) * 1000 / rps) + 1)
return { allowed, math.floor(tokens), retryMs }
`;

/** Client states in which a command would only wait in ioredis's offline queue. */
const NOT_CONNECTED = new Set(["reconnecting", "close", "end", "disconnecting"]);

/** Default bound on one call to Redis, in milliseconds. */
export const DEFAULT_REDIS_TIMEOUT_MS = 250;

type TakeTokenCommand = (key: string, rps: string, burst: string, now: string) => Promise<[number, number, number]>;

/**
 * Creates the Redis store on `redis` (the caller owns the client: `close()` leaves it open).
 *
 * @example
 * ```ts
 * const store = createRedisBuckets({ redis, prefix: "passerelle:rate-limit" });
 * const answer = await store.take("ten_…:live", { rps: 100, burst: 200 }); // rejects if Redis fails
 * ```
 */
export function createRedisBuckets(options: {
  redis: RedisClient;
  prefix: string;
  now?: () => number;
  timeoutMs?: number;
}): BucketStore {
  const { redis, prefix, now } = options;
  const timeoutMs = options.timeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError(`invalid timeoutMs ${timeoutMs}`);
  redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: TAKE_TOKEN_LUA });
  const takeTokenCommand = (redis as unknown as Record<string, TakeTokenCommand>)[COMMAND]!.bind(redis);

  return {
    async take(key: string, limit: RateLimit): Promise<BucketAnswer> {
      if (NOT_CONNECTED.has(redis.status)) throw new Error(`Redis connection is ${redis.status}`);
      const call = takeTokenCommand(
        `${prefix}:${key}`,
        String(limit.rps),
        String(limit.burst),
        now ? String(now()) : "",
      );
      const [allowed, remaining, retryAfterMs] = await withTimeout(call, timeoutMs, "rate limit");
      return { allowed: allowed === 1, remaining, retryAfterMs };
    },
    async close() {},
  };
}
