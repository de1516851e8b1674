/**
 * Migration 0036: an audit log append is one statement (issue 27 point 3). It was a transaction of five round
 * trips — begin, an advisory lock on the chain, the chain's last entry, the insert, commit — on every changing
 * call of the API. Now:
 *
 * - `audit_chain_heads(chain, seq, hash, from_hash)`: each chain's last `seq` and `hash`. An append advances it
 *   with `insert … on conflict (chain) do update … returning` and inserts its entries from what that returns, in
 *   the same statement: the head row's lock serialises a chain's appenders for that statement only, and
 *   PostgreSQL's upsert works from the row's latest version, whatever the statement's snapshot. `from_hash` is
 *   the head before the last append (what `returning` needs to link that append's first entry).
 * - The chain's link is therefore made in SQL from the previous hash: `audit_log.hash_version` 2 is
 *   `hex(sha256(prev_hash ‖ content_hash))` (the two hex strings as ASCII), `content_hash` being the SHA-256
 *   (hex) of the entry's canonical JSON without its place in the chain, made by the gateway (docs/team.md,
 *   "Chained"). `audit_chain_links(from_hash, content_hashes)` folds it over a batch: an append of n entries
 *   is one statement too. Entries stored before are `hash_version` 1 (the SHA-256 of all their fields,
 *   `prevHash` included) and verify as they did; a chain goes on from its last one.
 * - Each chain's head is seeded from its last entry, or from where retention cut it if it took every entry.
 *
 * `hash_version` has no default: a gateway of the previous version, still running while this one is deployed,
 * has its appends refused (its entries are lost, and logged as `audit log entry not written`) rather than
 * writing an entry the head does not know, which would stop this version's appends of that chain on the
 * unique `(chain, seq)`. The `alter table` takes `audit_log`'s exclusive lock first, so no append of the
 * previous version lands between the seed and the commit.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table audit_log add column hash_version smallint not null default 1 check (hash_version in (1, 2))`.execute(db);
  await sql`alter table audit_log alter column hash_version drop default`.execute(db);

  await db.schema
    .createTable("audit_chain_heads")
    .addColumn("chain", "text", (c) => c.primaryKey())
    .addColumn("seq", "bigint", (c) => c.notNull())
    .addColumn("hash", "text", (c) => c.notNull())
    .addColumn("from_hash", "text", (c) => c.notNull())
    .execute();
  await sql`
    insert into audit_chain_heads (chain, seq, hash, from_hash)
    select distinct on (chain) chain, seq, hash, prev_hash
    from (
      select chain, seq, hash, prev_hash from audit_log
      union all
      select chain, through_seq, through_hash, '' from audit_log_purges
    ) as ends
    order by chain, seq desc`.execute(db);
  // A head only moves forward, by an append: never deleted nor truncated (the function of 0030 refuses both here).
  await sql`create trigger audit_chain_heads_no_delete before delete on audit_chain_heads
            for each row execute function audit_log_append_only()`.execute(db);
  await sql`create trigger audit_chain_heads_no_truncate before truncate on audit_chain_heads
            for each statement execute function audit_log_append_only()`.execute(db);

  // The links of a batch of entries following `from_hash`, in order: link i = hex(sha256(link i−1 ‖ content i)).
  await sql`
    create function audit_chain_links(from_hash text, content_hashes text[]) returns text[]
    language plpgsql immutable strict parallel safe as $$
    declare
      link text := from_hash;
      links text[] := '{}';
      content text;
    begin
      foreach content in array content_hashes loop
        link := encode(sha256(convert_to(link || content, 'UTF8')), 'hex');
        links := links || link;
      end loop;
      return links;
    end
    $$`.execute(db);
}

// Back to 0035, which knows only version 1: refused while a chain holds an entry of version 2 (0035's audit
// would report each as changed, and its appends would follow them with version 1).
async function down(db: Kysely<any>): Promise<void> {
  const linked = await sql<{ n: number }>`select count(*)::int as n from audit_log where hash_version = 2`.execute(db);
  if ((linked.rows[0]?.n ?? 0) > 0) throw new Error("audit_log holds entries of hash version 2: 0035 could not verify them");
  await sql`drop function audit_chain_links(text, text[])`.execute(db);
  await db.schema.dropTable("audit_chain_heads").execute();
  await sql`alter table audit_log drop column hash_version`.execute(db);
}

export const auditChainHeadsMigration: Migration = { up, down };
