/**
 * Checking the audit log's chains (`passerelle audit`, the invariant `audit_log_chain_broken`): every entry's
 * hash is that of its fields, it follows the one before it (`prev_hash`, `seq` one more), and a chain starts at
 * `seq` 1 with the empty string — or where the retention's purge cut it (`audit_log_purges`). An entry changed, a
 * removed one (outside the purge), or one inserted out of the chain all break it.
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
  const chains = await deps.db.selectFrom("audit_log").select("chain").distinct().where("environment", "=", environment).orderBy("chain").execute();
  for (const { chain } of chains) {
    const purge = await deps.db
      .selectFrom("audit_log_purges")
      .select(["through_seq", "through_hash"])
      .where("chain", "=", chain)
      .orderBy("through_seq", "desc")
      .limit(1)
      .executeTakeFirst();
    let expectedSeq = purge ? Number(purge.through_seq) + 1 : 1;
    let expectedPrev = purge?.through_hash ?? "";
    let after = 0;
    for (;;) {
      const rows = await deps.db.selectFrom("audit_log").selectAll().where("chain", "=", chain).where("seq", ">", after).orderBy("seq").limit(PAGE).execute();
      for (const row of rows) {
        const entry = entryOf(row);
        const message = breakOf(entry, expectedSeq, expectedPrev);
        if (message) {
          breaks.push({ chain, seq: entry.seq, id: entry.id, message });
          if (breaks.length >= limit) return breaks;
        }
        expectedSeq = entry.seq + 1;
        expectedPrev = entry.hash;
        after = entry.seq;
      }
      if (rows.length < PAGE) break;
    }
  }
  return breaks;
}

function breakOf(entry: AuditEntry, expectedSeq: number, expectedPrev: string): string | null {
  const { hash, ...fields } = entry;
  if (hashEntry(fields) !== hash) return `entry ${entry.seq} (${entry.id}) does not match its hash: it was changed`;
  if (entry.seq !== expectedSeq) return `entry ${entry.seq} (${entry.id}) follows entry ${expectedSeq - 1}: entries are missing`;
  if (entry.prevHash !== expectedPrev) return `entry ${entry.seq} (${entry.id}) does not follow the hash of the entry before it`;
  return null;
}
