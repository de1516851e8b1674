/**
 * Migration 0023: the home screen's overview (issue 29) read from an index alone.
 *
 * Migration 0018's `(tenant_id, environment, created_at)` found a window's payments, but each row was then
 * read from the table (a month of a merchant with a million payments a year: ~82,000 rows, ~300 ms here).
 * This index carries what the overview groups by (`INCLUDE`), so PostgreSQL answers from the index alone
 * (an index-only scan, once autovacuum has marked the pages all-visible). A payment's country for the report
 * is an expression over its customer's JSON, which an index-only scan cannot read from an expression index,
 * so it is a stored generated column, `report_country`: the customer's country, else `phone:` and the
 * first four characters of its phone (which `services/reports/overview.ts` maps to a country).
 *
 * Adding a stored generated column rewrites the table once (a lock on `payments` for as long as that takes:
 * about 5 s per million rows on the machine the numbers above come from); the new index replaces 0018's
 * payments index, which it covers.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/** The report's country of a payment, as the generated column holds it. */
export const REPORT_COUNTRY_SQL = `coalesce(lower(customer->>'country'), 'phone:' || left(customer->>'phone', 4))`;

async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table payments add column report_country text generated always as (${sql.raw(REPORT_COUNTRY_SQL)}) stored`.execute(db);
  await sql`create index payments_overview_idx on payments (tenant_id, environment, created_at)
              include (state, currency, amount, provider, operator, payment_method, report_country)`.execute(db);
  await sql`drop index payments_tenant_created_idx`.execute(db);
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex("payments_tenant_created_idx").on("payments").columns(["tenant_id", "environment", "created_at"]).execute();
  await sql`drop index payments_overview_idx`.execute(db);
  await sql`alter table payments drop column report_country`.execute(db);
}

export const overviewCoveringMigration: Migration = { up, down };
