/**
 * Migration 0003: events and their delivery (contract §6). An event and one delivery row per target are
 * written in the same transaction as the state change that caused them; queues carry only delivery ids,
 * and every attempt is kept for the delivery log.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("webhook_endpoints")
    .addColumn("id", sql`text collate "C"`, (c) => c.primaryKey())
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("description", "text")
    // null: every event type; otherwise a JSON array of the types it wants.
    .addColumn("event_types", "jsonb")
    .addColumn("enabled", "boolean", (c) => c.notNull().defaultTo(true))
    .addColumn("disabled_reason", "text")
    // Set at the first failed attempt after a success, cleared by the next success: 5 days of only
    // failures disable the endpoint (contract §6).
    .addColumn("failing_since", "timestamptz")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint("webhook_endpoints_environment_check", sql`environment in ('sandbox', 'live')`)
    .execute();
  await db.schema.createIndex("webhook_endpoints_tenant_idx").on("webhook_endpoints").columns(["tenant_id", "environment", "id desc"]).execute();

  // Signing secrets of an endpoint: the newest signs, an older one keeps signing until expires_at (24 h
  // after a rotation).
  await db.schema
    .createTable("webhook_endpoint_secrets")
    .addColumn("id", sql`text collate "C"`, (c) => c.primaryKey())
    .addColumn("endpoint_id", "text", (c) => c.notNull().references("webhook_endpoints.id").onDelete("cascade"))
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("sealed_secret", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz")
    .execute();
  await db.schema.createIndex("webhook_endpoint_secrets_endpoint_idx").on("webhook_endpoint_secrets").columns(["endpoint_id", "created_at desc"]).execute();

  await db.schema
    .createTable("events")
    .addColumn("id", sql`text collate "C"`, (c) => c.primaryKey())
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("data", "jsonb", (c) => c.notNull())
    // The payment the event is about, when there is one (GET /payments/{id}/deliveries).
    .addColumn("payment_id", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint("events_environment_check", sql`environment in ('sandbox', 'live')`)
    .execute();
  await db.schema.createIndex("events_tenant_idx").on("events").columns(["tenant_id", "environment", "id desc"]).execute();
  await db.schema.createIndex("events_tenant_type_idx").on("events").columns(["tenant_id", "environment", "type", "id desc"]).execute();
  await db.schema.createIndex("events_payment_idx").on("events").column("payment_id").where(sql.ref("payment_id"), "is not", null).execute();

  await db.schema
    .createTable("deliveries")
    .addColumn("id", sql`text collate "C"`, (c) => c.primaryKey())
    .addColumn("event_id", "text", (c) => c.notNull().references("events.id"))
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("environment", "text", (c) => c.notNull())
    // A tenant endpoint, or a direct target (a direct payment's callback_url, signed with the tenant's
    // callback secret). An endpoint deleted later leaves both null: its pending deliveries then fail.
    .addColumn("endpoint_id", "text", (c) => c.references("webhook_endpoints.id").onDelete("set null"))
    .addColumn("target_url", "text")
    .addColumn("state", "text", (c) => c.notNull().defaultTo("pending"))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    // A worker's lease: one worker at a time attempts a delivery; a crashed worker's lease runs out.
    .addColumn("locked_until", "timestamptz")
    .addColumn("last_status", "integer")
    .addColumn("last_error", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("delivered_at", "timestamptz")
    .addCheckConstraint("deliveries_state_check", sql`state in ('pending', 'succeeded', 'failed')`)
    .execute();
  // One delivery of an event per endpoint: a replay makes a new event-less attempt on the same row.
  await db.schema
    .createIndex("deliveries_event_endpoint_key")
    .on("deliveries")
    .columns(["event_id", "endpoint_id"])
    .unique()
    .where(sql.ref("endpoint_id"), "is not", null)
    .execute();
  // The sweeper: due pending deliveries.
  await db.schema.createIndex("deliveries_due_idx").on("deliveries").columns(["next_attempt_at"]).where(sql.ref("state"), "=", "pending").execute();
  await db.schema.createIndex("deliveries_endpoint_idx").on("deliveries").columns(["endpoint_id", "id desc"]).execute();
  await db.schema.createIndex("deliveries_event_idx").on("deliveries").column("event_id").execute();

  await db.schema
    .createTable("delivery_attempts")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("delivery_id", "text", (c) => c.notNull().references("deliveries.id"))
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("attempted_at", "timestamptz", (c) => c.notNull())
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("status", "integer")
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addColumn("error", "text")
    // The first 2 KiB of the answer.
    .addColumn("response_body", "text")
    .execute();
  await db.schema.createIndex("delivery_attempts_delivery_idx").on("delivery_attempts").columns(["delivery_id", "attempt"]).execute();
}

async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["delivery_attempts", "deliveries", "events", "webhook_endpoint_secrets", "webhook_endpoints"]) {
    await db.schema.dropTable(table).execute();
  }
}

export const eventsWebhooksMigration: Migration = { up, down };
