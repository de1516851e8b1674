/**
 * Migration 0009: renewal schedules of provider B permits (issue 7, contract §5).
 *
 * One row per permit, ever (`permit_id` unique): `PUT …/schedule` updates that row in place and keeps its
 * id, `DELETE` marks it `cancelled`, a later `PUT` revives it. Keeping one id per permit means the unique
 * `(schedule_id, period, attempt)` index of `permit_charges` (migration 0008) guards every period of the
 * permit's whole life, across edits and restarts.
 *
 * The row is the schedule's position: the period being collected (`period_index` from the anchor `start_at`,
 * its `period` key `YYYY-MM-DD` and `due_at`), the dunning `attempt` (0 at the due date, then one per entry of
 * `RENEWAL_RETRY_SCHEDULE`) and `next_attempt_at`, when the sweep acts next. Also adds the foreign key
 * `permit_charges.schedule_id → permit_schedules.id` that 0008 leaves out.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("permit_schedules")
    .addColumn("id", sql`text collate "C"`, (c) => c.primaryKey())
    .addColumn("permit_id", "text", (c) => c.notNull().unique().references("permits.id"))
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("amount", "int8", (c) => c.notNull())
    .addColumn("interval", "text", (c) => c.notNull())
    .addColumn("interval_count", "integer", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull())
    // The anchor: period n is due at start_at + n × interval_count × interval, clamped to the month's end.
    .addColumn("start_at", "timestamptz", (c) => c.notNull())
    .addColumn("period_index", "integer", (c) => c.notNull())
    .addColumn("period", "text", (c) => c.notNull())
    .addColumn("due_at", "timestamptz", (c) => c.notNull())
    .addColumn("attempt", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "timestamptz", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("past_due_at", "timestamptz")
    .addColumn("cancelled_at", "timestamptz")
    .addCheckConstraint("permit_schedules_status_check", sql`status in ('active', 'past_due', 'cancelled')`)
    .addCheckConstraint("permit_schedules_interval_check", sql`interval in ('day', 'week', 'month')`)
    .addCheckConstraint("permit_schedules_interval_count_check", sql`interval_count >= 1`)
    .addCheckConstraint("permit_schedules_amount_check", sql`amount > 0`)
    .addCheckConstraint("permit_schedules_attempt_check", sql`attempt >= 0`)
    .addCheckConstraint("permit_schedules_environment_check", sql`environment in ('sandbox', 'live')`)
    .execute();
  // The sweep: active schedules by when they act next.
  await db.schema
    .createIndex("permit_schedules_due_idx")
    .on("permit_schedules")
    .columns(["next_attempt_at", "id"])
    .where(sql.ref("status"), "=", "active")
    .execute();
  await db.schema
    .alterTable("permit_charges")
    .addForeignKeyConstraint("permit_charges_schedule_id_fkey", ["schedule_id"], "permit_schedules", ["id"])
    .execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("permit_charges").dropConstraint("permit_charges_schedule_id_fkey").execute();
  await db.schema.dropTable("permit_schedules").execute();
}

/** Permit renewal schedules. */
export const permitSchedulesMigration: Migration = { up, down };
