/**
 * The audit log's entries (issue 30 point 5): appended in order to their chain — one per tenant and
 * environment (`ten_…:sandbox`), and `operator:<environment>` for calls on no shop — each carrying the SHA-256 of
 * the one before it in the chain (`prev_hash`) and its own (`hash`, over every field). The first entry of a chain
 * follows the empty string. Appends to one chain are serialised by a transaction-scoped advisory lock on it, so
 * that no two entries follow the same one.
 *
 * **Group commit.** A gateway appends a chain's entries one transaction at a time: an entry whose chain has no
 * append running in this process starts one at once (as alone: begin, the lock, the chain's last entry, the
 * insert, commit); entries that come while it runs wait for it to end and are appended together by the next
 * one, in the order they came (at most {@link APPEND_BATCH_MAX}). So a shop's concurrent calls share the
 * chain's lock and round trips instead of queueing for them one by one, and a lone call waits for nothing more
 * than before. An append that fails is tried again entry by entry, so that one entry the database refuses does
 * not take its neighbours with it.
 *
 * @module
 */
import { createHash } from "node:crypto";
import { type Insertable, sql } from "kysely";
import { precompile } from "../../db/precompiled.ts";
import type { AuditActorType, AuditLogTable, Environment } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import type { ChainQueue, WaitingEntry } from "./append-queue.ts";
import type { AuditEntry, NewAuditEntry } from "./entry-types.ts";

export type { AuditEntry, NewAuditEntry } from "./entry-types.ts";

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

/** At most this many entries in one append. */
export const APPEND_BATCH_MAX = 100;

type AppendDeps = Pick<Deps, "db" | "now" | "caches">;

/**
 * Appends an entry to its chain and returns it: in a transaction of its own, or with the entries of the chain
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

/** The chain's lock, held to the end of the transaction: one append of a chain at a time. */
const lockChain = precompile<{ key: string }>()((db, p) => db.selectNoFrom(sql<unknown>`pg_advisory_xact_lock(hashtext(${p.key}))`.as("locked")));

/** The chain's last entry. */
const lastEntry = precompile<{ chain: string }>()((db, p) =>
  db.selectFrom("audit_log").select(["seq", "hash"]).where("chain", "=", p.chain).orderBy("seq", "desc").limit(1),
);

/** Where retention cut the chain, when it took every entry of it. */
const lastPurge = precompile<{ chain: string }>()((db, p) =>
  db.selectFrom("audit_log_purges").select(["through_seq as seq", "through_hash as hash"]).where("chain", "=", p.chain).orderBy("through_seq", "desc").limit(1),
);

/** The columns of an entry's row, in the order of {@link insertEntries}'s values. */
const ENTRY_COLUMNS = [
  "id",
  "chain",
  "seq",
  "at",
  "tenant_id",
  "environment",
  "actor_type",
  "actor_id",
  "actor_role",
  "action",
  "targets",
  "input",
  "changes",
  "outcome",
  "address",
  "user_agent",
  "request_id",
  "prev_hash",
  "hash",
] as const;

type EntryRow = Insertable<AuditLogTable>;

/** Row `i`'s value names (`id3`, `chain3`…), made once per row index. */
const valueNames: string[][] = [];
function valueNamesOf(i: number): string[] {
  let names = valueNames[i];
  if (!names) valueNames[i] = names = ENTRY_COLUMNS.map((column) => `${column}${i}`);
  return names;
}

/**
 * The insert of a batch's rows: its shape is the number of rows (one compiled form per batch size, at most
 * {@link APPEND_BATCH_MAX}), row `i`'s values named `<column><i>`.
 */
const insertEntries = precompile<Record<string, unknown>>()((db, p, shape) =>
  db
    .insertInto("audit_log")
    .values(
      Array.from({ length: Number(shape) }, (_, i) => Object.fromEntries(ENTRY_COLUMNS.map((column, c) => [column, p[valueNamesOf(i)[c]!]])) as EntryRow),
    ),
);

function rowOf(stored: AuditEntry): EntryRow {
  return {
    id: stored.id,
    chain: stored.chain,
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
  };
}

/**
 * Appends `entries` to `chain`, in this order, in one transaction holding the chain's lock. Its statements are
 * precompiled (`db/precompiled.ts`): every changing call of the API writes an entry, and Kysely's build of these
 * four cost ~4 % of a direct payment's CPU.
 */
async function appendBatch(deps: Pick<Deps, "db" | "now">, chain: string, entries: NewAuditEntry[]): Promise<AuditEntry[]> {
  return deps.db.transaction().execute(async (tx) => {
    await lockChain(tx, { key: `audit-log:${chain}` });
    let last: { seq: string | number; hash: string } | undefined =
      (await lastEntry(tx, { chain })).rows[0] ??
      // Retention may have taken every entry of the chain: it goes on from where the purge cut it.
      (await lastPurge(tx, { chain })).rows[0];
    const batch: AuditEntry[] = [];
    for (const entry of entries) {
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
      batch.push(stored);
      last = { seq: stored.seq, hash: stored.hash };
    }
    const values: Record<string, unknown> = {};
    for (const [i, stored] of batch.entries()) {
      const row = rowOf(stored) as Record<string, unknown>;
      const names = valueNamesOf(i);
      // A value may not be undefined in a precompiled statement: a column the row leaves out is null.
      for (const [c, column] of ENTRY_COLUMNS.entries()) values[names[c]!] = row[column] ?? null;
    }
    await insertEntries(tx, values, String(batch.length));
    return batch;
  });
}
