/**
 * Migration 0034: a payment carries the `Idempotency-Key` it was made with (issue 28, the idempotency window,
 * for money in: `POST /payments`, `POST /providerA/direct-payment`, the pay page's payment, `POST /providerB/checkout`).
 *
 * `payments.idempotency_key` and `payments.idempotency_path` — the key and the concrete path it was sent to,
 * the scope the idempotency layer gives it (contract §9: tenant, environment, method and path; every one of
 * these is a POST) — unique per (tenant, environment, path, key) where set; `payments.idempotency_hash`, the
 * request's hash, so that the same key with another body is refused (422) even once the layer's row is gone.
 * The row is then the one record of that request: a retry with the same key finds it and answers it, whatever
 * happened to the key's stored answer (the process killed after the row committed, the key's lock run out or
 * taken over, a 5xx after the commit that freed the key). One payment is one row whatever its attempts
 * (failover, rescue tries): the key is the payment's, not an attempt's.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("payments")
    .addColumn("idempotency_key", "text")
    .addColumn("idempotency_path", "text")
    .addColumn("idempotency_hash", "text")
    .execute();
  await db.schema
    .createIndex("payments_idempotency_key")
    .on("payments")
    .columns(["tenant_id", "environment", "idempotency_path", "idempotency_key"])
    .unique()
    .where(sql.ref("idempotency_key"), "is not", null)
    .execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex("payments_idempotency_key").execute();
  await db.schema.alterTable("payments").dropColumn("idempotency_hash").dropColumn("idempotency_path").dropColumn("idempotency_key").execute();
}

export const paymentIdempotencyMigration: Migration = { up, down };
