/**
 * Migration 0030: roles and the audit log (issue 30 points 4 and 5).
 *
 * - A shop's `member` becomes one of `developer`, `finance`, `viewer`: existing members and pending invitations
 *   as a member become **viewers** (they could do everything but manage people; no new role is that, and the
 *   upgrade must not let anyone do more than before: the owner gives each the role they need). See docs/team.md.
 * - The operator's staff are people too: `people.operator_role` (`admin`, `support`); their invitations and
 *   sessions name no tenant (`tenant_id` null).
 * - `audit_log`: every state-changing call by a person or a key, chained per tenant and environment by a SHA-256
 *   of the previous entry. Append-only: a trigger raises on UPDATE and TRUNCATE, and on DELETE unless the
 *   transaction set `passerelle.audit_purge` (the retention's purge does, for a chain's oldest entries, and records
 *   where it cut in `audit_log_purges`). The trigger is plain PL/pgSQL: it works on PGlite as on the real server.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table memberships drop constraint memberships_role_check`.execute(db);
  await sql`update memberships set role = 'viewer' where role = 'member'`.execute(db);
  await sql`alter table memberships add constraint memberships_role_check check (role in ('owner', 'developer', 'finance', 'viewer'))`.execute(db);

  await sql`alter table invitations drop constraint invitations_role_check`.execute(db);
  await sql`update invitations set role = 'viewer' where role = 'member'`.execute(db);
  await sql`alter table invitations alter column tenant_id drop not null`.execute(db);
  await sql`alter table invitations add constraint invitations_role_check check (
              (tenant_id is not null and role in ('owner', 'developer', 'finance', 'viewer'))
              or (tenant_id is null and role in ('admin', 'support')))`.execute(db);

  await db.schema
    .alterTable("people")
    .addColumn("operator_role", "text", (c) => c.check(sql`operator_role in ('admin', 'support')`))
    .execute();
  await sql`alter table sessions alter column tenant_id drop not null`.execute(db);

  await db.schema
    .createTable("audit_log")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("chain", "text", (c) => c.notNull())
    .addColumn("seq", "bigint", (c) => c.notNull())
    .addColumn("at", "timestamptz", (c) => c.notNull())
    .addColumn("tenant_id", "text")
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("actor_type", "text", (c) => c.notNull().check(sql`actor_type in ('person', 'key', 'token', 'operator')`))
    .addColumn("actor_id", "text", (c) => c.notNull())
    .addColumn("actor_role", "text")
    .addColumn("action", "text", (c) => c.notNull())
    .addColumn("targets", "jsonb", (c) => c.notNull())
    .addColumn("input", "jsonb")
    .addColumn("changes", "jsonb")
    .addColumn("outcome", "text", (c) => c.notNull())
    .addColumn("address", "text", (c) => c.notNull())
    .addColumn("user_agent", "text")
    .addColumn("request_id", "text", (c) => c.notNull())
    .addColumn("prev_hash", "text", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .addUniqueConstraint("audit_log_chain_seq", ["chain", "seq"])
    .execute();
  await db.schema.createIndex("audit_log_tenant_idx").on("audit_log").columns(["tenant_id", "id"]).execute();
  await db.schema.createIndex("audit_log_at_idx").on("audit_log").column("at").execute();
  await db.schema
    .createTable("audit_log_purges")
    .addColumn("chain", "text", (c) => c.notNull())
    .addColumn("through_seq", "bigint", (c) => c.notNull())
    .addColumn("through_hash", "text", (c) => c.notNull())
    .addColumn("purged_at", "timestamptz", (c) => c.notNull())
    .addPrimaryKeyConstraint("audit_log_purges_pkey", ["chain", "through_seq"])
    .execute();

  await sql`
    create function audit_log_append_only() returns trigger language plpgsql as $$
    begin
      if tg_op = 'DELETE' and tg_table_name = 'audit_log' and coalesce(current_setting('passerelle.audit_purge', true), '') = 'on' then
        return old;
      end if;
      raise exception 'the audit log is append-only: % on % refused', tg_op, tg_table_name using errcode = 'insufficient_privilege';
    end
    $$`.execute(db);
  for (const table of ["audit_log", "audit_log_purges"]) {
    await sql`create trigger ${sql.raw(`${table}_append_only`)} before update or delete on ${sql.table(table)}
              for each row execute function audit_log_append_only()`.execute(db);
    await sql`create trigger ${sql.raw(`${table}_no_truncate`)} before truncate on ${sql.table(table)}
              for each statement execute function audit_log_append_only()`.execute(db);
  }
}

// Back to 0027: the three roles become `member` again, and the operator's staff lose their invitations and sessions.
async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("audit_log_purges").execute();
  await db.schema.dropTable("audit_log").execute();
  await sql`drop function audit_log_append_only()`.execute(db);
  await sql`alter table people drop column operator_role`.execute(db);
  await sql`delete from sessions where tenant_id is null`.execute(db);
  await sql`alter table sessions alter column tenant_id set not null`.execute(db);
  await sql`delete from invitations where tenant_id is null`.execute(db);
  await sql`alter table invitations alter column tenant_id set not null`.execute(db);
  for (const table of ["memberships", "invitations"]) {
    await sql`alter table ${sql.table(table)} drop constraint ${sql.raw(`${table}_role_check`)}`.execute(db);
    await sql`update ${sql.table(table)} set role = 'member' where role <> 'owner'`.execute(db);
    await sql`alter table ${sql.table(table)} add constraint ${sql.raw(`${table}_role_check`)} check (role in ('owner', 'member'))`.execute(db);
  }
}

export const rolesAuditLogMigration: Migration = { up, down };
