/**
 * Migration 0028: a settled payment is read again from its provider on a schedule of its own, when its
 * provider can give a payment back outside the gateway (provider A: a refund on its dashboard). A refund
 * made there whose notification never arrived (the API node down through all of the provider's tries) was
 * never learnt: the payment stayed `succeeded` and the ledger kept money the provider no longer held.
 *
 * `payments.reread_at` is when the next such read is due (null: none; `direct-payments/settled-rereads.ts`
 * sets and advances it). The partial index keeps the sweeper's look-up of due payments to the few that have
 * one. Provider A's payments settled in the last 30 days get a read at once.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("payments").addColumn("reread_at", "timestamptz").execute();
  await db.schema.createIndex("payments_reread_due").on("payments").column("reread_at").where(sql.ref("reread_at"), "is not", null).execute();
  await sql`update payments set reread_at = now()
    where provider = 'providerA' and state = 'succeeded' and completed_at > now() - interval '30 days'`.execute(db);
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("payments_reread_due").execute();
  await db.schema.alterTable("payments").dropColumn("reread_at").execute();
}

export const settledRereadsMigration: Migration = { up, down };
