/**
 * Through PgBouncer in transaction mode (`bun scripts/with-pgbouncer.ts …`), statements queued on one connection of
 * the pool: every one is answered, with its own values. postgres.js sends a statement with parameters as
 * Parse/Describe/Flush (no Sync) and binds its values once the server has described their types; queued behind
 * another statement's Sync, PgBouncer gave the server to another client at that Sync's ReadyForQuery, so the
 * describe was answered to that client — whose jsonb object was then bound as text, `[object Object]` (the fleet
 * campaign's 500, docs/reliability.md) — or to no one, and the statement waited forever. Skipped unless
 * `DATABASE_URL` names a pooler (`?pgbouncer=true`).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { type Generated, type Kysely, sql } from "kysely";
import { openPostgres, throughPooler } from "../../src/db/open-postgres.ts";
import type { DatabaseHandle } from "../../src/db/database-handle.ts";
import { createScratchDatabase, type ScratchDatabase } from "../support/db.ts";

const DATABASE_URL = process.env.DATABASE_URL;
const POOLED = DATABASE_URL !== undefined && throughPooler(DATABASE_URL).pooler;
const HOOK_TIMEOUT = 30_000;

interface Db {
  notes: { id: Generated<number>; body: { writer: string; round: number; tags: string[] }; label: string };
}

describe.skipIf(!POOLED)("statements queued on one connection through PgBouncer", () => {
  let scratch: ScratchDatabase;
  let single: DatabaseHandle;
  let others: DatabaseHandle;

  beforeAll(async () => {
    scratch = await createScratchDatabase(DATABASE_URL!);
    // One connection: every statement issued while another runs is queued on it.
    single = await openPostgres(scratch.url, 1);
    others = await openPostgres(scratch.url, 4);
    await sql`create table notes (id serial primary key, body jsonb not null, label text not null)`.execute(single.db);
  }, HOOK_TIMEOUT);

  afterAll(async () => {
    await single?.close();
    await others?.close();
    await scratch?.drop();
  }, HOOK_TIMEOUT);

  it("answers each, and stores each jsonb value as given, while other clients share the servers", async () => {
    const a = single.db as unknown as Kysely<Db>;
    const b = others.db as unknown as Kysely<Db>;
    const rounds = 150;
    const failures: string[] = [];
    const note = (promise: Promise<unknown>) => promise.catch((error: unknown) => failures.push(String((error as Error).message)));
    for (let round = 0; round < rounds; round++) {
      await Promise.all([
        // On the one connection: a statement without parameters (one Sync), then one with a jsonb parameter
        // queued behind it.
        note(sql`select 1`.execute(a)),
        note(
          a
            .insertInto("notes")
            .values({ body: { writer: "single", round, tags: ["a"] }, label: "single" })
            .execute(),
        ),
        // Other clients, whose statements take the servers PgBouncer frees: a text parameter where the insert
        // has its jsonb one, and the same insert.
        note(sql`select ${"text"}::text as first, ${round}::int as second`.execute(b)),
        note(
          b
            .insertInto("notes")
            .values({ body: { writer: "others", round, tags: ["b"] }, label: "others" })
            .execute(),
        ),
        // A transaction among them: its BEGIN reserves its connection although that connection takes nothing more.
        note(
          b.transaction().execute((trx) =>
            trx
              .insertInto("notes")
              .values({ body: { writer: "transaction", round, tags: ["c"] }, label: "transaction" })
              .execute(),
          ),
        ),
      ]);
    }
    expect(failures).toEqual([]);
    const rows = await a.selectFrom("notes").select(["body", "label"]).orderBy("id").execute();
    expect(rows.length).toBe(rounds * 3);
    for (const writer of ["single", "others", "transaction"]) {
      const bodies = rows.filter((row) => row.label === writer).map((row) => row.body);
      expect(bodies.map((body) => body.round).sort((x, y) => x - y)).toEqual(Array.from({ length: rounds }, (_, i) => i));
      expect(bodies.every((body) => body.writer === writer && body.tags.length === 1)).toBe(true);
    }
  }, 60_000);
});
