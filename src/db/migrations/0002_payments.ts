/**
 * Migration 0002: `payments`, one row per payment of every kind (a provider A direct payment, a provider B
 * checkout, a permit charge), scoped by tenant and environment.
 *
 * Portable on PostgreSQL 15 and PGlite (PostgreSQL 18). `id` uses the "C" collation so that the keyset
 * paging of `GET /payments` (`id < cursor order by id desc`) follows the ULIDs' byte order whatever the
 * server's default collation is.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("payments")
    .addColumn("id", sql`text collate "C"`, (c) => c.primaryKey())
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("kind", "text", (c) => c.notNull())
    // `service` (the gateway's own account at that provider) or the tenant's credential set id.
    .addColumn("provider_account", "text", (c) => c.notNull())
    .addColumn("provider_transaction_id", "text")
    .addColumn("reference", "text")
    .addColumn("provider_status", "text")
    .addColumn("state", "text", (c) => c.notNull().defaultTo("pending"))
    .addColumn("amount", "int8", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull())
    .addColumn("customer", "jsonb")
    .addColumn("custom_data", "jsonb")
    .addColumn("payment_method", "text")
    .addColumn("credential_version", "integer")
    .addColumn("callback_url", "text")
    .addColumn("outcome_unknown", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("failure_code", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("completed_at", "timestamptz")
    .addCheckConstraint("payments_environment_check", sql`environment in ('sandbox', 'live')`)
    .addCheckConstraint("payments_provider_check", sql`provider in ('providerA', 'providerB')`)
    .addCheckConstraint("payments_kind_check", sql`kind in ('direct_payment', 'checkout', 'permit_charge')`)
    // Direct payments are provider A's; checkouts and permit charges are provider B's (contract §4, §5).
    .addCheckConstraint("payments_kind_provider_check", sql`(kind = 'direct_payment') = (provider = 'providerA')`)
    .addCheckConstraint("payments_state_check", sql`state in ('pending', 'succeeded', 'failed', 'cancelled', 'refunded')`)
    .addCheckConstraint("payments_amount_check", sql`amount >= 1`)
    .addCheckConstraint("payments_currency_check", sql`currency in ('XOF', 'GNF')`)
    .addCheckConstraint("payments_provider_account_check", sql`char_length(provider_account) > 0`)
    .addCheckConstraint("payments_credential_version_check", sql`credential_version is null or credential_version > 0`)
    .execute();

  // Provider transaction ids are unique per (environment, account), not globally (contract §4): the same
  // provider id may come back from another account or environment, never twice from one.
  await db.schema
    .createIndex("payments_provider_transaction_key")
    .on("payments")
    .columns(["environment", "provider", "provider_account", "provider_transaction_id"])
    .unique()
    .where(sql.ref("provider_transaction_id"), "is not", null)
    .execute();

  // GET /payments: newest first within (tenant, environment), alone or filtered by state or kind. The
  // provider filter needs no index of its own: the kind check above ties each kind to one provider.
  await db.schema.createIndex("payments_tenant_list_idx").on("payments").columns(["tenant_id", "environment", "id desc"]).execute();
  await db.schema.createIndex("payments_tenant_state_idx").on("payments").columns(["tenant_id", "environment", "state", "id desc"]).execute();
  await db.schema.createIndex("payments_tenant_kind_idx").on("payments").columns(["tenant_id", "environment", "kind", "id desc"]).execute();
  // Lookups by provider id (the providerTransactionId filter, an IPN's invoice token before its
  // environment is known) and by provider A reference.
  await db.schema
    .createIndex("payments_provider_transaction_id_idx")
    .on("payments")
    .column("provider_transaction_id")
    .where(sql.ref("provider_transaction_id"), "is not", null)
    .execute();
  await db.schema
    .createIndex("payments_tenant_reference_idx")
    .on("payments")
    .columns(["tenant_id", "environment", "reference"])
    .where(sql.ref("reference"), "is not", null)
    .execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("payments").execute();
}

/** The payments table every payment kind records into. */
export const paymentsMigration: Migration = { up, down };
