/**
 * Migration 0018: the home screen's overview (issue 29) read by index.
 *
 * `GET /reports/overview` groups a tenant's payments and payouts created since a moment (today, the last 7 or
 * 30 days) in one environment. The existing indexes lead with `(tenant_id, environment)` and then the state,
 * the kind or the id, so such a window read every payment of the tenant; these lead with the creation time
 * after the tenant and environment, so a tenant with a million payments reads only the window's rows. The
 * pending payouts (an item that needs attention, whatever their age) have a small partial index of their own.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex("payments_tenant_created_idx").on("payments").columns(["tenant_id", "environment", "created_at"]).execute();
  await db.schema.createIndex("payouts_tenant_created_idx").on("payouts").columns(["tenant_id", "environment", "created_at"]).execute();
  await db.schema
    .createIndex("payouts_tenant_pending_idx")
    .on("payouts")
    .columns(["tenant_id", "environment", "created_at"])
    .where(sql.ref("state"), "=", "pending")
    .execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("payouts_tenant_pending_idx").execute();
  await db.schema.dropIndex("payouts_tenant_created_idx").execute();
  await db.schema.dropIndex("payments_tenant_created_idx").execute();
}

export const overviewIndexesMigration: Migration = { up, down };
