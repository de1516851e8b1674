/**
 * The postgres.js Kysely driver when a connection dies under it or the server cannot be reached:
 * every statement and transaction settles within seconds with an error the gateway maps to 503, the
 * pool replaces the connection, and nothing is thrown uncaught. PostgreSQL only: skipped without
 * `DATABASE_URL` (PGlite has no connection to lose).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { Kysely, sql } from "kysely";
import postgres from "postgres";
import { AvailabilityGate, isDatabaseUnavailable } from "../../src/db/availability.ts";
import { PostgresJsDialect } from "../../src/db/postgres-js-driver.ts";
import { createScratchDatabase, type ScratchDatabase } from "../support/db.ts";
import { startTcpProxy, type TcpProxy } from "../support/tcp-proxy.ts";
import { waitUntil } from "../support/wait.ts";

const DATABASE_URL = process.env.DATABASE_URL;
const HOOK_TIMEOUT = 30_000;
/** The issue's bound: a statement whose connection dies rejects within 5 s. */
const SETTLES_WITHIN_MS = 5000;

interface Db {
  items: { id: number; note: string };
}

function openPool(url: string, max: number, gate?: AvailabilityGate) {
  const pool = postgres(url, { max, onnotice: () => {}, connect_timeout: 2, backoff: () => 0.2 });
  return new Kysely<Db>({ dialect: new PostgresJsDialect({ postgres: pool, acquireTimeoutMs: 3000, ...(gate ? { gate } : {}) }) });
}

/** How a promise settled, and how long it took. */
async function settle<T>(promise: Promise<T>): Promise<{ ok: boolean; value?: T; error?: unknown; ms: number }> {
  const started = performance.now();
  try {
    const value = await promise;
    return { ok: true, value, ms: performance.now() - started };
  } catch (error) {
    return { ok: false, error, ms: performance.now() - started };
  }
}

describe.skipIf(!DATABASE_URL)("postgres.js driver when connections die (PostgreSQL)", () => {
  let scratch: ScratchDatabase;
  let admin: postgres.Sql;
  let name: string;
  let url: string;
  let db: Kysely<Db>;
  const uncaught: unknown[] = [];
  const onUncaught = (error: unknown) => uncaught.push(error);

  /** Terminates the backends of the test database running a statement that matches `query` (all when undefined). */
  async function terminate(query?: string): Promise<number> {
    const rows = await admin<{ pid: number }[]>`
      select pg_terminate_backend(pid), pid from pg_stat_activity
      where datname = ${name} and pid <> pg_backend_pid() and (${query ?? null}::text is null or query like ${`%${query ?? ""}%`})`;
    return rows.length;
  }

  /** Waits until a backend of the test database shows `state` for a statement matching `query`. */
  async function waitForBackend(query: string, state: string): Promise<void> {
    await waitUntil(
      async () => (await admin`select 1 from pg_stat_activity where datname = ${name} and state = ${state} and query like ${`%${query}%`}`).length > 0,
      { what: `a backend ${state}: ${query}`, intervalMs: 10 },
    );
  }

  beforeAll(async () => {
    process.on("uncaughtException", onUncaught);
    scratch = await createScratchDatabase(DATABASE_URL!);
    ({ admin, name, url } = scratch);
    db = openPool(url, 2);
    await db.schema
      .createTable("items")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("note", "text", (c) => c.notNull())
      .execute();
  }, HOOK_TIMEOUT);

  afterAll(async () => {
    process.off("uncaughtException", onUncaught);
    await db?.destroy();
    await scratch?.drop();
  }, HOOK_TIMEOUT);

  it("rejects a statement whose backend is killed under it, and the next statement succeeds", async () => {
    const running = settle(sql`select pg_sleep(30) as mid_statement`.execute(db));
    await waitForBackend("mid_statement", "active");
    expect(await terminate("mid_statement")).toBe(1);
    const outcome = await running;
    expect(outcome.ok).toBe(false);
    expect(outcome.ms).toBeLessThan(SETTLES_WITHIN_MS);
    expect(isDatabaseUnavailable(outcome.error)).toBe(true);
    expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows).toEqual([{ one: 1 }]);
    expect(uncaught).toEqual([]);
  });

  it("rejects a transaction whose backend is killed before COMMIT, twice on a pool of two, and the pool recovers", async () => {
    for (let round = 0; round < 3; round++) {
      let inserted!: () => void;
      const insertedOnce = new Promise<void>((resolve) => (inserted = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const transaction = settle(
        db.transaction().execute(async (trx) => {
          await trx.insertInto("items").values({ id: round, note: "lost with its connection" }).execute();
          inserted();
          await released; // idle in transaction while its backend is killed
          await trx
            .insertInto("items")
            .values({ id: 100 + round, note: "never sent" })
            .execute();
        }),
      );
      await insertedOnce;
      await waitForBackend('insert into "items"', "idle in transaction");
      expect(await terminate('insert into "items"')).toBe(1);
      await Bun.sleep(50);
      release();
      const outcome = await transaction;
      expect(outcome.ok).toBe(false);
      expect(outcome.ms).toBeLessThan(SETTLES_WITHIN_MS + 1000);
      expect(isDatabaseUnavailable(outcome.error)).toBe(true);
    }
    // Nothing of the lost transactions was kept, and both connections work.
    expect(await db.selectFrom("items").selectAll().execute()).toEqual([]);
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        db.transaction().execute(async (trx) => {
          await trx
            .insertInto("items")
            .values({ id: 1000 + i, note: "kept" })
            .execute();
          return (await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(trx)).rows[0]!.pid;
        }),
      ),
    );
    expect(results).toHaveLength(6);
    expect(await db.selectFrom("items").select("id").orderBy("id").execute()).toHaveLength(6);
    await db.deleteFrom("items").execute();
    expect(uncaught).toEqual([]);
  });

  it("rejects the statements queued behind a lost one in a transaction, and COMMIT is never sent", async () => {
    const transaction = settle(
      db.transaction().execute(async (trx) => {
        // The second statement is pipelined behind the first on the same connection.
        await Promise.all([sql`select pg_sleep(30) as queued_first`.execute(trx), trx.insertInto("items").values({ id: 7, note: "queued" }).execute()]);
      }),
    );
    await waitForBackend("queued_first", "active");
    expect(await terminate("queued_first")).toBe(1);
    const outcome = await transaction;
    expect(outcome.ok).toBe(false);
    expect(outcome.ms).toBeLessThan(SETTLES_WITHIN_MS);
    expect(isDatabaseUnavailable(outcome.error)).toBe(true);
    expect(await db.selectFrom("items").selectAll().execute()).toEqual([]);
    expect(uncaught).toEqual([]);
  });

  it("rejects a statement given to a transaction whose connection closed, short or over 1 KB, as a lost connection, with nothing thrown uncaught", async () => {
    // postgres.js itself (the driver stops a transaction's statements once it learns of the loss; postgres.js
    // rolls back on its own too): unpatched, a statement written to the closed socket threw
    // `TypeError: null is not an object (evaluating 'socket.write')`, to the statement (over 1 KB) or uncaught
    // from a timer (shorter), which a gateway answered 500 while PostgreSQL restarted (porsager/postgres#1208).
    for (const size of [10, 4000]) {
      let closed!: () => void;
      const connectionClosed = new Promise<void>((resolve) => (closed = resolve));
      const pool = postgres(url, { max: 1, onnotice: () => {}, onclose: () => closed() });
      let statement: Awaited<ReturnType<typeof settle>> | undefined;
      const transaction = await settle(
        pool.begin(async (tx) => {
          const [row] = await tx<{ pid: number }[]>`select pg_backend_pid() as pid`;
          await admin`select pg_terminate_backend(${row!.pid})`;
          await connectionClosed;
          statement = await settle(tx.unsafe("select $1::text as padding", ["x".repeat(size)]));
        }),
      );
      await Bun.sleep(50); // a write left on a timer would throw now
      await pool.end({ timeout: 1 });
      expect({ size, transaction: transaction.ok, statement: statement?.ok }).toEqual({ size, transaction: false, statement: false });
      expect((statement?.error as { code?: string } | undefined)?.code).toBe("CONNECTION_CLOSED");
      expect(isDatabaseUnavailable(statement?.error)).toBe(true);
      expect(isDatabaseUnavailable(transaction.error)).toBe(true);
    }
    expect(uncaught).toEqual([]);
  });

  it("settles every statement and transaction when all backends are killed under concurrent load", async () => {
    let stop = false;
    const outcomes: { ok: boolean; error?: unknown; ms: number }[] = [];
    const worker = async (i: number) => {
      for (let n = 0; !stop; n++) {
        const outcome =
          n % 2 === 0
            ? await settle(
                db.transaction().execute(async (trx) => {
                  await trx
                    .insertInto("items")
                    .values({ id: i * 10_000 + n, note: "load" })
                    .execute();
                  await sql`select pg_sleep(0.01)`.execute(trx);
                }),
              )
            : await settle(sql`select pg_sleep(0.01)`.execute(db));
        outcomes.push(outcome);
      }
    };
    const workers = Promise.all(Array.from({ length: 8 }, (_, i) => worker(i)));
    await Bun.sleep(200);
    await terminate();
    await Bun.sleep(300);
    await terminate();
    await Bun.sleep(500);
    stop = true;
    await workers;
    const failed = outcomes.filter((o) => !o.ok);
    expect(failed.length).toBeGreaterThan(0);
    for (const o of failed) expect(isDatabaseUnavailable(o.error)).toBe(true);
    expect(Math.max(...outcomes.map((o) => o.ms))).toBeLessThan(SETTLES_WITHIN_MS);
    // Afterwards, everything works again.
    expect((await sql<{ one: number }>`select 1 as one`.execute(db)).rows).toEqual([{ one: 1 }]);
    await db.transaction().execute((trx) => trx.deleteFrom("items").execute());
    expect(uncaught).toEqual([]);
  });

  describe("with the server out of reach (a proxy in front of it)", () => {
    let proxy: TcpProxy;
    let proxied: Kysely<Db>;
    const changes: string[] = [];

    beforeAll(async () => {
      const target = new URL(url);
      proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
      const through = new URL(url);
      through.hostname = "127.0.0.1";
      through.port = String(proxy.port);
      proxied = openPool(through.toString(), 2, new AvailabilityGate({ probeEveryMs: 300, onChange: (state) => changes.push(state) }));
    });

    afterAll(async () => {
      await proxied?.destroy();
      await proxy?.stop();
    });

    it("fails fast while connections are refused or hang, and resumes by itself", async () => {
      expect((await sql<{ one: number }>`select 1 as one`.execute(proxied)).rows).toEqual([{ one: 1 }]);

      // Refused: the proxy stops listening and resets the connections it carried.
      await proxy.refuse();
      const refused = await Promise.all(Array.from({ length: 20 }, () => settle(sql`select 1`.execute(proxied))));
      const refusedTransactions = await Promise.all(
        Array.from({ length: 5 }, () => settle(proxied.transaction().execute((trx) => sql`select 1`.execute(trx)))),
      );
      for (const o of [...refused, ...refusedTransactions]) {
        expect(o.ok).toBe(false);
        expect(isDatabaseUnavailable(o.error)).toBe(true);
        expect(o.ms).toBeLessThan(SETTLES_WITHIN_MS);
      }
      expect(changes).toEqual(["down"]);

      // Hanging: connections are accepted and never answered (a host gone without a reset).
      await proxy.blackhole();
      await Bun.sleep(400);
      const hanging = await Promise.all(Array.from({ length: 10 }, () => settle(sql`select 1`.execute(proxied))));
      for (const o of hanging) {
        expect(o.ok).toBe(false);
        expect(isDatabaseUnavailable(o.error)).toBe(true);
        expect(o.ms).toBeLessThan(SETTLES_WITHIN_MS);
      }

      // Back: the next probe gets through and the gate opens.
      await proxy.forward();
      await waitUntil(async () => (await settle(sql`select 1`.execute(proxied))).ok, {
        what: "a query through the restored proxy",
        timeoutMs: 15_000,
        intervalMs: 100,
      });
      expect(changes).toEqual(["down", "up"]);
      expect((await proxied.transaction().execute((trx) => sql<{ one: number }>`select 1 as one`.execute(trx))).rows).toEqual([{ one: 1 }]);
      expect(uncaught).toEqual([]);
    }, 30_000);
  });
});
