/**
 * Migration 0024: payment links (issue 31 points 1 and 2).
 *
 * - `payment_links`: a link a merchant shares (URL, QR code, SMS and WhatsApp texts) that any customer pays
 *   from a phone on the gateway's pay page (`/pay/{id}`). Its amount is fixed, or chosen by the customer
 *   between bounds; it is single-use or reusable, may expire, and names the wallets and countries it takes.
 *   `paid_count` is raised in the transaction that moves one of its payments to `succeeded` (with the
 *   `payment_link.paid` event), so a single-use link is used from that commit on.
 * - `payments.payment_link_id`: a link's payment is a normal payment of the tenant (`POST /payments`'s service)
 *   with the link it was paid through recorded; the link's detail lists them through a partial index.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("payment_links")
    .addColumn("id", "text", (col) => col.primaryKey())
    .addColumn("tenant_id", "text", (col) => col.notNull().references("tenants.id"))
    .addColumn("environment", "text", (col) => col.notNull())
    .addColumn("amount", "int8")
    .addColumn("amount_min", "int8")
    .addColumn("amount_max", "int8")
    .addColumn("currency", "text", (col) => col.notNull())
    .addColumn("description", "text", (col) => col.notNull())
    .addColumn("reusable", "boolean", (col) => col.notNull())
    .addColumn("expires_at", "timestamptz")
    .addColumn("wallets", "jsonb")
    .addColumn("countries", "jsonb")
    .addColumn("metadata", "jsonb")
    .addColumn("merchant_reference", "text")
    .addColumn("return_url", "text")
    .addColumn("active", "boolean", (col) => col.notNull().defaultTo(true))
    .addColumn("deactivated_at", "timestamptz")
    .addColumn("paid_count", "integer", (col) => col.notNull().defaultTo(0))
    .addColumn("last_paid_at", "timestamptz")
    .addColumn("created_at", "timestamptz", (col) => col.notNull())
    .addColumn("updated_at", "timestamptz", (col) => col.notNull())
    .addCheckConstraint("payment_links_amount_check", sql`(amount is not null) <> (amount_min is not null and amount_max is not null)`)
    .execute();
  await db.schema.createIndex("payment_links_tenant_idx").on("payment_links").columns(["tenant_id", "environment", "id"]).execute();
  await db.schema.alterTable("payments").addColumn("payment_link_id", "text").execute();
  await sql`create index payments_payment_link_idx on payments (payment_link_id, id) where payment_link_id is not null`.execute(db);
}

async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index payments_payment_link_idx`.execute(db);
  await db.schema.alterTable("payments").dropColumn("payment_link_id").execute();
  await db.schema.dropTable("payment_links").execute();
}

export const paymentLinksMigration: Migration = { up, down };
