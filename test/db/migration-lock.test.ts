/**
 * The migration lock through PgBouncer in transaction mode (`bun scripts/with-pgbouncer.ts …`): a start's
 * migrations leave no lock behind. Kysely's migrator took a session-level advisory lock in a statement of its
 * own and released it in another; through the pooler each ran on whichever server it was given, so the unlock
 * missed and the lock stayed held by that server session for good — every later start (and `passerelle audit`,
 * which opens the gateway) then waited on it until the statement timeout (the fleet campaign's audit,
 * docs/reliability.md). The lock is now the migrations' transaction's (`pg_advisory_xact_lock`). Runs on any
 * PostgreSQL; skipped without `DATABASE_URL`.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { sql } from "kysely";
import type { DatabaseHandle } from "../../src/db/database-handle.ts";
import { migrateToLatest } from "../../src/db/migrate.ts";
import { migrations } from "../../src/db/migrations/index.ts";
import { openPostgres } from "../../src/db/open-postgres.ts";
import { createScratchDatabase, type ScratchDatabase } from "../support/db.ts";

const DATABASE_URL = process.env.DATABASE_URL;
const HOOK_TIMEOUT = 30_000;

describe.skipIf(!DATABASE_URL)("the migration lock (PostgreSQL)", () => {
  let scratch: ScratchDatabase;
  let handles: DatabaseHandle[] = [];

  beforeAll(async () => {
    scratch = await createScratchDatabase(DATABASE_URL!);
  }, HOOK_TIMEOUT);

  afterAll(async () => {
    for (const handle of handles) await handle.close();
    await scratch?.drop();
  }, HOOK_TIMEOUT);

  async function advisoryLocksHeld(): Promise<number> {
    const [row] = await scratch.admin<{ count: number }[]>`
      select count(*)::int as count from pg_locks l join pg_database d on d.oid = l.database
      where l.locktype = 'advisory' and l.granted and d.datname = ${scratch.name}`;
    return row!.count;
  }

  it("is released after each start's migrations while other clients keep the servers busy", async () => {
    // Several starts at once, as a fleet's nodes do, while other statements take the servers a pooler frees.
    handles = await Promise.all(Array.from({ length: 4 }, () => openPostgres(scratch.url, 2)));
    const busy = await openPostgres(scratch.url, 4);
    handles.push(busy);
    let stop = false;
    const load = Promise.all(
      Array.from({ length: 4 }, async () => {
        while (!stop) await sql`select pg_sleep(0.002)`.execute(busy.db);
      }),
    );
    try {
      const first = await Promise.all(handles.slice(0, 4).map((handle) => migrateToLatest(handle.db)));
      // One start applied them all; the others found nothing left to apply.
      expect(first.map((r) => r.applied.length).sort((x, y) => y - x)).toEqual([Object.keys(migrations).length, 0, 0, 0]);
      for (let round = 0; round < 5; round++) {
        const again = await Promise.all(handles.slice(0, 4).map((handle) => migrateToLatest(handle.db)));
        expect(again.map((r) => r.applied)).toEqual([[], [], [], []]);
      }
    } finally {
      stop = true;
      await load;
    }
    expect(await advisoryLocksHeld()).toBe(0);
  }, 60_000);
});
