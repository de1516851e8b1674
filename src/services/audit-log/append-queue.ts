/**
 * The audit entries a gateway has waiting for their chain's next append (`deps.caches.auditAppends`, filled and
 * drained by `entry.ts`): its own module, of types and one constructor, so that `caches.ts` builds it without
 * importing the code that uses `Deps`.
 *
 * @module
 */
import type { AuditEntry, NewAuditEntry } from "./entry-types.ts";

/** One call's entry waiting to be appended, and how to tell the call. */
export interface WaitingEntry {
  entry: NewAuditEntry;
  resolve(stored: AuditEntry): void;
  reject(error: unknown): void;
}

/** A chain's entries waiting while an append of the chain runs in this gateway. */
export interface ChainQueue {
  waiting: WaitingEntry[];
}

/** By chain (`ten_…:sandbox`); a chain is here only while an append of it runs. */
export type AuditAppends = Map<string, ChainQueue>;

/** Empty, for `createGatewayCaches`. */
export function createAuditAppends(): AuditAppends {
  return new Map();
}
