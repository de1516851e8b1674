/**
 * Migration 0006: provider B's IPNs (contract §5). A verified IPN is stored — without its hash — before it
 * is answered, and processed by the `ipn` job; the sweeper re-enqueues the unprocessed ones. An IPN whose
 * token matches no checkout yet is kept as an orphan (capped, expiring after 7 days) with a digest of its
 * hash, and re-matched when the checkout appears.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("ipn_messages")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("provider", "text", (c) => c.notNull().defaultTo("providerB"))
    // `checkout` (data[invoice][token]) or `permit` (data[permit][token]).
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("token", "text", (c) => c.notNull())
    // Null for an orphan, until re-matched.
    .addColumn("payment_id", "text", (c) => c.references("payments.id"))
    .addColumn("tenant_id", "text", (c) => c.references("tenants.id"))
    .addColumn("environment", "text")
    // The IPN's data without `hash`.
    .addColumn("body", "jsonb", (c) => c.notNull())
    // SHA-256 of the body as received: the same IPN sent again is stored once.
    .addColumn("body_digest", "text", (c) => c.notNull())
    // Orphans only: SHA-256 of the IPN's hash, to check it against the checkout's master key later.
    .addColumn("hash_digest", "text")
    // received → processed | rejected; orphan → received (re-matched) or deleted when expired.
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("last_error", "text")
    .addColumn("received_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("processed_at", "timestamptz")
    .addColumn("expires_at", "timestamptz")
    .addCheckConstraint("ipn_messages_subject_check", sql`subject in ('checkout', 'permit')`)
    .addCheckConstraint("ipn_messages_state_check", sql`state in ('orphan', 'received', 'processed', 'rejected')`)
    .addCheckConstraint("ipn_messages_environment_check", sql`environment is null or environment in ('sandbox', 'live')`)
    .execute();
  await db.schema
    .createIndex("ipn_messages_dedupe_key")
    .on("ipn_messages")
    .columns(["payment_id", "body_digest"])
    .unique()
    .where(sql.ref("payment_id"), "is not", null)
    .execute();
  await db.schema.createIndex("ipn_messages_received_idx").on("ipn_messages").columns(["received_at", "id"]).where(sql.ref("state"), "=", "received").execute();
  await db.schema.createIndex("ipn_messages_orphan_idx").on("ipn_messages").columns(["token"]).where(sql.ref("state"), "=", "orphan").execute();
  await db.schema.createIndex("ipn_messages_payment_idx").on("ipn_messages").column("payment_id").where(sql.ref("payment_id"), "is not", null).execute();

  // The sync job and the sweeper look for pending provider B checkouts.
  await db.schema
    .createIndex("payments_pending_checkout_idx")
    .on("payments")
    .columns(["created_at", "id"])
    .where(sql<boolean>`provider = 'providerB' and kind = 'checkout' and state = 'pending'`)
    .execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("payments_pending_checkout_idx").execute();
  await db.schema.dropTable("ipn_messages").execute();
}

/** Stored provider B IPNs and orphans. */
export const providerBMigration: Migration = { up, down };
