/**
 * The postgres.js Kysely driver (`src/db/postgres-js-driver.ts`): statements outside a
 * transaction are pipelined on the pool; a transaction (and `db.connection()`) keeps one
 * backend from BEGIN to COMMIT/ROLLBACK. PostgreSQL only: skipped without `DATABASE_URL`.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { randomBytes } from "node:crypto";
import { isAbortedTransactionError, Kysely, sql } from "kysely";
import postgres from "postgres";
import { PostgresJsDialect } from "../../src/db/postgres-js-driver.ts";

const DATABASE_URL = process.env.DATABASE_URL;
const HOOK_TIMEOUT = 30_000;

interface Db {
  counters: { id: string; value: number };
  items: { id: number; note: string };
}

/** The pool and a record of which connection each statement was sent on, and when. */
function openPool(url: string, max: number) {
  const sent: { connection: number; statement: string }[] = [];
  const pool = postgres(url, {
    max,
    onnotice: () => {},
    debug: (connection, statement) => {
      sent.push({ connection, statement });
    },
  });
  const db = new Kysely<Db>({ dialect: new PostgresJsDialect({ postgres: pool }) });
  return { db, pool, sent };
}

async function backendPid(db: Kysely<Db>): Promise<number> {
  const { rows } = await sql<{ pid: number }>`select pg_backend_pid() as pid`.execute(db);
  return rows[0]!.pid;
}

describe.skipIf(!DATABASE_URL)("postgres.js driver (PostgreSQL)", () => {
  const name = `passerelle_test_${randomBytes(6).toString("hex")}`;
  let admin: postgres.Sql;
  let url: string;
  let db: Kysely<Db>;
  let sent: { connection: number; statement: string }[];

  /** The backends connected to the test database, except the admin's. */
  async function backends(): Promise<{ pid: number; state: string | null }[]> {
    return admin<{ pid: number; state: string | null }[]>`
      select pid, state from pg_stat_activity where datname = ${name} and pid <> pg_backend_pid()`;
  }

  beforeAll(async () => {
    admin = postgres(DATABASE_URL!, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database "${name}"`);
    const target = new URL(DATABASE_URL!);
    target.pathname = `/${name}`;
    url = target.toString();
    ({ db, sent } = openPool(url, 2));
    await db.schema
      .createTable("counters")
      .addColumn("id", "text", (c) => c.primaryKey())
      .addColumn("value", "integer", (c) => c.notNull())
      .execute();
    await db.schema
      .createTable("items")
      .addColumn("id", "integer", (c) => c.primaryKey())
      .addColumn("note", "text", (c) => c.notNull())
      .execute();
  }, HOOK_TIMEOUT);

  afterAll(async () => {
    await db?.destroy();
    await admin.unsafe(`drop database if exists "${name}" with (force)`);
    await admin.end();
  }, HOOK_TIMEOUT);

  it("binds a plain object as jsonb whatever type the server describes for its parameter, on the pool and in a transaction", async () => {
    // The server describes `$1` of `select $1` as text: left to the describe, an object was bound as `[object Object]`.
    const value = { a: 1, nested: { list: ["x", 2] } };
    const { rows } = await sql<{ value: unknown }>`select ${value} as value`.execute(db);
    expect(rows[0]!.value).toEqual(value);
    const inTransaction = await db.transaction().execute(async (trx) => (await sql<{ value: unknown }>`select ${value} as value`.execute(trx)).rows[0]!.value);
    expect(inTransaction).toEqual(value);
    // Arrays are left to the describe: a PostgreSQL array where the statement says so.
    const { rows: arrays } = await sql<{ n: number }>`select cardinality(${["a", "b"]}::text[]) as n`.execute(db);
    expect(arrays[0]!.n).toBe(2);
  });

  it("pipelines statements outside transactions: 50 concurrent selects on a pool of 2", async () => {
    sent.length = 0;
    let sentBeforeFirstResult = -1;
    const selects = Array.from({ length: 50 }, async (_, i) => {
      const { rows } = await sql<{ pid: number; i: number }>`select pg_backend_pid() as pid, ${i}::int as i, pg_sleep(0.002)`.execute(db);
      if (sentBeforeFirstResult < 0) sentBeforeFirstResult = sent.length;
      return rows[0]!;
    });
    const during = backends();
    const rows = await Promise.all(selects);
    expect(rows.map((r) => r.i)).toEqual(Array.from({ length: 50 }, (_, i) => i));
    expect(new Set(rows.map((r) => r.pid)).size).toBeLessThanOrEqual(2);
    expect((await during).length).toBeLessThanOrEqual(2);
    expect((await backends()).length).toBeLessThanOrEqual(2);
    // Reserving a connection per statement sends at most 2 before the first answer; pipelining sends them all.
    expect(sentBeforeFirstResult).toBeGreaterThan(2);
    expect(new Set(sent.map((s) => s.connection)).size).toBeLessThanOrEqual(2);
  });

  it("runs every statement of a transaction on one backend, and nothing else on it meanwhile", async () => {
    const outside: number[] = [];
    let stop = false;
    const traffic = (async () => {
      while (!stop) outside.push(await backendPid(db));
    })();
    const inside = await db.transaction().execute(async (trx) => {
      const pids = [await backendPid(trx), await backendPid(trx)];
      pids.push(...(await Promise.all(Array.from({ length: 8 }, () => backendPid(trx)))));
      await sql`select pg_sleep(0.05)`.execute(trx);
      pids.push(await backendPid(trx));
      return pids;
    });
    stop = true;
    await traffic;
    expect(new Set(inside).size).toBe(1);
    expect(outside.length).toBeGreaterThan(0);
    expect(outside).not.toContain(inside[0]!);
  });

  it("rolls back when the callback throws, and releases the connection", async () => {
    for (let round = 0; round < 5; round++) {
      const failed = db.transaction().execute(async (trx) => {
        await trx
          .insertInto("items")
          .values({ id: 100 + round, note: "rolled back" })
          .execute();
        throw new Error(`boom ${round}`);
      });
      expect(failed).rejects.toThrow(`boom ${round}`);
      await failed.catch(() => {});
    }
    // A statement error too (duplicate key): rolled back as a whole.
    await db.insertInto("items").values({ id: 1, note: "kept" }).execute();
    const duplicate = db.transaction().execute(async (trx) => {
      await trx.insertInto("items").values({ id: 2, note: "rolled back" }).execute();
      await trx.insertInto("items").values({ id: 1, note: "duplicate" }).execute();
    });
    expect(duplicate).rejects.toMatchObject({ code: "23505" });
    await duplicate.catch(() => {});
    expect(await db.selectFrom("items").select(["id", "note"]).orderBy("id").execute()).toEqual([{ id: 1, note: "kept" }]);
    // Both connections of the pool are usable and none was left inside a transaction.
    const pids = await Promise.all(
      Array.from({ length: 2 }, () =>
        db.transaction().execute(async (trx) => {
          await sql`select pg_sleep(0.02)`.execute(trx);
          return backendPid(trx);
        }),
      ),
    );
    expect(new Set(pids).size).toBe(2);
    expect((await backends()).filter((b) => b.state?.startsWith("idle in transaction"))).toEqual([]);
    await db.deleteFrom("items").execute();
  });

  it("reports a transaction the server rolled back at COMMIT", async () => {
    const aborted = db.transaction().execute(async (trx) => {
      await trx.insertInto("items").values({ id: 10, note: "lost" }).execute();
      await sql`select 1/0`.execute(trx).catch(() => {});
    });
    const error = await aborted.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isAbortedTransactionError(error)).toBe(true);
    expect(await db.selectFrom("items").selectAll().execute()).toEqual([]);
  });

  it("serialises two concurrent transactions on `for update`", async () => {
    await db.insertInto("counters").values({ id: "c", value: 0 }).execute();
    const order: string[] = [];
    let locked!: () => void;
    const firstHoldsLock = new Promise<void>((resolve) => (locked = resolve));
    const bump = (label: string, hold: number) =>
      db.transaction().execute(async (trx) => {
        const row = await trx.selectFrom("counters").select("value").where("id", "=", "c").forUpdate().executeTakeFirstOrThrow();
        order.push(`${label} read ${row.value}`);
        if (label === "first") locked();
        await Bun.sleep(hold);
        await trx
          .updateTable("counters")
          .set({ value: row.value + 1 })
          .where("id", "=", "c")
          .execute();
        order.push(`${label} wrote ${row.value + 1}`);
      });
    const first = bump("first", 150);
    await firstHoldsLock;
    const second = bump("second", 0);
    // Meanwhile statements outside the transactions still get through.
    expect(await backendPid(db)).toBeGreaterThan(0);
    await Promise.all([first, second]);
    expect(order).toEqual(["first read 0", "first wrote 1", "second read 1", "second wrote 2"]);
    expect((await db.selectFrom("counters").select("value").executeTakeFirstOrThrow()).value).toBe(2);
  });

  it("honours the isolation level and access mode Kysely asks for", async () => {
    const show = async (builder: ReturnType<Kysely<Db>["transaction"]>) =>
      builder.execute(async (trx) => {
        const { rows } = await sql<{ level: string; ro: string }>`
          select current_setting('transaction_isolation') as level, current_setting('transaction_read_only') as ro`.execute(trx);
        return rows[0]!;
      });
    expect(await show(db.transaction())).toEqual({ level: "read committed", ro: "off" });
    expect(await show(db.transaction().setIsolationLevel("serializable"))).toEqual({ level: "serializable", ro: "off" });
    expect(await show(db.transaction().setIsolationLevel("repeatable read").setAccessMode("read only"))).toEqual({
      level: "repeatable read",
      ro: "on",
    });
    const write = db
      .transaction()
      .setAccessMode("read only")
      .execute((trx) => trx.insertInto("items").values({ id: 20, note: "no" }).execute());
    expect(write).rejects.toMatchObject({ code: "25006" });
    await write.catch(() => {});
  });

  it("supports savepoints in a controlled transaction", async () => {
    const trx = await db.startTransaction().execute();
    await trx.insertInto("items").values({ id: 30, note: "kept" }).execute();
    const sp = await trx.savepoint("before_second").execute();
    await sp.insertInto("items").values({ id: 31, note: "undone" }).execute();
    const back = await sp.rollbackToSavepoint("before_second").execute();
    await back.commit().execute();
    expect(await db.selectFrom("items").select("id").execute()).toEqual([{ id: 30 }]);
    await db.deleteFrom("items").execute();
  });

  it("keeps `db.connection()` on one backend (session-level advisory locks work)", async () => {
    let stop = false;
    // Enough concurrent traffic that a statement not pinned to the connection lands on either backend.
    const traffic = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (!stop) await sql`select pg_sleep(0.001)`.execute(db);
      }),
    );
    const result = await db.connection().execute(async (conn) => {
      const { rows: lock } = await sql<{ ok: boolean }>`select pg_try_advisory_lock(4242) as ok`.execute(conn);
      const pids: number[] = [];
      for (let i = 0; i < 20; i++) {
        pids.push(await backendPid(conn));
        await Bun.sleep(1);
      }
      const { rows: unlock } = await sql<{ ok: boolean }>`select pg_advisory_unlock(4242) as ok`.execute(conn);
      return { pids, locked: lock[0]!.ok, unlocked: unlock[0]!.ok };
    });
    stop = true;
    await traffic;
    expect(result.locked).toBe(true);
    expect(result.unlocked).toBe(true);
    expect(new Set(result.pids).size).toBe(1);
  });

  it("streams rows through a cursor, on the pool and in a transaction", async () => {
    const loose = db as unknown as Kysely<any>;
    const query = () => loose.selectFrom(sql`generate_series(1, 95)`.as("g")).select(sql<number>`g`.as("n"));
    const seen: number[] = [];
    for await (const row of query().stream(10)) seen.push(row.n);
    expect(seen).toEqual(Array.from({ length: 95 }, (_, i) => i + 1));
    const inTrx = await loose.transaction().execute(async (trx) => {
      let count = 0;
      for await (const _ of trx.selectFrom(sql`generate_series(1, 25)`.as("g")).select(sql<number>`g`.as("n")).stream(7)) count++;
      return count;
    });
    expect(inTrx).toBe(25);
  });

  it("ends the pool when Kysely is destroyed", async () => {
    const other = openPool(url, 1);
    expect(await backendPid(other.db)).toBeGreaterThan(0);
    await other.db.destroy();
    expect(other.pool`select 1`).rejects.toMatchObject({ code: "CONNECTION_ENDED" });
  });
});
