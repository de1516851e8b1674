/**
 * Migration 0009 (second): renewal schedules follow a calendar's time zone (issue 13 point 6).
 *
 * `permit_schedules.time_zone`, an IANA zone name: period `n` is due `n × interval` after `start_at` on that
 * zone's wall clock, and named by its local date. The schedules already there get the zone of their payer's
 * country, from the permit customer's phone calling code (tenants carry no country), else `Africa/Abidjan`
 * (UTC+0: their calendar so far) — the rule `services/permits/schedule-time-zone.ts` applies to new ones,
 * frozen here as SQL. Their current period keeps its key and due date; the next ones follow the zone.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("permit_schedules").addColumn("time_zone", "text").execute();
  await sql`
    update permit_schedules as s
    set time_zone = case left(p.customer->>'phone', 4)
      when '+229' then 'Africa/Porto-Novo'
      when '+227' then 'Africa/Niamey'
      when '+228' then 'Africa/Lome'
      when '+225' then 'Africa/Abidjan'
      when '+221' then 'Africa/Dakar'
      when '+223' then 'Africa/Bamako'
      when '+224' then 'Africa/Conakry'
      else 'Africa/Abidjan'
    end
    from permits as p
    where p.id = s.permit_id`.execute(db);
  await db.schema
    .alterTable("permit_schedules")
    .alterColumn("time_zone", (c) => c.setNotNull())
    .execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("permit_schedules").dropColumn("time_zone").execute();
}

/** The time zone of renewal schedules. */
export const scheduleTimeZoneMigration: Migration = { up, down };
