/**
 * Migration 0032: a merchant's permit charge carries the `Idempotency-Key` it was asked with (issue 28, a
 * permit charged twice after a PostgreSQL restart).
 *
 * `permit_charges.idempotency_key`, unique per (tenant, environment, permit, key) where set. The charge row —
 * committed before provider B is called, its id the provider's idempotency key — is then the one record of
 * that request: a retry with the same key finds it and carries it through, whatever happened to the key's
 * stored answer (the process killed between the charge and storing its answer, the key's lock taken over, a
 * 5xx after the charge that freed the key). Renewals stay unique per `(schedule_id, period, attempt)`.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("permit_charges").addColumn("idempotency_key", "text").execute();
  await db.schema
    .createIndex("permit_charges_idempotency_key")
    .on("permit_charges")
    .columns(["tenant_id", "environment", "permit_id", "idempotency_key"])
    .unique()
    .where(sql.ref("idempotency_key"), "is not", null)
    .execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("permit_charges_idempotency_key").execute();
  await db.schema.alterTable("permit_charges").dropColumn("idempotency_key").execute();
}

export const permitChargeIdempotencyMigration: Migration = { up, down };
