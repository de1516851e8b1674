/**
 * Migration 0012: routing with failover (issue 16).
 *
 * - `routing_rules`: a tenant's route list for one operator in one country and environment (the providers to
 *   try, in order); without a row, every provider that serves the operator, in the gateway's order.
 * - `payment_attempts`: each provider a payment was tried on, in order, with the outcome of the attempt and
 *   the provider's ids; a payment's own `provider` is its last attempt's.
 * - `route_outcomes`: per environment, provider × operator × country and minute, how many payments ended paid and how many
 *   failed (refused attempts included): the sliding window every process reads (`services/routing`). A
 *   trigger counts a payment's end in the transaction that moves it, whichever path moves it.
 * - `payments.operator` (the routing vocabulary, set by `POST /payments`) and `payments.next_action` (what
 *   the customer must do: none, enter a code, open a URL).
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("routing_rules")
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("operator", "text", (c) => c.notNull())
    .addColumn("country", "text", (c) => c.notNull())
    .addColumn("providers", "jsonb", (c) => c.notNull())
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("routing_rules_pkey", ["tenant_id", "environment", "operator", "country"])
    .addCheckConstraint("routing_rules_environment_check", sql`environment in ('sandbox', 'live')`)
    .execute();

  await db.schema
    .createTable("payment_attempts")
    .addColumn("payment_id", "text", (c) => c.notNull().references("payments.id"))
    .addColumn("attempt", "integer", (c) => c.notNull())
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("provider_account", "text", (c) => c.notNull())
    .addColumn("credential_version", "integer")
    // started (the provider took it), refused, unreachable, circuit_open, unknown (no answer after sending), failed.
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("provider_transaction_id", "text")
    .addColumn("error", "text")
    // Why this provider was tried: the route list's order, the success rates, the exploration share, a failover.
    .addColumn("reason", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("ended_at", "timestamptz")
    .addPrimaryKeyConstraint("payment_attempts_pkey", ["payment_id", "attempt"])
    .execute();
  await db.schema
    .createIndex("payment_attempts_provider_id_idx")
    .on("payment_attempts")
    .columns(["provider", "provider_transaction_id"])
    .where(sql<boolean>`provider_transaction_id is not null`)
    .execute();

  await db.schema
    .createTable("route_outcomes")
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("operator", "text", (c) => c.notNull())
    .addColumn("country", "text", (c) => c.notNull())
    .addColumn("minute", "timestamptz", (c) => c.notNull())
    .addColumn("succeeded", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("failed", "integer", (c) => c.notNull().defaultTo(0))
    .addPrimaryKeyConstraint("route_outcomes_pkey", ["environment", "provider", "operator", "country", "minute"])
    .execute();

  await db.schema.alterTable("payments").addColumn("operator", "text").execute();
  await db.schema.alterTable("payments").addColumn("next_action", "jsonb").execute();

  // A routed payment's end counts for its route (its last attempt's provider), in the transaction that moves it.
  await sql`
    create function route_outcome_of_payment() returns trigger language plpgsql as $$
    begin
      insert into route_outcomes (environment, provider, operator, country, minute, succeeded, failed)
      values (new.environment, new.provider, new.operator, coalesce(new.customer->>'country', ''), date_trunc('minute', new.updated_at),
              case when new.state = 'succeeded' then 1 else 0 end, case when new.state = 'succeeded' then 0 else 1 end)
      on conflict (environment, provider, operator, country, minute) do update
        set succeeded = route_outcomes.succeeded + excluded.succeeded, failed = route_outcomes.failed + excluded.failed;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger payments_route_outcome after update of state on payments for each row
    when (new.operator is not null and old.state = 'pending' and new.state in ('succeeded', 'failed'))
    execute function route_outcome_of_payment()`.execute(db);
}

async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger payments_route_outcome on payments`.execute(db);
  await sql`drop function route_outcome_of_payment()`.execute(db);
  await db.schema.alterTable("payments").dropColumn("next_action").execute();
  await db.schema.alterTable("payments").dropColumn("operator").execute();
  await db.schema.dropTable("route_outcomes").execute();
  await db.schema.dropTable("payment_attempts").execute();
  await db.schema.dropTable("routing_rules").execute();
}

export const routingMigration: Migration = { up, down };
