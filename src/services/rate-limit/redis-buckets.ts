/**
 * Buckets in Redis, shared by every gateway process (architecture: "Scaling past one machine").
 *
 * Decisions:
 * - One Lua script per call (EVALSHA through ioredis `defineCommand`): read, refill, take and write
 *   happen atomically in Redis, so any number of processes share one exact budget.
 * - **Coalesced per bucket**: a process has at most one call in flight per bucket (and limit). The
 *   requests that arrive while it is in flight wait, and the next call takes tokens for all of them at
 *   once (`ARGV[4]` = how many): under load one round trip serves a whole batch, at low rates every
 *   request still makes its own call at once. Tokens are only ever taken for requests already waiting,
 *   so nothing is reserved ahead and the budget stays exact across instances: the batch gets
 *   `min(waiting, whole tokens)` and the rest of it is refused with the same `Retry-After` as one by one.
 * - **A small lease on deep buckets**: when a call leaves at least {@link LEASE_MIN_TOKENS} whole tokens in
 *   the bucket, the script also hands this process {@link LEASE_SHARE} of them (1 %), which it spends
 *   locally for at most {@link LEASE_MS}, then drops what is left. A tenant far below its limit then costs
 *   one round trip per few thousand requests instead of one per batch, and the budget is still shared
 *   across instances through Redis: every token spent was taken from the shared bucket first. The
 *   price, stated: a process can admit up to 1 % of the burst that the bucket, refilled meanwhile, would
 *   also admit (tokens taken ≤ {@link LEASE_MS} earlier), and an unused lease is lost to the others for
 *   that long. Buckets under {@link LEASE_MIN_TOKENS} (the default 100/s, burst 200, and every bucket
 *   close to empty) never lease: their answers are exact, one by one or batched.
 * - One key per bucket, `<prefix>:<key>`, a hash `{ tokens, ts }`. It expires when the bucket would be
 *   full again (a missing key *is* a full bucket), so idle tenants leave nothing behind. One key per
 *   script call also suits Redis Cluster.
 * - The clock is Redis's own (`TIME`), so instances with skewed clocks still agree; tests may pass
 *   `now` instead.
 * - Never waits for Redis without a bound: a client that is reconnecting (or closed) fails at once, and
 *   any call fails after `timeoutMs`, together with the requests that queued behind it. What a failure
 *   means is decided by the caller (`rate-limiter.ts`).
 *
 * @module
 */

import type { Cluster, Redis } from "ioredis";
import { REAL_TIMERS, type Timers } from "../../timers.ts";
import { withTimeout } from "../../jobs/with-timeout.ts";
import type { BucketAnswer, BucketStore, RateLimit } from "./token-bucket.ts";

/** An ioredis client: a single node (or Sentinel) or a Cluster. */
export type RedisClient = Redis | Cluster;

/** The ioredis command name the script is registered under. */
const COMMAND = "passerelleTakeRateLimitTokens";

/**
 * The token bucket of `token-bucket.ts`, in Lua, taking up to ARGV[4] tokens at once (one per waiting
 * request), plus a lease of ARGV[5] (a share) of what is left when at least ARGV[6] whole tokens are.
 * KEYS[1] = the bucket; ARGV = rps, burst, the time in milliseconds or "" for the Redis server's clock,
 * the number of tokens wanted, the lease share, the lease threshold. Returns { tokens granted, whole
 * tokens left, milliseconds until one token is back (0 when every token wanted was granted), tokens leased }.
 */
const TAKE_TOKENS_LUA = `
local rps = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local ownClock = now ~= nil
local wanted = tonumber(ARGV[4]) or 1
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
local leaseShare = tonumber(ARGV[5]) or 0
local leaseMin = tonumber(ARGV[6]) or 0
local granted = math.min(wanted, math.floor(tokens))
if granted < 0 then granted = 0 end
tokens = tokens - granted
local retryMs = 0
local leased = 0
if granted < wanted then
  retryMs = math.ceil((1 - tokens) * 1000 / rps)
elseif leaseShare > 0 and math.floor(tokens) >= leaseMin then
  leased = math.floor(tokens * leaseShare)
  tokens = tokens - leased
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'ts', string.format('%.17g', ts))
local ttl = math.ceil((burst - tokens) * 1000 / rps) + 1
-- A caller's own clock (tests move one by hand) is not the one Redis expires keys by: a key expired by
-- Redis's would come back full while that clock stands still. It is kept an hour instead.
if ownClock then ttl = math.max(ttl, 3600000) end
redis.call('PEXPIRE', KEYS[1], ttl)
return { granted, math.floor(tokens), retryMs, leased }
`;

/** Client states in which a command would only wait in ioredis's offline queue. */
const NOT_CONNECTED = new Set(["reconnecting", "close", "end", "disconnecting"]);

/** Default bound on one call to Redis, in milliseconds. */
export const DEFAULT_REDIS_TIMEOUT_MS = 250;

/** A lease is taken only when a call leaves at least this many whole tokens in the bucket. */
export const LEASE_MIN_TOKENS = 1_000;

/** The share of the tokens left that a lease takes. */
export const LEASE_SHARE = 0.01;

/** How long a process may spend a lease; what is left then is dropped. */
export const LEASE_MS = 250;

/** Buckets with a lease a process keeps at most (the oldest goes first; a dropped lease is only tokens not spent). */
const MAX_LEASES = 10_000;

type TakeTokensCommand = (
  key: string,
  rps: string,
  burst: string,
  now: string,
  wanted: string,
  leaseShare: string,
  leaseMin: string,
) => Promise<[number, number, number, number]>;

/** Tokens this process took ahead from one bucket, under one limit. */
interface Lease {
  rps: number;
  burst: number;
  tokens: number;
  /** Whole tokens the bucket had left when the lease was taken (for `remaining`). */
  left: number;
  /** The time on the store's `timers` after which the lease is dropped. */
  expiresAt: number;
}

interface Waiter {
  resolve(answer: BucketAnswer): void;
  reject(error: unknown): void;
}

/** The requests of one process for one bucket under one limit: at most one call in flight. */
interface Lane {
  key: string;
  redisKey: string;
  limit: RateLimit;
  waiting: Waiter[];
  busy: boolean;
}

/**
 * Creates the Redis store on `redis` (the caller owns the client: `close()` leaves it open). A lease's
 * {@link LEASE_MS} is measured on `timers` (default the process's; a test's virtual time), the buckets on `now`.
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
  timers?: Pick<Timers, "now">;
}): BucketStore {
  const { redis, prefix, now } = options;
  const timers = options.timers ?? REAL_TIMERS;
  const timeoutMs = options.timeoutMs ?? DEFAULT_REDIS_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) throw new RangeError(`invalid timeoutMs ${timeoutMs}`);
  redis.defineCommand(COMMAND, { numberOfKeys: 1, lua: TAKE_TOKENS_LUA });
  const takeTokensCommand = (redis as unknown as Record<string, TakeTokensCommand>)[COMMAND]!.bind(redis);
  const lanes = new Map<string, Lane>();
  // Keyed by the bucket key alone: the request path checks it before building any string.
  const leases = new Map<string, Lease>();

  /** One token from this process's lease on the bucket under this limit, or undefined when it has none. */
  function fromLease(key: string, limit: RateLimit): BucketAnswer | undefined {
    const lease = leases.get(key);
    if (!lease) return undefined;
    if (lease.tokens < 1 || lease.rps !== limit.rps || lease.burst !== limit.burst || timers.now() >= lease.expiresAt) {
      leases.delete(key);
      return undefined;
    }
    lease.tokens -= 1;
    return { allowed: true, remaining: lease.left + lease.tokens, retryAfterMs: 0 };
  }

  /** Sends one call for everything waiting in `lane`, then the next batch, until nothing waits. */
  async function drain(laneId: string, lane: Lane): Promise<void> {
    while (lane.waiting.length > 0) {
      let answer: BucketAnswer | undefined;
      while (lane.waiting.length > 0 && (answer = fromLease(lane.key, lane.limit))) lane.waiting.shift()!.resolve(answer);
      if (lane.waiting.length === 0) break;
      const batch = lane.waiting;
      lane.waiting = [];
      try {
        if (NOT_CONNECTED.has(redis.status)) throw new Error(`Redis connection is ${redis.status}`);
        const call = takeTokensCommand(
          lane.redisKey,
          String(lane.limit.rps),
          String(lane.limit.burst),
          now ? String(now()) : "",
          String(batch.length),
          String(LEASE_SHARE),
          String(LEASE_MIN_TOKENS),
        );
        const [granted, left, retryAfterMs, leased] = await withTimeout(call, timeoutMs, "rate limit");
        if (leased > 0) {
          if (leases.size >= MAX_LEASES && !leases.has(lane.key)) leases.delete(leases.keys().next().value!);
          leases.set(lane.key, { rps: lane.limit.rps, burst: lane.limit.burst, tokens: leased, left, expiresAt: timers.now() + LEASE_MS });
        }
        for (let i = 0; i < batch.length; i++) {
          batch[i]!.resolve(
            i < granted ? { allowed: true, remaining: left + leased + (granted - 1 - i), retryAfterMs: 0 } : { allowed: false, remaining: 0, retryAfterMs },
          );
        }
      } catch (error) {
        // Those that queued behind a failed call would wait for the same Redis: they fail with it.
        const failed = batch.concat(lane.waiting);
        lane.waiting = [];
        for (const waiter of failed) waiter.reject(error);
      }
    }
    lane.busy = false;
    lanes.delete(laneId);
  }

  return {
    take(key: string, limit: RateLimit): Promise<BucketAnswer> {
      const leased = fromLease(key, limit);
      if (leased) return Promise.resolve(leased);
      if (NOT_CONNECTED.has(redis.status)) return Promise.reject(new Error(`Redis connection is ${redis.status}`));
      const redisKey = `${prefix}:${key}`;
      const laneId = `${redisKey}\u0000${limit.rps}\u0000${limit.burst}`;
      let lane = lanes.get(laneId);
      if (!lane) {
        lane = { key, redisKey, limit: { rps: limit.rps, burst: limit.burst }, waiting: [], busy: false };
        lanes.set(laneId, lane);
      }
      const promise = new Promise<BucketAnswer>((resolve, reject) => lane.waiting.push({ resolve, reject }));
      if (!lane.busy) {
        lane.busy = true;
        void drain(laneId, lane);
      }
      return promise;
    },
    takeNow: fromLease,
    async close() {},
  };
}
