/**
 * Migration 0008: provider B permits and their charges (issue 7, contract §5).
 *
 * - `permits`: a customer's standing authorisation at provider B, with the credential version it was made
 *   with (its IPNs are verified, its confirms and charges made, with that version). States only move
 *   forward: `pending` → `active` → `revoked` | `expired`; `pending` → `declined` | `revoked` | `expired`.
 * - `permit_charges`: one row per charge, written (with its `pending` payment of kind `permit_charge`) before
 *   provider B is called; the charge id is the provider call's idempotency key, so a retry after a crash
 *   never charges twice. Renewals are unique per `(schedule_id, period, attempt)`; the foreign key on
 *   `schedule_id` comes with migration 0009.
 * - `ipn_messages.permit_id`: a permit IPN (`data[permit][token]`) is stored against its permit, once per
 *   body, like a checkout IPN against its payment.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("permits")
    .addColumn("id", sql`text collate "C"`, (c) => c.primaryKey())
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("environment", "text", (c) => c.notNull())
    // Provider B's permit token.
    .addColumn("token", "text", (c) => c.notNull())
    // The tenant's credential set (its `provider_credentials.id`) and version the permit was made with.
    .addColumn("provider_account", "text", (c) => c.notNull())
    .addColumn("credential_version", "integer", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull().defaultTo("pending"))
    .addColumn("customer", "jsonb", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull())
    .addColumn("max_amount", "int8", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("return_url", "text", (c) => c.notNull())
    .addColumn("cancel_url", "text", (c) => c.notNull())
    .addColumn("custom_data", "jsonb")
    .addColumn("authorization_url", "text", (c) => c.notNull())
    .addColumn("payment_method", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("activated_at", "timestamptz")
    // When it became declined, revoked or expired.
    .addColumn("ended_at", "timestamptz")
    .addCheckConstraint("permits_environment_check", sql`environment in ('sandbox', 'live')`)
    .addCheckConstraint("permits_status_check", sql`status in ('pending', 'active', 'declined', 'revoked', 'expired')`)
    .addCheckConstraint("permits_max_amount_check", sql`max_amount >= 1`)
    .addCheckConstraint("permits_currency_check", sql`currency in ('XOF', 'GNF')`)
    .addCheckConstraint("permits_credential_version_check", sql`credential_version > 0`)
    .addUniqueConstraint("permits_environment_token_key", ["environment", "token"])
    .execute();
  await db.schema.createIndex("permits_tenant_list_idx").on("permits").columns(["tenant_id", "environment", "id desc"]).execute();
  await db.schema.createIndex("permits_tenant_status_idx").on("permits").columns(["tenant_id", "environment", "status", "id desc"]).execute();
  // The provider B sweep looks for pending permits younger than a day whose sync chain is missing.
  await db.schema.createIndex("permits_pending_idx").on("permits").columns(["created_at", "id"]).where(sql<boolean>`status = 'pending'`).execute();

  await db.schema
    .createTable("permit_charges")
    .addColumn("id", sql`text collate "C"`, (c) => c.primaryKey())
    .addColumn("permit_id", "text", (c) => c.notNull().references("permits.id"))
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("payment_id", "text", (c) => c.notNull().unique().references("payments.id"))
    .addColumn("amount", "int8", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull())
    .addColumn("custom_data", "jsonb")
    .addColumn("status", "text", (c) => c.notNull().defaultTo("pending"))
    // Null until provider B answered the charge call (any answer: completed, failed, pending or a refusal).
    .addColumn("provider_answered_at", "timestamptz")
    // The charge's invoice at provider B (also the payment's provider_transaction_id).
    .addColumn("invoice_token", "text")
    .addColumn("fail_reason", "text")
    .addColumn("schedule_id", "text")
    // The renewal's due day, `YYYY-MM-DD`.
    .addColumn("period", "text")
    .addColumn("attempt", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("settled_at", "timestamptz")
    .addCheckConstraint("permit_charges_environment_check", sql`environment in ('sandbox', 'live')`)
    .addCheckConstraint("permit_charges_status_check", sql`status in ('pending', 'succeeded', 'failed')`)
    .addCheckConstraint("permit_charges_amount_check", sql`amount >= 1`)
    .addCheckConstraint("permit_charges_attempt_check", sql`attempt >= 0`)
    .addCheckConstraint("permit_charges_renewal_check", sql`(schedule_id is null) = (period is null)`)
    .execute();
  await db.schema
    .createIndex("permit_charges_renewal_key")
    .on("permit_charges")
    .columns(["schedule_id", "period", "attempt"])
    .unique()
    .where(sql.ref("schedule_id"), "is not", null)
    .execute();
  await db.schema.createIndex("permit_charges_permit_idx").on("permit_charges").columns(["permit_id", "id desc"]).execute();
  // The providerB-sync sweeper clause: pending charges by age.
  await db.schema
    .createIndex("permit_charges_pending_idx")
    .on("permit_charges")
    .columns(["created_at", "id"])
    .where(sql.ref("status"), "=", "pending")
    .execute();

  await db.schema
    .alterTable("ipn_messages")
    .addColumn("permit_id", "text", (c) => c.references("permits.id"))
    .execute();
  await db.schema
    .createIndex("ipn_messages_permit_dedupe_key")
    .on("ipn_messages")
    .columns(["permit_id", "body_digest"])
    .unique()
    .where(sql.ref("permit_id"), "is not", null)
    .execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("ipn_messages_permit_dedupe_key").execute();
  await db.schema.dropIndex("permits_pending_idx").execute();
  await db.schema.alterTable("ipn_messages").dropColumn("permit_id").execute();
  await db.schema.dropTable("permit_charges").execute();
  await db.schema.dropTable("permits").execute();
}

/** Provider B permits, their charges, and permit IPNs. */
export const permitsMigration: Migration = { up, down };
