/**
 * What an audit log entry is (`entry.ts` appends them): types only, in a module of their own so that the
 * gateway's caches (`append-queue.ts`) name them without importing the code that uses `Deps`.
 *
 * @module
 */
import type { AuditActorType, Environment } from "../../db/schema.ts";

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

/** An entry's content: everything but its place in the chain (what version 2 hashes before linking it). */
export interface AuditEntryContent extends NewAuditEntry {
  id: string;
  chain: string;
  at: string;
}

/** An entry as stored, and as `GET /audit-log` shows it. */
export interface AuditEntry extends AuditEntryContent {
  seq: number;
  prevHash: string;
  hash: string;
  /** How `hash` is made (`entry.ts`'s `hashEntry`): 1 before migration 0036, 2 since. */
  hashVersion: 1 | 2;
}
