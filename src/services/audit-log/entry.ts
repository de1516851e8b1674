/**
 * The audit log's entries (issue 30 point 5): appended one at a time to their chain — one per tenant and
 * environment (`ten_…:sandbox`), and `operator:<environment>` for calls on no shop — each carrying the SHA-256 of
 * the one before it in the chain (`prev_hash`) and its own (`hash`, over every field). The first entry of a chain
 * follows the empty string. Appends to one chain are serialised by a transaction-scoped advisory lock on it, so
 * that no two entries follow the same one.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { sql } from "kysely";
import type { AuditActorType, Environment } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";

/** An entry to append: everything but where it goes in its chain. */
export interface NewAuditEntry {
  tenantId: string | null;
  environment: Environment;
  actorType: AuditActorType;
  actorId: string;
  actorRole: string | null;
  action: string;
  targets: string[];
  input: Record<string, unknown> | null;
  changes: Record<string, { before: unknown; after: unknown }> | null;
  outcome: string;
  address: string;
  userAgent: string | null;
  requestId: string;
}

/** An entry as stored, and as `GET /audit-log` shows it. */
export interface AuditEntry extends NewAuditEntry {
  id: string;
  chain: string;
  seq: number;
  at: string;
  prevHash: string;
  hash: string;
}

/** The chain of a shop's entries in an environment, or of the operator's calls on no shop. */
export function chainOf(tenantId: string | null, environment: Environment): string {
  return `${tenantId ?? "operator"}:${environment}`;
}

/** JSON with every object's keys sorted: the same value always gives the same text (jsonb does not keep key order). */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value ?? null);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
}

/** The hash of an entry: SHA-256 (hex) of the canonical JSON of all its fields, `prevHash` included. */
export function hashEntry(entry: Omit<AuditEntry, "hash">): string {
  return createHash("sha256").update(canonicalJson(entry)).digest("hex");
}

/** A row of `audit_log` as an entry. */
export function entryOf(row: {
  id: string;
  chain: string;
  seq: string | number;
  at: Date;
  tenant_id: string | null;
  environment: Environment;
  actor_type: AuditActorType;
  actor_id: string;
  actor_role: string | null;
  action: string;
  targets: string[];
  input: Record<string, unknown> | null;
  changes: Record<string, { before: unknown; after: unknown }> | null;
  outcome: string;
  address: string;
  user_agent: string | null;
  request_id: string;
  prev_hash: string;
  hash: string;
}): AuditEntry {
  return {
    id: row.id,
    chain: row.chain,
    seq: Number(row.seq),
    at: row.at.toISOString(),
    tenantId: row.tenant_id,
    environment: row.environment,
    actorType: row.actor_type,
    actorId: row.actor_id,
    actorRole: row.actor_role,
    action: row.action,
    targets: row.targets,
    input: row.input,
    changes: row.changes,
    outcome: row.outcome,
    address: row.address,
    userAgent: row.user_agent,
    requestId: row.request_id,
    prevHash: row.prev_hash,
    hash: row.hash,
  };
}

/**
 * Appends an entry to its chain, in a transaction of its own, and returns it.
 *
 * @example
 * ```ts
 * const entry = await appendAuditEntry(deps, { tenantId, environment: "sandbox", actorType: "person", … });
 * entry.prevHash; // the hash of the chain's entry before it ("" for the first)
 * ```
 */
export async function appendAuditEntry(deps: Pick<Deps, "db" | "now">, entry: NewAuditEntry): Promise<AuditEntry> {
  const chain = chainOf(entry.tenantId, entry.environment);
  return deps.db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(hashtext(${`audit-log:${chain}`}))`.execute(tx);
    const last =
      (await tx.selectFrom("audit_log").select(["seq", "hash"]).where("chain", "=", chain).orderBy("seq", "desc").limit(1).executeTakeFirst()) ??
      // Retention may have taken every entry of the chain: it goes on from where the purge cut it.
      (await tx
        .selectFrom("audit_log_purges")
        .select(["through_seq as seq", "through_hash as hash"])
        .where("chain", "=", chain)
        .orderBy("through_seq", "desc")
        .limit(1)
        .executeTakeFirst());
    const unhashed: Omit<AuditEntry, "hash"> = {
      ...entry,
      userAgent: entry.userAgent?.slice(0, 300) ?? null,
      id: newId("aud"),
      chain,
      seq: last ? Number(last.seq) + 1 : 1,
      at: deps.now().toISOString(),
      prevHash: last?.hash ?? "",
    };
    const stored: AuditEntry = { ...unhashed, hash: hashEntry(unhashed) };
    await tx
      .insertInto("audit_log")
      .values({
        id: stored.id,
        chain,
        seq: stored.seq,
        at: new Date(stored.at),
        tenant_id: stored.tenantId,
        environment: stored.environment,
        actor_type: stored.actorType,
        actor_id: stored.actorId,
        actor_role: stored.actorRole,
        action: stored.action,
        targets: stored.targets,
        input: stored.input,
        changes: stored.changes,
        outcome: stored.outcome,
        address: stored.address,
        user_agent: stored.userAgent,
        request_id: stored.requestId,
        prev_hash: stored.prevHash,
        hash: stored.hash,
      })
      .execute();
    return stored;
  });
}
