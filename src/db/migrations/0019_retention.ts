/**
 * Migration 0019: the retention's pruning (issue 28, `services/retention`) read by index.
 *
 * Each pruning query takes the oldest rows past their retention, a bounded batch at a time, among the rows it
 * may remove: final deliveries by their last change, events and the IPNs already handled by their time, the
 * routing window's minutes. The existing indexes of those tables lead with the tenant, the payment or the
 * state of rows still in play, so without these a batch would read the whole table. Idempotency keys already
 * have theirs (`idempotency_keys_expires_at_idx`, migration 0001).
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex("events_created_idx").on("events").column("created_at").execute();
  await db.schema.createIndex("deliveries_final_updated_idx").on("deliveries").column("updated_at").where(sql.ref("state"), "<>", "pending").execute();
  await db.schema
    .createIndex("ipn_messages_handled_received_idx")
    .on("ipn_messages")
    .column("received_at")
    .where(sql<boolean>`state in ('processed', 'rejected')`)
    .execute();
  await db.schema.createIndex("route_outcomes_minute_idx").on("route_outcomes").column("minute").execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("route_outcomes_minute_idx").execute();
  await db.schema.dropIndex("ipn_messages_handled_received_idx").execute();
  await db.schema.dropIndex("deliveries_final_updated_idx").execute();
  await db.schema.dropIndex("events_created_idx").execute();
}

export const retentionMigration: Migration = { up, down };
