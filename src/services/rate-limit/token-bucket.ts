/**
 * The token bucket behind the rate limit (contract §9): a bucket holds at most `burst` tokens, gains
 * `rps` tokens per second, and every request takes one. A fresh (or long idle) bucket is full, so a
 * client may send `burst` requests at once and then `rps` per second; over any window of `t` seconds it
 * gets at most `burst + rps·t` requests. The memory store runs this function; the Redis store runs the
 * same arithmetic in Lua (`redis-buckets.ts`) — keep the two in step.
 *
 * @module
 */

import type { RateLimit } from "../../db/schema.ts";

/** A limit: `burst` requests at once, `rps` per second sustained (declared with the tenants' column it is stored in). */
export type { RateLimit } from "../../db/schema.ts";

/** What a bucket remembers between requests. */
export interface BucketState {
  /** Tokens left (fractional) at `updatedAt`. */
  tokens: number;
  /** Milliseconds, on the clock of the store. */
  updatedAt: number;
}

/** The outcome of one request against a bucket. */
export interface TokenTake {
  state: BucketState;
  allowed: boolean;
  /** Whole tokens left after this request. */
  remaining: number;
  /** 0 when allowed; otherwise milliseconds until one token is back. */
  retryAfterMs: number;
}

/** What a store answers for one request. */
export type BucketAnswer = Omit<TokenTake, "state">;

/** Where buckets live: process memory or Redis. `key` is the full key; a failure rejects. */
export interface BucketStore {
  take(key: string, limit: RateLimit): Promise<BucketAnswer>;
  /** The same, answered at once when this process can (the memory buckets; a leased slice of a Redis bucket), else undefined. */
  takeNow?(key: string, limit: RateLimit): BucketAnswer | undefined;
  close(): Promise<void>;
}

/**
 * Throws a RangeError unless `limit` is usable: `rps` > 0 and `burst` ≥ 1, both finite.
 *
 * @example
 * ```ts
 * assertRateLimit({ rps: 100, burst: 200 }); // fine
 * assertRateLimit({ rps: 0, burst: 200 });   // RangeError
 * ```
 */
export function assertRateLimit(limit: RateLimit): void {
  const { rps, burst } = limit;
  if (typeof rps !== "number" || !Number.isFinite(rps) || rps <= 0) {
    throw new RangeError(`rate limit rps must be a finite number above 0, got ${rps}`);
  }
  if (typeof burst !== "number" || !Number.isFinite(burst) || burst < 1) {
    throw new RangeError(`rate limit burst must be a finite number of at least 1, got ${burst}`);
  }
}

/**
 * Takes one token from `state` (undefined = a full bucket) at time `now` (ms). A limit that changed
 * since the last request applies at once: the refill uses the new rate and the new `burst` caps it.
 *
 * @example
 * ```ts
 * const first = takeToken(undefined, { rps: 100, burst: 200 }, 0);
 * first.allowed;   // true
 * first.remaining; // 199
 * ```
 */
export function takeToken(state: BucketState | undefined, limit: RateLimit, now: number): TokenTake {
  const { rps, burst } = limit;
  let tokens = burst;
  let updatedAt = now;
  if (state) {
    // A clock that went back (another instance's, or an adjusted one) refills nothing, never negatively.
    const elapsedMs = Math.max(0, now - state.updatedAt);
    tokens = Math.min(burst, state.tokens + (elapsedMs * rps) / 1000);
    updatedAt = Math.max(now, state.updatedAt);
  }
  if (tokens >= 1) {
    tokens -= 1;
    return { state: { tokens, updatedAt }, allowed: true, remaining: Math.floor(tokens), retryAfterMs: 0 };
  }
  return {
    state: { tokens, updatedAt },
    allowed: false,
    remaining: 0,
    retryAfterMs: Math.ceil(((1 - tokens) * 1000) / rps),
  };
}

/**
 * The `Retry-After` value for a refusal: whole seconds, rounded up, at least 1.
 *
 * @example
 * ```ts
 * retryAfterSeconds(10);   // 1
 * retryAfterSeconds(1001); // 2
 * ```
 */
export function retryAfterSeconds(retryAfterMs: number): number {
  return Math.max(1, Math.ceil(retryAfterMs / 1000));
}
