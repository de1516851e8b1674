/**
 * Migration 0035: `route_outcomes.slot` (issue 27, point 2). A route's counts of a minute were one row, which
 * every routed payment's end (the trigger of migration 0012) and every refused attempt updated: under load the
 * payments settling at once queued on that row's lock, each until the one before committed, and the row's
 * versions piled up in its page. Each minute of a route is now spread over 16 rows — a payment's end goes to the
 * slot of its id's hash, a refused attempt to a random one — and the window, which already sums a route's rows
 * over its minutes, sums them over the slots too. Existing rows are slot 0.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/** Rows a route's minute is spread over (`route_outcomes.slot` is 0 to SLOTS − 1). */
export const ROUTE_OUTCOME_SLOTS = 16;

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("route_outcomes")
    .addColumn("slot", "smallint", (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`alter table route_outcomes drop constraint route_outcomes_pkey`.execute(db);
  await sql`alter table route_outcomes add constraint route_outcomes_pkey primary key (environment, provider, operator, country, minute, slot)`.execute(db);
  // As 0012's, into the slot of the payment's id (hashtext & 15: 0 to 15 whatever its sign).
  await sql`
    create or replace function route_outcome_of_payment() returns trigger language plpgsql as $$
    begin
      insert into route_outcomes (environment, provider, operator, country, minute, slot, succeeded, failed)
      values (new.environment, new.provider, new.operator, coalesce(new.customer->>'country', ''), date_trunc('minute', new.updated_at),
              hashtext(new.id) & ${sql.raw(String(ROUTE_OUTCOME_SLOTS - 1))},
              case when new.state = 'succeeded' then 1 else 0 end, case when new.state = 'succeeded' then 0 else 1 end)
      on conflict (environment, provider, operator, country, minute, slot) do update
        set succeeded = route_outcomes.succeeded + excluded.succeeded, failed = route_outcomes.failed + excluded.failed;
      return null;
    end
    $$`.execute(db);
}

async function down(db: Kysely<any>): Promise<void> {
  // Each route's minute back to one row: the slots summed into slot 0.
  await sql`
    with summed as (
      delete from route_outcomes returning environment, provider, operator, country, minute, succeeded, failed
    )
    insert into route_outcomes (environment, provider, operator, country, minute, slot, succeeded, failed)
    select environment, provider, operator, country, minute, 0, sum(succeeded), sum(failed)
    from summed group by environment, provider, operator, country, minute`.execute(db);
  await sql`alter table route_outcomes drop constraint route_outcomes_pkey`.execute(db);
  await db.schema.alterTable("route_outcomes").dropColumn("slot").execute();
  await sql`alter table route_outcomes add constraint route_outcomes_pkey primary key (environment, provider, operator, country, minute)`.execute(db);
  await sql`
    create or replace function route_outcome_of_payment() returns trigger language plpgsql as $$
    begin
      insert into route_outcomes (environment, provider, operator, country, minute, succeeded, failed)
      values (new.environment, new.provider, new.operator, coalesce(new.customer->>'country', ''), date_trunc('minute', new.updated_at),
              case when new.state = 'succeeded' then 1 else 0 end, case when new.state = 'succeeded' then 0 else 1 end)
      on conflict (environment, provider, operator, country, minute) do update
        set succeeded = route_outcomes.succeeded + excluded.succeeded, failed = route_outcomes.failed + excluded.failed;
      return null;
    end
    $$`.execute(db);
}

export const routeOutcomeSlotsMigration: Migration = { up, down };
