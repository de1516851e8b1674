/**
 * Migration 0014 re-files a ledger written before it (issue 24 point 1): run at the end of a test file that
 * moved money through the gateway's real paths, it takes the holding column away (0014's `down`), writes it
 * again (`up`), and checks that every entry got back the holding the gateway itself wrote, with every
 * amount — and so every total — unchanged.
 */
import { expect } from "bun:test";
import { sql, type Kysely } from "kysely";
import { ledgerHoldingsMigration } from "../../src/db/migrations/0014_ledger_holdings.ts";
import { ledgerGivenBackMigration } from "../../src/db/migrations/0016_ledger_given_back.ts";
import type { Database } from "../../src/db/schema.ts";

type Entry = { id: string; journal: string; account: string; amount: number; holding: string; tenant_id: string; currency: string };

async function entries(db: Kysely<Database>): Promise<Entry[]> {
  const result = await sql<Entry>`select id::text as id, journal, account, amount, holding, tenant_id, currency from ledger_entries order by id`.execute(db);
  return result.rows.map((row) => ({ ...row, amount: Number(row.amount) }));
}

/** Re-files the ledger as migration 0014 does and expects it to be exactly as the gateway wrote it; answers the holdings seen. */
export async function expectLedgerRefiledAsWritten(db: Kysely<Database>): Promise<Set<string>> {
  const before = await entries(db);
  expect(before.length).toBeGreaterThan(0);
  // 0016 writes the holding too: taken away first, put back last.
  await ledgerGivenBackMigration.down!(db as Kysely<any>);
  await ledgerHoldingsMigration.down!(db as Kysely<any>);
  await ledgerHoldingsMigration.up(db as Kysely<any>);
  await ledgerGivenBackMigration.up(db as Kysely<any>);
  const after = await entries(db);
  expect(after).toEqual(before);
  return new Set(before.map((entry) => `${entry.holding} ${entry.journal.slice(entry.journal.indexOf(".") + 1)}`));
}
