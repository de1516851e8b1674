/**
 * Migration 0017: `routing_versions`, one counter per tenant, raised in the transaction of every change to what
 * a `POST /payments` decides its routes from — a route list (`PUT /routing`) or a set of provider credentials
 * (stored or deactivated). Each gateway process keeps the tenant's route lists and accounts in memory
 * (`services/routing/route-cache.ts`) with the counter it read them at, and the payment's first statement
 * inserts only while the counter still has that value: a change made through any process is obeyed by the
 * next payment everywhere, with no extra round trip. No row: 0.
 *
 * @module
 */
import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("routing_versions")
    .addColumn("tenant_id", "text", (c) => c.primaryKey().references("tenants.id"))
    .addColumn("version", "bigint", (c) => c.notNull())
    .execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("routing_versions").execute();
}

export const routingVersionsMigration: Migration = { up, down };
