/**
 * Migration 0007:
 * - provider B's receipt on the payment (issue 6, contract §5): `receipt_url`, `receipt_identifier` and
 *   `provider_reference` as provider B confirmed them (the customer and payment method as confirmed go to
 *   the existing `customer` and `payment_method`);
 * - the operator's list of payments still pending after the 24 h sync window (contract §8): a partial
 *   index on pending payments by creation time, so the list and the gauge never scan settled rows.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("payments")
    .addColumn("receipt_url", "text")
    .addColumn("receipt_identifier", "text")
    .addColumn("provider_reference", "text")
    .execute();
  await db.schema
    .createIndex("payments_pending_created_idx")
    .on("payments")
    .columns(["created_at", "id"])
    .where(sql<boolean>`state = ${sql.lit("pending")}`)
    .execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("payments_pending_created_idx").execute();
  await db.schema.alterTable("payments").dropColumn("receipt_url").dropColumn("receipt_identifier").dropColumn("provider_reference").execute();
}

/** Provider B receipts on payments; the stuck-pending index. */
export const receiptsStuckMigration: Migration = { up, down };
