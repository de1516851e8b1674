/**
 * Migration 0026: people sign in (issue 30 points 2 and 3) — two-factor codes, the sign-in log, the locks on
 * an account after failures, and the dashboard's sessions.
 *
 * - `people.totp_secret` (sealed) and `totp_enabled_at`: the person's TOTP (RFC 6238) once enrolment is
 *   confirmed; `totp_pending` (sealed) while it is not; `totp_last_counter`, the 30 s step of the last code used
 *   (a code works once). `failed_sign_ins` and `locked_until`: consecutive
 *   failures, and the lock they put on the account.
 * - `recovery_codes`: ten single-use codes per enrolment, stored as HMACs.
 * - `tenants.require_two_factor`: an owner's rule that the shop's people sign in with a code.
 * - `sign_ins`: every sign-in and every failure (who, from which address, what happened).
 * - `sessions`: a signed-in person in one shop; only the HMAC of the cookie's secret is stored.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable("people")
    .addColumn("totp_secret", "text")
    .addColumn("totp_pending", "text")
    .addColumn("totp_enabled_at", "timestamptz")
    .addColumn("totp_last_counter", "bigint")
    .addColumn("failed_sign_ins", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("locked_until", "timestamptz")
    .execute();
  await db.schema
    .alterTable("tenants")
    .addColumn("require_two_factor", "boolean", (c) => c.notNull().defaultTo(false))
    .execute();
  await db.schema
    .createTable("recovery_codes")
    .addColumn("code_hash", "text", (c) => c.primaryKey())
    .addColumn("person_id", "text", (c) => c.notNull().references("people.id").onDelete("cascade"))
    .addColumn("used_at", "timestamptz")
    .execute();
  await db.schema.createIndex("recovery_codes_person_idx").on("recovery_codes").column("person_id").execute();
  await db.schema
    .createTable("sign_ins")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("person_id", "text")
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex("sign_ins_person_idx").on("sign_ins").columns(["person_id", "id"]).execute();
  await db.schema
    .createTable("sessions")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("secret_hash", "text", (c) => c.notNull().unique())
    .addColumn("person_id", "text", (c) => c.notNull().references("people.id").onDelete("cascade"))
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id").onDelete("cascade"))
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("user_agent", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("last_seen_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("ended_at", "timestamptz")
    .execute();
  await db.schema.createIndex("sessions_person_idx").on("sessions").columns(["person_id", "id"]).execute();
}

async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["sessions", "sign_ins", "recovery_codes"]) await db.schema.dropTable(table).execute();
  await db.schema.alterTable("tenants").dropColumn("require_two_factor").execute();
  await db.schema
    .alterTable("people")
    .dropColumn("totp_secret")
    .dropColumn("totp_pending")
    .dropColumn("totp_enabled_at")
    .dropColumn("totp_last_counter")
    .dropColumn("failed_sign_ins")
    .dropColumn("locked_until")
    .execute();
}

export const signInMigration: Migration = { up, down };
