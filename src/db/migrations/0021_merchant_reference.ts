/**
 * Migration 0021: the merchant's own reference of a payment (issue 29 point 5), and searching payments by it,
 * by description and by the customer's name.
 *
 * - `payments.merchant_reference`: what the merchant calls the payment (its order number), given to
 *   `POST /payments` or the checkout as `merchantReference`; found by `GET /payments?merchantReference=` through
 *   a partial index within the tenant and environment. (The contract's `reference` is provider A's.)
 * - A text search (`GET /payments?q=`) on the description and the customer's names is a case-insensitive
 *   substring match within the tenant and environment, read newest first until a page is full; it needs no
 *   index of its own (the tenant's id-ordered index bounds it).
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("payments").addColumn("merchant_reference", "text").execute();
  await sql`create index payments_merchant_reference_idx on payments (tenant_id, environment, merchant_reference) where merchant_reference is not null`.execute(
    db,
  );
}

async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index payments_merchant_reference_idx`.execute(db);
  await db.schema.alterTable("payments").dropColumn("merchant_reference").execute();
}

export const merchantReferenceMigration: Migration = { up, down };
