/**
 * Migration 0031: the rescue of a stalled push (issue 31 point 3).
 *
 * - `payment_rescues`: one per payment that offered a rescue — its push unanswered for `RESCUE_AFTER`, or failed
 *   for a reason the customer can fix. `id` (`rs_…`, random) is the secret of the rescue URL (`/pay/{id}`), which
 *   shows that one payment and nothing else of the tenant. `offered_for_attempt` is the attempt the offer was made
 *   after: a rescue try is taken only while it is still the payment's last attempt, so one offer makes at most one
 *   attempt, whatever the duplicates or concurrent tries.
 * - `payment_attempts.rescue`, `.operator`, `.payment_method` and `.customer`: a rescue try may be another wallet (and
 *   number): each attempt keeps the wallet it was made with, so the payment can be given back to the attempt a late
 *   approval comes through.
 *
 * @module
 */
import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("payment_rescues")
    .addColumn("id", "text", (col) => col.primaryKey())
    .addColumn("payment_id", "text", (col) => col.notNull().unique().references("payments.id"))
    .addColumn("tenant_id", "text", (col) => col.notNull().references("tenants.id"))
    .addColumn("environment", "text", (col) => col.notNull())
    .addColumn("reason", "text", (col) => col.notNull())
    .addColumn("offered_for_attempt", "integer", (col) => col.notNull())
    .addColumn("offers", "integer", (col) => col.notNull().defaultTo(1))
    .addColumn("tries", "integer", (col) => col.notNull().defaultTo(0))
    .addColumn("created_at", "timestamptz", (col) => col.notNull())
    .addColumn("offered_at", "timestamptz", (col) => col.notNull())
    .execute();
  await db.schema
    .alterTable("payment_attempts")
    .addColumn("rescue", "boolean", (col) => col.notNull().defaultTo(false))
    .addColumn("operator", "text")
    .addColumn("payment_method", "text")
    .addColumn("customer", "jsonb")
    .execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("payment_attempts").dropColumn("customer").dropColumn("payment_method").dropColumn("operator").dropColumn("rescue").execute();
  await db.schema.dropTable("payment_rescues").execute();
}

export const paymentRescuesMigration: Migration = { up, down };
