/**
 * Migration 0033: a payout or refund carries the `Idempotency-Key` it was asked with (issue 28 point 4, the
 * idempotency window).
 *
 * `payouts.idempotency_key`, unique per (tenant, environment, key) among payouts and per (tenant, environment,
 * payment, key) among a payment's refunds — the scopes of `POST /payouts` and `POST /payments/{id}/refunds`.
 * The row, committed with its ledger reservation before any provider is called, is then the one record of
 * that request: a retry with the same key finds it and answers it, whatever happened to the key's stored
 * answer (the process killed between the commit and storing its answer, the key's lock run out or taken over).
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("payouts").addColumn("idempotency_key", "text").execute();
  await db.schema
    .createIndex("payouts_payout_idempotency_key")
    .on("payouts")
    .columns(["tenant_id", "environment", "idempotency_key"])
    .unique()
    .where(sql<boolean>`purpose = 'payout' and idempotency_key is not null`)
    .execute();
  await db.schema
    .createIndex("payouts_refund_idempotency_key")
    .on("payouts")
    .columns(["tenant_id", "environment", "payment_id", "idempotency_key"])
    .unique()
    .where(sql<boolean>`purpose = 'refund' and idempotency_key is not null`)
    .execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("payouts_refund_idempotency_key").execute();
  await db.schema.dropIndex("payouts_payout_idempotency_key").execute();
  await db.schema.alterTable("payouts").dropColumn("idempotency_key").execute();
}

export const moneyOutIdempotencyMigration: Migration = { up, down };
