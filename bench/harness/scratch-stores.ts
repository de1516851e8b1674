/**
 * The gateway under test gets stores of its own: a fresh PostgreSQL database, dropped at the end, and a
 * Redis key prefix whose keys are deleted at the end (SCAN + DEL, never FLUSHDB: the Redis is shared).
 */
import Redis from "ioredis";
import postgres from "postgres";

/** A random lowercase hex suffix, safe inside SQL identifiers and Redis key patterns. */
export function randomSuffix(bytes = 6): string {
  return Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("hex");
}

export interface ScratchDatabase {
  name: string;
  /** Connection string of the new database, for the gateway's `DATABASE_URL`. */
  url: string;
  drop(): Promise<void>;
}

/** Creates `passerelle_bench_<random>` through the admin connection `adminUrl`. */
export async function createScratchDatabase(adminUrl: string): Promise<ScratchDatabase> {
  const name = `passerelle_bench_${randomSuffix()}`;
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  try {
    await admin.unsafe(`CREATE DATABASE ${name}`);
  } catch (error) {
    await admin.end({ timeout: 1 });
    throw new Error(`bench: cannot create a database through ${adminUrl}: ${error instanceof Error ? error.message : error}`);
  }
  await admin.end({ timeout: 1 });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    async drop() {
      const again = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
      try {
        await again.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      } finally {
        await again.end({ timeout: 1 });
      }
    },
  };
}

/** Checks that Redis answers, so a missing server fails before the gateway is started. */
export async function pingRedis(redisUrl: string): Promise<void> {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: 3_000,
    retryStrategy: () => null,
  });
  let connectionError: unknown;
  redis.on("error", (error) => (connectionError ??= error));
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    const cause = connectionError ?? error;
    throw new Error(`bench: Redis at ${redisUrl} does not answer: ${cause instanceof Error ? cause.message : cause}`);
  } finally {
    redis.disconnect();
  }
}

/** Deletes every key under `prefix:` (and `prefix` itself); resolves with how many were deleted. */
export async function deleteRedisKeys(redisUrl: string, prefix: string): Promise<number> {
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1, connectTimeout: 3_000, retryStrategy: () => null });
  redis.on("error", () => {}); // a failed command rejects with the same error
  let deleted = 0;
  try {
    await redis.connect();
    for (const pattern of [`${prefix}:*`, prefix]) {
      let cursor = "0";
      do {
        const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 1000);
        cursor = next;
        if (keys.length > 0) deleted += await redis.del(...keys);
      } while (cursor !== "0");
    }
  } finally {
    redis.disconnect();
  }
  return deleted;
}

/** Reads the scratch database's activity counters (`pg_stat_database`) through the admin connection. */
export interface DatabaseStats {
  /** Committed + rolled-back transactions of the database so far. */
  transactions(): Promise<number>;
  /** The process ids of the PostgreSQL backends connected to the database now (`pg_stat_activity`). */
  backendPids(): Promise<number[]>;
  close(): Promise<void>;
}

/**
 * Opens one admin connection that reads `pg_stat_database` for `name` (from the `postgres` database, so
 * the readings add no transaction to the one measured). Backends report their counters when they go
 * idle, at most once a second: read a second after the load stops.
 */
export function openDatabaseStats(adminUrl: string, name: string): DatabaseStats {
  const admin = postgres(adminUrl, { max: 1, onnotice: () => {}, connect_timeout: 5 });
  return {
    async transactions() {
      const rows = await admin<{ n: string }[]>`select (xact_commit + xact_rollback)::text as n from pg_stat_database where datname = ${name}`;
      return Number(rows[0]?.n ?? Number.NaN);
    },
    async backendPids() {
      const rows = await admin<{ pid: number }[]>`select pid from pg_stat_activity where datname = ${name} and backend_type = 'client backend'`;
      return rows.map((row) => Number(row.pid));
    },
    close: () => admin.end({ timeout: 1 }),
  };
}
