/**
 * The reconciliation's differences as a list (issue 29: the dashboard pages them as it pages every list): the
 * records whose provider state differs from ours, last seen in a window, newest sighting first, in the
 * contract's list shape (`{ data, nextCursor }`, `?limit=&cursor=`). The report (`reconciliation.ts`) still
 * carries the first thousand, for its CSV and its callers.
 *
 * @module
 */
import { ValidationError } from "../../errors.ts";
import type { Environment } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { differenceView, type Reconciliation, reconciliationWindow } from "./reconciliation.ts";

type DifferenceView = Reconciliation["differences"][number];

export interface ListDifferencesInput {
  /** One tenant's; undefined: every tenant's (the operator's). */
  tenantId?: string | undefined;
  environment: Environment;
  from?: string | undefined;
  to?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

// A difference is keyed by its record's id, and the list runs by its last sighting: the cursor holds both.
function encodeDifferenceCursor(row: { last_seen_at: Date; subject_id: string }): string {
  return Buffer.from(`${row.last_seen_at.toISOString()}|${row.subject_id}`).toString("base64url");
}

function decodeDifferenceCursor(cursor: string): { lastSeenAt: Date; subjectId: string } {
  const text = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("utf8") : "";
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z)\|((?:pay|po|rf)_[0-9A-HJKMNP-TV-Z]{26})$/.exec(text);
  const lastSeenAt = match ? new Date(match[1]!) : undefined;
  if (!match || !lastSeenAt || Number.isNaN(lastSeenAt.getTime())) throw new ValidationError(["cursor must be a nextCursor returned by an earlier page"]);
  return { lastSeenAt, subjectId: match[2]! };
}

/**
 * One page of the differences last seen in `[from, to)` (default the last 30 days), newest sighting first.
 *
 * @example
 * ```ts
 * const page = await listDifferences(deps, { tenantId, environment: "sandbox", limit: 20 });
 * const next = await listDifferences(deps, { tenantId, environment: "sandbox", limit: 20, cursor: page.nextCursor! });
 * ```
 */
export async function listDifferences(
  deps: Pick<Deps, "db" | "now">,
  input: ListDifferencesInput,
): Promise<{ data: DifferenceView[]; nextCursor: string | null }> {
  const { from, to } = reconciliationWindow(deps, input);
  let query = deps.db
    .selectFrom("reconciliation_differences")
    .selectAll()
    .where("environment", "=", input.environment)
    .where("last_seen_at", ">=", from)
    .where("last_seen_at", "<", to);
  if (input.tenantId !== undefined) query = query.where("tenant_id", "=", input.tenantId);
  if (input.cursor !== undefined) {
    const after = decodeDifferenceCursor(input.cursor);
    query = query.where((eb) =>
      eb.or([eb("last_seen_at", "<", after.lastSeenAt), eb.and([eb("last_seen_at", "=", after.lastSeenAt), eb("subject_id", "<", after.subjectId)])]),
    );
  }
  const rows = await query
    .orderBy("last_seen_at", "desc")
    .orderBy("subject_id", "desc")
    .limit(input.limit + 1)
    .execute();
  const page = rows.slice(0, input.limit);
  return {
    data: page.map(differenceView),
    nextCursor: rows.length > input.limit ? encodeDifferenceCursor(page[page.length - 1]!) : null,
  };
}
