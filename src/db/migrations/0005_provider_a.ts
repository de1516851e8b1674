/**
 * Migration 0005: what provider A direct payments add to `payments` (contract §4, §8):
 * - `approved_at`: when provider A approved it (the status endpoint's `approvedAt`);
 * - `provider_synced_at`: the last read from provider A, for refresh-on-read's one-second floor (the
 *   claim on it is how concurrent readers, in any process, share one upstream call);
 * - `sync_attempt`, `next_sync_at`: where the `providerA-sync` schedule stands, so the sweeper can tell a
 *   pending payment whose job vanished with Redis and enqueue it again.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("payments")
    .addColumn("approved_at", "timestamptz")
    .addColumn("provider_synced_at", "timestamptz")
    .addColumn("sync_attempt", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_sync_at", "timestamptz")
    .execute();
  // The sweeper's clause: pending direct payments whose next sync is due.
  await db.schema
    .createIndex("payments_provider_a_sync_due_idx")
    .on("payments")
    .columns(["next_sync_at", "id"])
    .where(sql<boolean>`kind = ${sql.lit("direct_payment")} and state = ${sql.lit("pending")} and next_sync_at is not null`)
    .execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("payments_provider_a_sync_due_idx").execute();
  await db.schema
    .alterTable("payments")
    .dropColumn("approved_at")
    .dropColumn("provider_synced_at")
    .dropColumn("sync_attempt")
    .dropColumn("next_sync_at")
    .execute();
}

/** Provider A direct payments: approval time, refresh floor and sync schedule. */
export const providerAMigration: Migration = { up, down };
