/**
 * Checking the audit log's chains (`passerelle audit`, the invariant `audit_log_chain_broken`): every entry's
 * hash is that of its fields by its version's definition (`entry.ts`, `hashEntry`: version 1 before migration
 * 0036, version 2 after, never a 1 after a 2), it follows the one before it (`prev_hash`, `seq` one more), a
 * chain starts at `seq` 1 with the empty string — or where the retention's purge cut it (`audit_log_purges`) —
 * and it reaches its head (`audit_chain_heads`, read before its entries so that appends meanwhile do not count).
 * An entry changed, a removed one (outside the purge, its last ones included), or one inserted out of the chain
 * all break it.
 *
 * @module
 */
import type { Environment } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { type AuditEntry, entryOf, hashEntry } from "./entry.ts";

/** One place where a chain is broken. */
export interface ChainBreak {
  chain: string;
  seq: number;
  id: string;
  message: string;
}

const PAGE = 1_000;

/**
 * Every break in the chains of `environment` (at most `limit`), read in pages of a thousand entries.
 *
 * @example
 * ```ts
 * await auditLogChainBreaks(deps, "sandbox"); // [] on an untouched log
 * ```
 */
export async function auditLogChainBreaks(deps: Pick<Deps, "db">, environment: Environment, limit = 100): Promise<ChainBreak[]> {
  const breaks: ChainBreak[] = [];
  // A chain whose every entry is gone still has its head (`<tenant or operator>:<environment>`).
  const chains = await deps.db
    .selectFrom("audit_log")
    .select("chain")
    .where("environment", "=", environment)
    .union((db) => db.selectFrom("audit_chain_heads").select("chain").where("chain", "like", `%:${environment}`))
    .orderBy("chain")
    .execute();
  for (const { chain } of chains) {
    const purge = await deps.db
      .selectFrom("audit_log_purges")
      .select(["through_seq", "through_hash"])
      .where("chain", "=", chain)
      .orderBy("through_seq", "desc")
      .limit(1)
      .executeTakeFirst();
    const head = await deps.db.selectFrom("audit_chain_heads").select(["seq", "hash"]).where("chain", "=", chain).executeTakeFirst();
    let expectedSeq = purge ? Number(purge.through_seq) + 1 : 1;
    let expectedPrev = purge?.through_hash ?? "";
    let expectedVersion: 1 | 2 = 1;
    let after = 0;
    for (;;) {
      const rows = await deps.db.selectFrom("audit_log").selectAll().where("chain", "=", chain).where("seq", ">", after).orderBy("seq").limit(PAGE).execute();
      for (const row of rows) {
        const entry = entryOf(row);
        const message =
          breakOf(entry, expectedSeq, expectedPrev, expectedVersion) ??
          (head && entry.seq === Number(head.seq) && entry.hash !== head.hash ? `entry ${entry.seq} (${entry.id}) is not the chain's head` : null);
        if (message) {
          breaks.push({ chain, seq: entry.seq, id: entry.id, message });
          if (breaks.length >= limit) return breaks;
        }
        expectedSeq = entry.seq + 1;
        expectedPrev = entry.hash;
        expectedVersion = entry.hashVersion;
        after = entry.seq;
      }
      if (rows.length < PAGE) break;
    }
    // The head was read first: entries appended since are past it, never short of it.
    if (head && Number(head.seq) >= expectedSeq) {
      breaks.push({
        chain,
        seq: Number(head.seq),
        id: "",
        message: `the chain's head is entry ${head.seq} but its last entry is ${expectedSeq - 1}: entries are missing at its end`,
      });
      if (breaks.length >= limit) return breaks;
    }
  }
  return breaks;
}

function breakOf(entry: AuditEntry, expectedSeq: number, expectedPrev: string, expectedVersion: 1 | 2): string | null {
  const { hash, ...fields } = entry;
  if (hashEntry(fields) !== hash) return `entry ${entry.seq} (${entry.id}) does not match its hash: it was changed`;
  if (entry.hashVersion < expectedVersion)
    return `entry ${entry.seq} (${entry.id}) is of hash version ${entry.hashVersion} after one of version ${expectedVersion}`;
  if (entry.seq !== expectedSeq) return `entry ${entry.seq} (${entry.id}) follows entry ${expectedSeq - 1}: entries are missing`;
  if (entry.prevHash !== expectedPrev) return `entry ${entry.seq} (${entry.id}) does not follow the hash of the entry before it`;
  return null;
}
