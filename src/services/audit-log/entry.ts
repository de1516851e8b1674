/**
 * The audit log's entries (issue 30 point 5): appended in order to their chain — one per tenant and
 * environment (`ten_…:sandbox`), and `operator:<environment>` for calls on no shop — each carrying the hash of
 * the one before it in the chain (`prev_hash`; the empty string for a chain's first) and its own (`hash`).
 *
 * **The hash** (`hash_version` 2, since migration 0036): `hash = hex(sha256(prevHash ‖ contentHash))`, the two
 * hex strings concatenated as ASCII, where `contentHash` is the SHA-256 (hex) of the canonical JSON of the
 * entry's content — every field but its place in the chain (`seq`, `prevHash`, `hash`, `hashVersion`). The
 * gateway makes the content hash; the link is made in SQL (`audit_chain_links`), from the chain's head as the
 * statement finds it. Entries written before are version 1: the SHA-256 of the canonical JSON of all their
 * fields, `prevHash` included (`hashVersion` aside). {@link hashEntry} computes either; docs/team.md tells
 * an auditor how to by hand.
 *
 * **One statement.** An append is one autocommitted statement, with no advisory lock and no read before it: it
 * advances the chain's head (`audit_chain_heads`, `insert … on conflict do update … returning`, whose row lock
 * serialises the chain's appenders for the statement's duration) and inserts the entries from what it returns.
 * So two gateways (or two pools, or PgBouncer in transaction mode between them) append to one chain without
 * forking it: each statement works from the head the one before it left.
 *
 * **Group commit.** A gateway appends a chain's entries one statement at a time: an entry whose chain has no
 * append running in this process starts one at once; entries that come while it runs wait for it to end and are
 * appended together by the next one, in the order they came (at most {@link APPEND_BATCH_MAX}), linked one
 * after another by that one statement. So a shop's concurrent calls share a round trip instead of queueing for
 * the head's row lock one by one, and a lone call waits for nothing more. An append that fails is tried again
 * entry by entry, so that one entry the database refuses does not take its neighbours with it.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { CompiledQuery } from "kysely";
import type { AuditActorType, Environment } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import type { ChainQueue, WaitingEntry } from "./append-queue.ts";
import type { AuditEntry, AuditEntryContent, NewAuditEntry } from "./entry-types.ts";

export type { AuditEntry, AuditEntryContent, NewAuditEntry } from "./entry-types.ts";

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

function sha256Hex(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/** Version 2's content hash: SHA-256 (hex) of the canonical JSON of the entry's fields but its place in the chain. */
export function contentHashOf(entry: AuditEntryContent): string {
  const { id, chain, at, tenantId, environment, actorType, actorId, actorRole, action, targets, input, changes, outcome, address, userAgent, requestId } =
    entry;
  return sha256Hex(
    canonicalJson({
      id,
      chain,
      at,
      tenantId,
      environment,
      actorType,
      actorId,
      actorRole,
      action,
      targets,
      input,
      changes,
      outcome,
      address,
      userAgent,
      requestId,
    }),
  );
}

/** Version 2's link: SHA-256 (hex) of the previous entry's hash followed by this one's content hash (ASCII hex). As `audit_chain_links` in SQL. */
export function linkHash(prevHash: string, contentHash: string): string {
  return sha256Hex(prevHash + contentHash);
}

/**
 * The hash of an entry, by its `hashVersion`: 2, {@link linkHash} of `prevHash` and {@link contentHashOf}; 1, the
 * SHA-256 (hex) of the canonical JSON of all its fields but `hashVersion`, `prevHash` included.
 */
export function hashEntry(entry: Omit<AuditEntry, "hash">): string {
  if (entry.hashVersion === 2) return linkHash(entry.prevHash, contentHashOf(entry));
  const { hashVersion: _, ...fields } = entry;
  return sha256Hex(canonicalJson(fields));
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
  hash_version: number;
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
    hashVersion: row.hash_version === 1 ? 1 : 2,
  };
}

/** At most this many entries in one append. */
export const APPEND_BATCH_MAX = 100;

type AppendDeps = Pick<Deps, "db" | "now" | "caches">;

/**
 * Appends an entry to its chain and returns it: in a statement of its own, or with the entries of the chain
 * that came while this gateway's previous append of it ran (see "Group commit" above).
 *
 * @example
 * ```ts
 * const entry = await appendAuditEntry(deps, { tenantId, environment: "sandbox", actorType: "person", … });
 * entry.prevHash; // the hash of the chain's entry before it ("" for the first)
 * ```
 */
export function appendAuditEntry(deps: AppendDeps, entry: NewAuditEntry): Promise<AuditEntry> {
  const chain = chainOf(entry.tenantId, entry.environment);
  const appends = deps.caches.auditAppends;
  return new Promise<AuditEntry>((resolve, reject) => {
    const running = appends.get(chain);
    if (running) {
      running.waiting.push({ entry, resolve, reject });
      return;
    }
    const queue: ChainQueue = { waiting: [{ entry, resolve, reject }] };
    appends.set(chain, queue);
    void drain(deps, chain, queue);
  });
}

/** Appends the chain's waiting entries, batch after batch, until none is left; then the chain leaves the map. */
async function drain(deps: AppendDeps, chain: string, queue: ChainQueue): Promise<void> {
  try {
    while (queue.waiting.length > 0) {
      const batch = queue.waiting.splice(0, APPEND_BATCH_MAX);
      try {
        settle(
          batch,
          await appendBatch(
            deps,
            chain,
            batch.map((w) => w.entry),
          ),
        );
      } catch (error) {
        if (batch.length === 1) batch[0]!.reject(error);
        else
          for (const waiting of batch)
            await appendBatch(deps, chain, [waiting.entry]).then(
              (stored) => settle([waiting], stored),
              (alone: unknown) => waiting.reject(alone),
            );
      }
    }
  } finally {
    deps.caches.auditAppends.delete(chain);
  }
}

function settle(batch: WaitingEntry[], stored: AuditEntry[]): void {
  for (const [i, waiting] of batch.entries()) waiting.resolve(stored[i]!);
}

/** The values each entry of a batch gives the statement, in the order of {@link appendStatement}'s `values` rows. */
const ENTRY_VALUES = [
  "id text",
  "at timestamptz",
  "actor_type text",
  "actor_id text",
  "actor_role text",
  "action text",
  "targets jsonb",
  "input jsonb",
  "changes jsonb",
  "outcome text",
  "address text",
  "user_agent text",
  "request_id text",
] as const;

/** The statement's parameters before the entries': the chain, the batch's size, its content hashes, the tenant and the environment. */
const HEAD_PARAMETERS = 5;

/** The append of a batch of `size` entries, made once per size (at most {@link APPEND_BATCH_MAX}). */
const appendStatements: string[] = [];

/**
 * One statement: the chain's head (`$1`) advanced by the batch's size (`$2`), its new hash the last of the links
 * of the content hashes (`$3`, comma-separated) from the head's; then the entries inserted from the head it
 * returns — entry i is `seq` from_seq + i, `prev_hash` link i − 1 (the old head for the first), `hash` link i.
 * By hand rather than built with Kysely: it has no form Kysely's builder gives (a CTE's upsert whose `set`
 * reads the conflicting row), and its text is made once per size anyway.
 */
function appendStatement(size: number): string {
  let statement = appendStatements[size];
  if (statement) return statement;
  const rows = Array.from({ length: size }, (_, i) => {
    const first = HEAD_PARAMETERS + i * ENTRY_VALUES.length + 1;
    return `(${i + 1}, ${ENTRY_VALUES.map((value, v) => `$${first + v}::${value.split(" ")[1]}`).join(", ")})`;
  });
  const links = (from: string) => `audit_chain_links(${from}, string_to_array($3::text, ','))`;
  statement = `with head as (
  insert into audit_chain_heads as h (chain, seq, hash, from_hash)
  values ($1::text, $2::int, (${links("''")})[$2::int], '')
  on conflict (chain) do update set seq = h.seq + $2::int, hash = (${links("h.hash")})[$2::int], from_hash = h.hash
  returning seq - $2::int as from_seq, array_prepend(from_hash, ${links("from_hash")}) as links
)
insert into audit_log (id, chain, seq, at, tenant_id, environment, actor_type, actor_id, actor_role, action, targets, input, changes, outcome, address, user_agent, request_id, prev_hash, hash, hash_version)
select e.id, $1::text, head.from_seq + e.ord, e.at, $4::text, $5::text, e.actor_type, e.actor_id, e.actor_role, e.action, e.targets, e.input, e.changes, e.outcome, e.address, e.user_agent, e.request_id, head.links[e.ord], head.links[e.ord + 1], 2
from head, (values ${rows.join(", ")}) as e(ord, ${ENTRY_VALUES.map((value) => value.split(" ")[0]).join(", ")})
returning id, seq, prev_hash, hash`;
  appendStatements[size] = statement;
  return statement;
}

/**
 * Appends `entries` to `chain`, in this order, in one statement ({@link appendStatement}): the content hashes are
 * made here, the links by the database from the head it finds.
 */
async function appendBatch(deps: Pick<Deps, "db" | "now">, chain: string, entries: NewAuditEntry[]): Promise<AuditEntry[]> {
  const contents: AuditEntryContent[] = entries.map((entry) => ({
    ...entry,
    userAgent: entry.userAgent?.slice(0, 300) ?? null,
    id: newId("aud"),
    chain,
    at: deps.now().toISOString(),
  }));
  const first = contents[0]!;
  const parameters: unknown[] = [chain, contents.length, contents.map(contentHashOf).join(","), first.tenantId, first.environment];
  for (const c of contents)
    parameters.push(
      c.id,
      new Date(c.at),
      c.actorType,
      c.actorId,
      c.actorRole,
      c.action,
      c.targets,
      c.input,
      c.changes,
      c.outcome,
      c.address,
      c.userAgent,
      c.requestId,
    );
  const { rows } = await deps.db.executeQuery<{ id: string; seq: string | number; prev_hash: string; hash: string }>(
    CompiledQuery.raw(appendStatement(contents.length), parameters),
  );
  const placed = new Map(rows.map((row) => [row.id, row]));
  return contents.map((content) => {
    const row = placed.get(content.id);
    if (!row) throw new Error(`audit log: the append of ${chain} returned no row for ${content.id}`);
    return { ...content, seq: Number(row.seq), prevHash: row.prev_hash, hash: row.hash, hashVersion: 2 };
  });
}
