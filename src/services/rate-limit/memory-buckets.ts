/**
 * Buckets in process memory, for a gateway without Redis (one process: nothing to share). Bounded by
 * an LRU of {@link DEFAULT_MAX_BUCKETS} entries: when full, the bucket used least recently — an idle
 * one, which would have refilled anyway — is dropped first. Only more than that many (tenant,
 * environment) pairs all active within one refill period would reset a busy bucket early.
 *
 * @module
 */

import { LRUCache } from "lru-cache";
import { takeToken, type BucketAnswer, type BucketState, type BucketStore, type RateLimit } from "./token-bucket.ts";

/** How many buckets a process keeps by default (each a few dozen bytes). */
export const DEFAULT_MAX_BUCKETS = 100_000;

/**
 * Creates the in-memory store. `now` is in milliseconds; a monotonic clock by default.
 *
 * @example
 * ```ts
 * const store = createMemoryBuckets({ now: () => performance.now() });
 * const take = await store.take("ten_…:sandbox", { rps: 100, burst: 200 });
 * ```
 */
export function createMemoryBuckets(options: { now?: () => number; maxBuckets?: number } = {}): BucketStore {
  const now = options.now ?? (() => performance.now());
  const max = options.maxBuckets ?? DEFAULT_MAX_BUCKETS;
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`maxBuckets must be a positive integer, got ${max}`);
  const buckets = new LRUCache<string, BucketState>({ max });
  const takeNow = (key: string, limit: RateLimit): BucketAnswer => {
    const taken = takeToken(buckets.get(key), limit, now());
    buckets.set(key, taken.state);
    return { allowed: taken.allowed, remaining: taken.remaining, retryAfterMs: taken.retryAfterMs };
  };
  return {
    // Synchronous inside: concurrent requests of one process cannot interleave, so the count is exact.
    async take(key, limit) {
      return takeNow(key, limit);
    },
    takeNow,
    async close() {
      buckets.clear();
    },
  };
}
