/**
 * Migration 0025: people (issue 30 point 1) — the persons who sign in to the dashboard, the shops they belong
 * to, their invitations and password resets, and the e-mail outbox that carries the links.
 *
 * - `people`: one row per e-mail address (lower-cased, unique); `password_hash` is argon2id (`Bun.password`),
 *   null until the person accepts an invitation.
 * - `memberships`: a person's place in a shop (`owner` or `member`); a person may belong to several shops.
 * - `invitations`: a single-use link to join a shop with a role, until `expires_at`; only an HMAC of the
 *   link's token is stored (`token_hash`, unique), as for API keys.
 * - `password_resets`: a single-use link to set a new password; likewise only the token's HMAC.
 * - `outbox_emails`: e-mails to send, drained by the `mail` queue. The body holds a single-use link, so it
 *   is sealed (AES-256-GCM, as provider credentials are) and cleared once the message is sent.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("people")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("email", "text", (c) => c.notNull().unique())
    .addColumn("name", "text")
    .addColumn("password_hash", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createTable("memberships")
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id").onDelete("cascade"))
    .addColumn("person_id", "text", (c) => c.notNull().references("people.id").onDelete("cascade"))
    .addColumn("role", "text", (c) => c.notNull().check(sql`role in ('owner', 'member')`))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint("memberships_pkey", ["tenant_id", "person_id"])
    .execute();
  await db.schema.createIndex("memberships_person_idx").on("memberships").column("person_id").execute();
  await db.schema
    .createTable("invitations")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id").onDelete("cascade"))
    .addColumn("email", "text", (c) => c.notNull())
    .addColumn("role", "text", (c) => c.notNull().check(sql`role in ('owner', 'member')`))
    .addColumn("token_hash", "text", (c) => c.notNull().unique())
    .addColumn("invited_by", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("accepted_at", "timestamptz")
    .addColumn("accepted_by", "text")
    .addColumn("revoked_at", "timestamptz")
    .execute();
  await db.schema.createIndex("invitations_tenant_idx").on("invitations").columns(["tenant_id", "id"]).execute();
  await db.schema
    .createTable("password_resets")
    .addColumn("token_hash", "text", (c) => c.primaryKey())
    .addColumn("person_id", "text", (c) => c.notNull().references("people.id").onDelete("cascade"))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("expires_at", "timestamptz", (c) => c.notNull())
    .addColumn("used_at", "timestamptz")
    .execute();
  await db.schema.createIndex("password_resets_person_idx").on("password_resets").column("person_id").execute();
  await db.schema
    .createTable("outbox_emails")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("recipient", "text", (c) => c.notNull())
    .addColumn("subject", "text", (c) => c.notNull())
    .addColumn("sealed_body", "text")
    .addColumn("status", "text", (c) => c.notNull().defaultTo("pending").check(sql`status in ('pending', 'sent', 'failed')`))
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("last_error", "text")
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("sent_at", "timestamptz")
    .execute();
  await sql`create index outbox_emails_pending_idx on outbox_emails (created_at) where status = 'pending'`.execute(db);
}

async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["outbox_emails", "password_resets", "invitations", "memberships", "people"]) await db.schema.dropTable(table).execute();
}

export const peopleMigration: Migration = { up, down };
