/**
 * Reading the audit log (`GET /audit-log` for a shop, `GET /admin/audit-log` for the operator): newest first, in
 * the contract's list shape, filtered by who, what, which id and when.
 *
 * @module
 */
import { sql } from "kysely";
import type { Deps } from "../deps.ts";
import { decodeCursor, toPage } from "../paging.ts";
import { type AuditEntry, entryOf } from "./entry.ts";

export interface AuditLogQuery {
  limit: number;
  cursor?: string | undefined;
  /** Only this shop's entries (a shop reading its own: always set); unset, every entry (the operator). */
  tenantId?: string | undefined;
  /** A person's id, an API key's id, or a token's subject. */
  actor?: string | undefined;
  /** A procedure, e.g. `payouts.refund`. */
  action?: string | undefined;
  /** An id the call named or made. */
  target?: string | undefined;
  outcome?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
}

/** A page of entries, newest first. */
export async function listAuditLog(deps: Pick<Deps, "db">, query: AuditLogQuery): Promise<{ data: AuditEntry[]; nextCursor: string | null }> {
  let select = deps.db.selectFrom("audit_log").selectAll();
  if (query.tenantId !== undefined) select = select.where("tenant_id", "=", query.tenantId);
  if (query.actor) select = select.where("actor_id", "=", query.actor);
  if (query.action) select = select.where("action", "=", query.action);
  if (query.target) select = select.where(sql<boolean>`targets @> jsonb_build_array(${query.target}::text)`);
  if (query.outcome) select = select.where("outcome", "=", query.outcome);
  if (query.since) select = select.where("at", ">=", new Date(query.since));
  if (query.until) select = select.where("at", "<", new Date(query.until));
  if (query.cursor) select = select.where("id", "<", decodeCursor("aud", query.cursor));
  const rows = await select
    .orderBy("id", "desc")
    .limit(query.limit + 1)
    .execute();
  const page = toPage(rows, query.limit);
  return { data: page.rows.map(entryOf), nextCursor: page.nextCursor };
}
