/**
 * Migration 0001: tenants, API keys, tenant secrets, provider credentials, idempotency keys.
 *
 * Runs unchanged on PostgreSQL 15 (postgres.js) and PGlite (PostgreSQL 18): only portable
 * DDL (no `NULLS NOT DISTINCT`, no generated columns beyond defaults).
 * Migrations take `Kysely<any>` on purpose: they must keep compiling when `schema.ts` moves on.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

const ENVIRONMENT_CHECK = sql`environment in ('sandbox', 'live')`;

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("tenants")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("name", "text", (c) => c.notNull())
    .addColumn("store_name", "text", (c) => c.notNull())
    .addColumn("disabled", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("live_enabled", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("rate_limit", "jsonb")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable("api_keys")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("name", "text")
    .addColumn("prefix", "text", (c) => c.notNull())
    .addColumn("secret_hash", "text", (c) => c.notNull().unique())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("revoked_at", "timestamptz")
    .addColumn("last_used_at", "timestamptz")
    .addCheckConstraint("api_keys_environment_check", ENVIRONMENT_CHECK)
    .execute();
  await db.schema.createIndex("api_keys_tenant_idx").on("api_keys").columns(["tenant_id", "environment", "created_at"]).execute();

  await db.schema
    .createTable("tenant_secrets")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("sealed_secret", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz")
    .execute();
  await db.schema.createIndex("tenant_secrets_tenant_kind_idx").on("tenant_secrets").columns(["tenant_id", "kind"]).execute();

  await db.schema
    .createTable("provider_credentials")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("version", "integer", (c) => c.notNull())
    .addColumn("active", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("sealed", "jsonb", (c) => c.notNull())
    .addColumn("masked", "jsonb", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("deactivated_at", "timestamptz")
    .addCheckConstraint("provider_credentials_provider_check", sql`provider in ('providerA', 'providerB')`)
    .addCheckConstraint("provider_credentials_environment_check", ENVIRONMENT_CHECK)
    .addCheckConstraint("provider_credentials_version_check", sql`version > 0`)
    .addCheckConstraint("provider_credentials_active_check", sql`not active or deactivated_at is null`)
    .addUniqueConstraint("provider_credentials_version_key", ["tenant_id", "provider", "environment", "version"])
    .execute();
  // At most one active set per (tenant, provider, environment); old versions stay, inactive.
  await db.schema
    .createIndex("provider_credentials_one_active_idx")
    .on("provider_credentials")
    .columns(["tenant_id", "provider", "environment"])
    .unique()
    .where(sql.ref("active"), "=", true)
    .execute();

  await db.schema
    .createTable("idempotency_keys")
    .addColumn("tenant_id", "text", (c) => c.notNull())
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("method", "text", (c) => c.notNull())
    .addColumn("path", "text", (c) => c.notNull())
    .addColumn("key", "text", (c) => c.notNull())
    .addColumn("request_hash", "text", (c) => c.notNull())
    .addColumn("state", "text", (c) => c.notNull())
    .addColumn("locked_until", "timestamptz", (c) => c.notNull())
    .addColumn("response_status", "integer")
    .addColumn("response_body", "jsonb")
    .addColumn("response_headers", "jsonb")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("idempotency_keys_pkey", ["tenant_id", "environment", "method", "path", "key"])
    .addCheckConstraint("idempotency_keys_environment_check", ENVIRONMENT_CHECK)
    .addCheckConstraint("idempotency_keys_state_check", sql`state in ('in_flight', 'done')`)
    .addCheckConstraint("idempotency_keys_key_check", sql`char_length(key) between 1 and 255`)
    .execute();
  // The purge job deletes expired rows.
  await db.schema.createIndex("idempotency_keys_expires_at_idx").on("idempotency_keys").column("expires_at").execute();
}

async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["idempotency_keys", "provider_credentials", "tenant_secrets", "api_keys", "tenants"]) {
    await db.schema.dropTable(table).execute();
  }
}

/** The first migration: the tables every other part of the gateway starts from. */
export const initialMigration: Migration = { up, down };
