/**
 * The rate limiter (contract §9), specified once and run against both stores: memory always, Redis
 * when REDIS_URL is set (each test under its own key prefix, all deleted afterwards). The failure
 * tests against an unreachable or hanging Redis need no Redis and always run.
 */

import { afterEach, describe, expect, it } from "bun:test";
import { Redis } from "ioredis";
import { createServer, type Server, type Socket } from "node:net";
import {
  createRateLimiter,
  FAIL_OPEN_WARN_INTERVAL_MS,
  LEASE_MS,
  rateLimitKey,
  type RateLimiter,
  type RateLimiterOptions,
  type RateLimitLogger,
} from "../../../src/services/rate-limit/mod.ts";
import { rejectionOf } from "../../support/errors.ts";
import { countKeysUnderPrefix, startRedisProxy, testQueuePrefix, cleanUpPrefixAfterAll } from "../../support/redis.ts";
import { virtualTime } from "../../support/virtual-time.ts";

const REDIS_URL = process.env.REDIS_URL;
const filePrefix = testQueuePrefix();
const DEFAULT = { rps: 100, burst: 200 };
const TENANT_A = rateLimitKey("ten_01HZYA0000000000000000000A", "sandbox");
/** Correctness tests must not fail open because a loaded machine answered late; the bound has its own tests. */
const GENEROUS_TIMEOUT_MS = 5000;

cleanUpPrefixAfterAll(REDIS_URL, filePrefix);

/** ioredis clients opened by a test, ended after it. */
const clients: Redis[] = [];
afterEach(() => {
  for (const client of clients.splice(0)) client.disconnect();
});

function redisClient(url: string): Redis {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on("error", () => {}); // the limiter reports failures through its own logger
  clients.push(client);
  return client;
}

let prefixCount = 0;
/** A prefix of its own for one test, under the file's prefix (so the file's cleanup covers it). */
function testPrefix(): string {
  return `${filePrefix}:t${++prefixCount}`;
}

/** A clock the test moves by hand, in milliseconds. */
function manualClock(): { now: () => number; advance: (ms: number) => void } {
  let t = 1_750_000_000_000;
  return { now: () => t, advance: (ms) => (t += ms) };
}

function recordingLogger(): { logger: RateLimitLogger; warns: Array<Record<string, unknown>> } {
  const warns: Array<Record<string, unknown>> = [];
  return { logger: { warn: (fields) => warns.push(fields) }, warns };
}

/** Consumes `n` times one after the other and returns how many were allowed. */
async function allowedOf(limiter: RateLimiter, key: string, limit: { rps: number; burst: number }, n: number) {
  let allowed = 0;
  for (let i = 0; i < n; i++) if ((await limiter.consume(key, limit)).allowed) allowed++;
  return allowed;
}

type MakeLimiter = (options?: Omit<RateLimiterOptions, "prefix" | "redis">) => RateLimiter;

function describeRateLimiter(title: string, make: MakeLimiter, skip = false): void {
  describe.skipIf(skip)(title, () => {
    it("allows a burst of `burst` requests, then refuses with Retry-After until the next token", async () => {
      const clock = manualClock();
      const limiter = make({ now: clock.now });
      const first = await limiter.consume(TENANT_A, DEFAULT);
      expect(first).toEqual({ allowed: true, retryAfterSeconds: 0, remaining: 199, resetSeconds: 1, failedOpen: false });
      expect(await allowedOf(limiter, TENANT_A, DEFAULT, 199)).toBe(199);
      const refused = await limiter.consume(TENANT_A, DEFAULT);
      expect(refused).toEqual({ allowed: false, retryAfterSeconds: 1, remaining: 0, resetSeconds: 2, failedOpen: false });

      // A slow limit: one token every 4 s, so Retry-After says 4 (whole seconds, rounded up).
      const slow = rateLimitKey("ten_01HZYSLOW00000000000000000", "live");
      expect(await allowedOf(limiter, slow, { rps: 0.25, burst: 3 }, 3)).toBe(3);
      expect((await limiter.consume(slow, { rps: 0.25, burst: 3 })).retryAfterSeconds).toBe(4);
      clock.advance(2500);
      expect((await limiter.consume(slow, { rps: 0.25, burst: 3 })).retryAfterSeconds).toBe(2);
    });

    it("refills at `rps` per second and never beyond `burst`", async () => {
      const clock = manualClock();
      const limiter = make({ now: clock.now });
      expect(await allowedOf(limiter, TENANT_A, DEFAULT, 201)).toBe(200);
      clock.advance(50); // 5 tokens at 100/s
      expect(await allowedOf(limiter, TENANT_A, DEFAULT, 6)).toBe(5);
      clock.advance(60_000); // long idle: a full bucket, not 6000 tokens
      expect(await allowedOf(limiter, TENANT_A, DEFAULT, 250)).toBe(200);
    });

    it("keeps a bucket while its clock stands still, however long the calls take", async () => {
      const clock = manualClock();
      const limiter = make({ now: clock.now });
      expect(await allowedOf(limiter, TENANT_A, DEFAULT, 1)).toBe(1);
      await Bun.sleep(50); // real time; on Redis, a key expired by Redis's own clock would come back full
      expect(await allowedOf(limiter, TENANT_A, DEFAULT, 200)).toBe(199);
    });

    it("keeps tenants and environments apart", async () => {
      const limiter = make({ now: manualClock().now });
      const limit = { rps: 1, burst: 3 };
      expect(await allowedOf(limiter, rateLimitKey("ten_A", "sandbox"), limit, 5)).toBe(3);
      expect(await allowedOf(limiter, rateLimitKey("ten_A", "live"), limit, 5)).toBe(3);
      expect(await allowedOf(limiter, rateLimitKey("ten_B", "sandbox"), limit, 5)).toBe(3);
    });

    it("applies a changed per-tenant limit on the very next request", async () => {
      const clock = manualClock();
      const limiter = make({ now: clock.now });
      expect(await allowedOf(limiter, TENANT_A, DEFAULT, 10)).toBe(10); // 190 tokens left
      // Lowered: the new burst caps what is left, the new rate sets Retry-After.
      const strict = { rps: 0.1, burst: 5 };
      expect(await allowedOf(limiter, TENANT_A, strict, 8)).toBe(5);
      expect((await limiter.consume(TENANT_A, strict)).retryAfterSeconds).toBe(10);
      // Raised: refills at the new rate from the next request on.
      clock.advance(1000);
      expect(await allowedOf(limiter, TENANT_A, { rps: 1000, burst: 5000 }, 1200)).toBe(1000);
    });

    it("allows exactly `burst` of 300 concurrent requests", async () => {
      const limiter = make({ now: manualClock().now });
      const decisions = await Promise.all(Array.from({ length: 300 }, () => limiter.consume(TENANT_A, DEFAULT)));
      expect(decisions.filter((d) => d.allowed)).toHaveLength(200);
      expect(decisions.filter((d) => !d.allowed).every((d) => d.retryAfterSeconds === 1)).toBe(true);
    });

    it("rejects an unusable limit or key instead of guessing", async () => {
      const limiter = make();
      expect(await rejectionOf(limiter.consume(TENANT_A, { rps: 0, burst: 10 }))).toBeInstanceOf(RangeError);
      expect(await rejectionOf(limiter.consume(TENANT_A, { rps: 10, burst: 0.5 }))).toBeInstanceOf(RangeError);
      expect(await rejectionOf(limiter.consume(TENANT_A, { rps: Number.NaN, burst: 10 }))).toBeInstanceOf(RangeError);
      expect(await rejectionOf(limiter.consume("", DEFAULT))).toBeInstanceOf(TypeError);
      expect(() => rateLimitKey("", "live")).toThrow(TypeError);
    });

    it("allows exactly `burst` per key with 100 requests in flight across 100 keys", async () => {
      const limiter = make({ now: manualClock().now });
      const limit = { rps: 1, burst: 20 };
      const keys = Array.from({ length: 100 }, (_, j) => rateLimitKey(`ten_${j}`, "live"));
      const allowed = keys.map(() => 0);
      for (let round = 0; round < 30; round++) {
        const decisions = await Promise.all(keys.map((key) => limiter.consume(key, limit)));
        for (const [j, decision] of decisions.entries()) if (decision.allowed) allowed[j]!++;
      }
      expect(allowed).toEqual(keys.map(() => 20));
    });
  });
}

describeRateLimiter("rate limiter in memory", (options) => createRateLimiter({ prefix: "unused", ...options }));

describe("rate limiter in memory, answered at once", () => {
  it("decides every request without a promise (consumeNow), on the same buckets as consume", async () => {
    const limiter = createRateLimiter({ prefix: "unused", now: manualClock().now });
    const limit = { rps: 1, burst: 3 };
    expect(limiter.consumeNow(TENANT_A, limit)).toEqual({ allowed: true, retryAfterSeconds: 0, remaining: 2, resetSeconds: 1, failedOpen: false });
    expect((await limiter.consume(TENANT_A, limit)).remaining).toBe(1);
    expect(limiter.consumeNow(TENANT_A, limit)?.remaining).toBe(0);
    expect(limiter.consumeNow(TENANT_A, limit)).toEqual({ allowed: false, retryAfterSeconds: 1, remaining: 0, resetSeconds: 3, failedOpen: false });
    expect(() => limiter.consumeNow("", limit)).toThrow(TypeError);
  });
});

describeRateLimiter(
  "rate limiter on Redis",
  (options) => createRateLimiter({ redis: redisClient(REDIS_URL!), prefix: testPrefix(), timeoutMs: GENEROUS_TIMEOUT_MS, ...options }),
  !REDIS_URL,
);

describe("rate limiter in memory keeps a bounded number of buckets", () => {
  it("drops the least recently used bucket when full (it is the idle one)", async () => {
    const limiter = createRateLimiter({ prefix: "unused", now: manualClock().now, maxBuckets: 2 });
    const limit = { rps: 1, burst: 1 };
    expect((await limiter.consume("idle", limit)).allowed).toBe(true);
    expect((await limiter.consume("busy", limit)).allowed).toBe(true);
    expect((await limiter.consume("busy", limit)).allowed).toBe(false);
    expect((await limiter.consume("new", limit)).allowed).toBe(true); // evicts "idle"
    expect((await limiter.consume("busy", limit)).allowed).toBe(false); // still remembered
    expect((await limiter.consume("idle", limit)).allowed).toBe(true); // forgotten: a full bucket
  });
});

describe.skipIf(!REDIS_URL)("rate limiter on Redis across processes", () => {
  it("shares one budget between two instances on two connections", async () => {
    const prefix = testPrefix();
    const serverOne = createRateLimiter({ redis: redisClient(REDIS_URL!), prefix, timeoutMs: GENEROUS_TIMEOUT_MS });
    const serverTwo = createRateLimiter({ redis: redisClient(REDIS_URL!), prefix, timeoutMs: GENEROUS_TIMEOUT_MS });
    // The Redis server's clock, and a rate so slow that no token comes back during the test.
    const limit = { rps: 0.001, burst: 200 };
    const decisions = await Promise.all(Array.from({ length: 300 }, (_, i) => (i % 2 === 0 ? serverOne : serverTwo).consume(TENANT_A, limit)));
    expect(decisions.filter((d) => d.allowed)).toHaveLength(200);
    expect((await serverOne.consume(TENANT_A, limit)).allowed).toBe(false);
    expect((await serverTwo.consume(TENANT_A, limit)).allowed).toBe(false);
    expect(decisions.every((d) => !d.failedOpen)).toBe(true);
  });

  it("refills on the Redis server's clock", async () => {
    const limiter = createRateLimiter({ redis: redisClient(REDIS_URL!), prefix: testPrefix(), timeoutMs: GENEROUS_TIMEOUT_MS });
    const limit = { rps: 20, burst: 2 }; // a token every 50 ms
    expect(await allowedOf(limiter, TENANT_A, limit, 3)).toBe(2);
    await Bun.sleep(120);
    const started = performance.now();
    const allowed = await allowedOf(limiter, TENANT_A, limit, 4);
    // The bucket holds 2 at most; a token more comes back for every 50 ms the four calls themselves take (a loaded machine).
    const during = Math.floor((performance.now() - started) / 50);
    expect(allowed).toBeGreaterThanOrEqual(1);
    expect(allowed).toBeLessThanOrEqual(2 + during);
  });

  it("keeps one key per bucket under the prefix, which expires once the bucket is full again", async () => {
    const prefix = testPrefix();
    const limiter = createRateLimiter({ redis: redisClient(REDIS_URL!), prefix, timeoutMs: GENEROUS_TIMEOUT_MS });
    const redis = redisClient(REDIS_URL!);
    await limiter.consume(rateLimitKey("ten_A", "live"), { rps: 0.01, burst: 200 }); // full again in 100 s
    await limiter.consume(rateLimitKey("ten_A", "sandbox"), { rps: 100, burst: 200 }); // in 10 ms
    const liveTtl = await redis.pttl(`${prefix}:ten_A:live`);
    expect(liveTtl).toBeGreaterThan(90_000);
    expect(liveTtl).toBeLessThanOrEqual(100_001);
    expect(await redis.pttl(`${prefix}:ten_A:sandbox`)).toBeLessThanOrEqual(11); // -2 once gone
    await Bun.sleep(60);
    expect(await countKeysUnderPrefix(REDIS_URL!, prefix)).toBe(1);
  });

  it("fails open, and says so, when Redis answers with an error", async () => {
    const prefix = testPrefix();
    const { logger, warns } = recordingLogger();
    const limiter = createRateLimiter({ redis: redisClient(REDIS_URL!), prefix, logger });
    await redisClient(REDIS_URL!).set(`${prefix}:${TENANT_A}`, "not a bucket"); // WRONGTYPE for the script
    const decision = await limiter.consume(TENANT_A, { rps: 1, burst: 1 });
    expect(decision).toEqual({ allowed: true, retryAfterSeconds: 0, remaining: 0, resetSeconds: 0, failedOpen: true });
    expect(warns).toHaveLength(1);
    expect(String(warns[0]!.err)).toContain("WRONGTYPE");
  });

  it("fails open within the time bound when Redis goes away", async () => {
    const proxy = await startRedisProxy(REDIS_URL!);
    const { logger, warns } = recordingLogger();
    const limiter = createRateLimiter({ redis: redisClient(proxy.url), prefix: testPrefix(), logger, timeoutMs: 1000 });
    const limit = { rps: 1, burst: 1 };
    expect(await limiter.consume(TENANT_A, limit)).toMatchObject({ allowed: true, failedOpen: false });
    expect(await limiter.consume(TENANT_A, limit)).toMatchObject({ allowed: false, failedOpen: false });
    await proxy.cut();
    const start = performance.now();
    const decisions = await Promise.all(Array.from({ length: 20 }, () => limiter.consume(TENANT_A, limit)));
    expect(performance.now() - start).toBeLessThan(2000);
    expect(decisions.every((d) => d.allowed && d.failedOpen)).toBe(true);
    expect(warns).toHaveLength(1);
  });
});

describe("rate limiter when Redis cannot be reached", () => {
  it("fails open at once against a refused connection, and throttles its warnings", async () => {
    const clock = manualClock();
    const { logger, warns } = recordingLogger();
    const limiter = createRateLimiter({ redis: redisClient("redis://127.0.0.1:1"), prefix: testPrefix(), logger, now: clock.now });
    const start = performance.now();
    const first = await limiter.consume(TENANT_A, DEFAULT);
    expect(first).toEqual({ allowed: true, retryAfterSeconds: 0, remaining: 0, resetSeconds: 0, failedOpen: true });
    for (let i = 0; i < 50; i++) expect((await limiter.consume(TENANT_A, DEFAULT)).failedOpen).toBe(true);
    expect(performance.now() - start).toBeLessThan(1000);
    expect(warns).toHaveLength(1); // the first failure, at once
    expect(warns[0]).toMatchObject({ key: TENANT_A, failedOpen: 1 });
    clock.advance(FAIL_OPEN_WARN_INTERVAL_MS);
    await limiter.consume(TENANT_A, DEFAULT);
    expect(warns).toHaveLength(2);
    expect(warns[1]).toMatchObject({ failedOpen: 51 }); // everything let through since the last line
  });

  it("fails open after `timeoutMs` when Redis accepts the connection but never answers", async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
      socket.on("error", () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const port = (silent.address() as { port: number }).port;
      const limiter = createRateLimiter({ redis: redisClient(`redis://127.0.0.1:${port}`), prefix: testPrefix(), timeoutMs: 100 });
      const start = performance.now();
      const decisions = await Promise.all(Array.from({ length: 10 }, () => limiter.consume(TENANT_A, DEFAULT)));
      const elapsed = performance.now() - start;
      expect(decisions.every((d) => d.allowed && d.failedOpen)).toBe(true);
      expect(elapsed).toBeGreaterThanOrEqual(95);
      expect(elapsed).toBeLessThan(600);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });
});

describe.skipIf(!REDIS_URL)("rate limiter on Redis: one round trip for many requests", () => {
  /** A client that counts the limiter's script calls (EVALSHA, or EVAL the first time). */
  function countingClient(): { redis: Redis; calls: () => number; limiter: (prefix?: string, timers?: RateLimiterOptions["timers"]) => Promise<RateLimiter> } {
    const redis = redisClient(REDIS_URL!);
    let calls = 0;
    const send = redis.sendCommand.bind(redis);
    redis.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
      if (command.name === "evalsha" || command.name === "eval") calls++;
      return (send as (...args: unknown[]) => unknown)(command, ...rest);
    }) as typeof redis.sendCommand;
    /** A limiter on this client whose script is already loaded (no EVAL after a NOSCRIPT), the count reset. */
    const limiter = async (prefix = testPrefix(), timers?: RateLimiterOptions["timers"]) => {
      const made = createRateLimiter({ redis, prefix, timeoutMs: GENEROUS_TIMEOUT_MS, ...(timers && { timers }) });
      await made.consume("warm-up", DEFAULT);
      calls = 0;
      return made;
    };
    return { redis, calls: () => calls, limiter };
  }

  it("takes tokens for the requests that queued behind a call in one call, with exact answers", async () => {
    const counting = countingClient();
    const calls = counting.calls;
    const limiter = await counting.limiter();
    const limit = { rps: 0.001, burst: 60 };
    const decisions = await Promise.all(Array.from({ length: 100 }, () => limiter.consume(TENANT_A, limit)));
    const allowed = decisions.filter((d) => d.allowed);
    expect(allowed).toHaveLength(60);
    expect(allowed.map((d) => d.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(decisions.filter((d) => !d.allowed).every((d) => d.retryAfterSeconds > 1 && d.remaining === 0)).toBe(true);
    // The first request's call, then one for the 99 that queued behind it.
    expect(calls()).toBe(2);
  });

  it("never leases from a bucket under LEASE_MIN_TOKENS: one call per request, one by one", async () => {
    const counting = countingClient();
    const calls = counting.calls;
    const limiter = await counting.limiter();
    expect(await allowedOf(limiter, TENANT_A, DEFAULT, 10)).toBe(10);
    expect(calls()).toBe(10);
  });

  it("leases 1 % of a deep bucket, spends it locally for LEASE_MS at most, and takes it from the shared budget", async () => {
    const counting = countingClient();
    const calls = counting.calls;
    const prefix = testPrefix();
    // The lease's time is the process's own: virtual here, moved by the test (the bucket stays on Redis's clock).
    const time = virtualTime();
    const limiter = await counting.limiter(prefix, time.timers);
    const limit = { rps: 0.001, burst: 100_000 }; // no refill during the test
    expect(await allowedOf(limiter, TENANT_A, limit, 500)).toBe(500);
    expect(calls()).toBe(1); // 1 taken, 999 leased
    const left = Number(await redisClient(REDIS_URL!).hget(`${prefix}:${TENANT_A}`, "tokens"));
    expect(Math.floor(left)).toBe(100_000 - 1 - 999);
    // Another instance sees the leased tokens gone from the shared bucket.
    const other = createRateLimiter({ redis: redisClient(REDIS_URL!), prefix, timeoutMs: GENEROUS_TIMEOUT_MS });
    expect((await other.consume(TENANT_A, limit)).remaining).toBeLessThan(100_000 - 1000);
    await time.advance(LEASE_MS - 1);
    await limiter.consume(TENANT_A, limit); // the lease still holds: no call
    expect(calls()).toBe(1);
    await time.advance(1);
    await limiter.consume(TENANT_A, limit); // the lease expired: back to Redis
    expect(calls()).toBe(2);
  });

  it("answers at once (consumeNow) only from a lease, counting like consume; without one, nothing is counted", async () => {
    const counting = countingClient();
    const calls = counting.calls;
    const limiter = await counting.limiter();
    const limit = { rps: 0.001, burst: 100_000 };
    expect(limiter.consumeNow(TENANT_A, limit)).toBeUndefined(); // no lease yet: the caller calls consume
    const first = await limiter.consume(TENANT_A, limit); // 1 taken, 999 leased
    const now = limiter.consumeNow(TENANT_A, limit);
    expect(now).toEqual({ allowed: true, retryAfterSeconds: 0, remaining: first.remaining - 1, resetSeconds: expect.any(Number), failedOpen: false });
    expect((await limiter.consume(TENANT_A, limit)).remaining).toBe(first.remaining - 2);
    expect(limiter.consumeNow(TENANT_A, { rps: 0.001, burst: 3 })).toBeUndefined(); // a changed limit is Redis's to decide
    expect(calls()).toBe(1);
    expect(() => limiter.consumeNow(TENANT_A, { rps: 0, burst: 10 })).toThrow(RangeError);
  });

  it("does not spend a lease under a changed limit", async () => {
    const counting = countingClient();
    const calls = counting.calls;
    const limiter = await counting.limiter();
    await limiter.consume(TENANT_A, { rps: 0.001, burst: 100_000 });
    expect(await allowedOf(limiter, TENANT_A, { rps: 0.001, burst: 3 }, 5)).toBe(3);
    expect(calls()).toBe(6);
  });
});
