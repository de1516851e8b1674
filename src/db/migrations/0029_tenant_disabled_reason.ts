/**
 * Migration 0029: why an operator disabled a tenant (issue 29 point 4: disabling is confirmed with a reason).
 * The reason is the operator's own words; the shop's people read it when they try to sign in (issue 29
 * point 3), and it is cleared when the tenant is enabled again.
 *
 * @module
 */
import type { Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("tenants").addColumn("disabled_reason", "text").execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("tenants").dropColumn("disabled_reason").execute();
}

export const tenantDisabledReasonMigration: Migration = { up, down };
