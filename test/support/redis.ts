/**
 * Redis helpers for tests that share one Redis: a key prefix unique to each run, and a cleanup that
 * deletes only the keys under it (SCAN + DEL, never FLUSHALL).
 *
 * @module
 */

import { afterAll, expect } from "bun:test";
import { Redis } from "ioredis";
import { createServer, connect, type Socket } from "node:net";

/**
 * A key prefix unique to this call, e.g. `ptest:3f9c2a1b7d4e`. Call it once per test file (at module
 * level) and derive per-test prefixes from it (`${prefix}:t1`), so one cleanup covers them all.
 *
 * @example
 * ```ts
 * const prefix = testQueuePrefix();
 * afterAll(() => deleteKeysUnderPrefix(process.env.REDIS_URL!, prefix));
 * ```
 */
export function testQueuePrefix(): string {
  return `ptest:${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
}

/** Escapes the characters SCAN MATCH treats as glob syntax. */
function escapeGlob(text: string): string {
  return text.replace(/[\\*?[\]]/g, (char) => `\\${char}`);
}

/** Yields the keys equal to `prefix` or under `prefix:`, a SCAN page at a time. */
async function* scanKeysUnderPrefix(redis: Redis, prefix: string): AsyncGenerator<string[]> {
  for (const pattern of [escapeGlob(prefix), `${escapeGlob(prefix)}:*`]) {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 500);
      cursor = next;
      if (keys.length > 0) yield keys;
    } while (cursor !== "0");
  }
}

/**
 * Deletes every key equal to `prefix` or starting with `prefix:` and returns how many were deleted.
 *
 * @example
 * ```ts
 * await deleteKeysUnderPrefix("redis://127.0.0.1:6379", "ptest:3f9c2a1b7d4e");
 * ```
 */
export async function deleteKeysUnderPrefix(redisUrl: string, prefix: string): Promise<number> {
  if (!prefix) throw new TypeError("refusing to delete keys under an empty prefix");
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let deleted = 0;
    for await (const keys of scanKeysUnderPrefix(redis, prefix)) deleted += await redis.del(...keys);
    return deleted;
  } finally {
    await redis.quit();
  }
}

/**
 * Counts the keys under `prefix` (as {@link deleteKeysUnderPrefix} matches them).
 *
 * @example
 * ```ts
 * expect(await countKeysUnderPrefix(url, prefix)).toBe(0);
 * ```
 */
export async function countKeysUnderPrefix(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let count = 0;
    for await (const keys of scanKeysUnderPrefix(redis, prefix)) count += keys.length;
    return count;
  } finally {
    await redis.quit();
  }
}

/** A TCP proxy in front of a Redis, to simulate an outage. */
export interface RedisProxy {
  /** `redis://127.0.0.1:<proxy port>`, to hand to the code under test. */
  url: string;
  /** Simulates Redis going away: drops every connection and refuses new ones. */
  cut(): Promise<void>;
}

/**
 * Starts a TCP proxy to the Redis at `redisUrl` (node:net, as there is no web-standard TCP API).
 *
 * @example
 * ```ts
 * const proxy = await startRedisProxy(process.env.REDIS_URL!);
 * const jobs = createBullmqQueue({ redisUrl: proxy.url, prefix });
 * await proxy.cut(); // Redis is now "down" for `jobs`
 * ```
 */
export async function startRedisProxy(redisUrl: string): Promise<RedisProxy> {
  const target = new URL(redisUrl);
  const sockets = new Set<Socket>();
  const track = (socket: Socket): void => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    track(client);
    track(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("proxy has no TCP address");
  return {
    url: `redis://127.0.0.1:${address.port}`,
    async cut(): Promise<void> {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

/**
 * Registers, at the top level of a test file, the clean-up of its key prefix after its last test (even under a
 * `-t` filter): every key deleted, and none left. Does nothing without `REDIS_URL`.
 */
export function cleanUpPrefixAfterAll(redisUrl: string | undefined, prefix: string): void {
  afterAll(async () => {
    if (!redisUrl) return;
    await deleteKeysUnderPrefix(redisUrl, prefix);
    expect(await countKeysUnderPrefix(redisUrl, prefix)).toBe(0);
  }, 10_000);
}
