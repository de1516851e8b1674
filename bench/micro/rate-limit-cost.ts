/**
 * The rate limiter's own cost per consume, in memory and (with REDIS_URL) on Redis: 10 000 consumes one
 * after the other on one key, then 10 000 with 100 in flight over 100 keys. A measurement, not a test
 * (its correctness is test/services/rate-limit/rate-limiter.test.ts); not part of `bun run bench`'s table.
 *
 * ```sh
 * bun bench/micro/rate-limit-cost.ts
 * REDIS_URL=redis://127.0.0.1:6379 bun bench/micro/rate-limit-cost.ts
 * ```
 */
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { createRateLimiter, type RateLimiter, rateLimitKey } from "../../src/services/rate-limit/mod.ts";

const N = 10_000;
const IN_FLIGHT = 100;
const LIMIT = { rps: 1e9, burst: 1e9 }; // never refuses: the cost of a decision, not of a 429

async function measure(limiter: RateLimiter): Promise<void> {
  const key = rateLimitKey("ten_bench", "live");
  let start = performance.now();
  for (let i = 0; i < N; i++) await limiter.consume(key, LIMIT);
  const sequential = ((performance.now() - start) * 1000) / N;
  const keys = Array.from({ length: IN_FLIGHT }, (_, j) => rateLimitKey(`ten_bench${j}`, "live"));
  start = performance.now();
  for (let i = 0; i < N; i += IN_FLIGHT) await Promise.all(keys.map((k) => limiter.consume(k, LIMIT)));
  const concurrent = ((performance.now() - start) * 1000) / N;
  console.log(
    `${limiter.store}: ${sequential.toFixed(1)} µs/consume sequential, ${concurrent.toFixed(1)} µs/consume with ${IN_FLIGHT} in flight (${N} consumes each)`,
  );
}

await measure(createRateLimiter({ prefix: "unused" }));

const redisUrl = process.env.REDIS_URL;
if (redisUrl) {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  const prefix = `passerelle_bench_${randomBytes(6).toString("hex")}`;
  try {
    await measure(createRateLimiter({ redis, prefix, timeoutMs: 5000 }));
  } finally {
    const keys = await redis.keys(`${prefix}:*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
} else {
  console.log("redis: skipped (set REDIS_URL to measure it)");
}
