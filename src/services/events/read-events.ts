/**
 * A tenant's event log (contract §6): the events of the last 30 days in the caller's environment, newest
 * first, optionally of one type or about one payment.
 */
import type { Environment } from "../../config.ts";
import type { EventType } from "../../db/schema.ts";
import { NotFoundError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { isId } from "../ids.ts";
import { decodeCursor, toPage } from "../paging.ts";
import { eventEnvelope, type EventEnvelope } from "./event-types.ts";

/** How far back `GET /events` reaches. */
export const EVENT_LOG_DAYS = 30;

interface Scope {
  tenantId: string;
  environment: Environment;
}

function since(deps: Pick<Deps, "now">): Date {
  return new Date(deps.now().getTime() - EVENT_LOG_DAYS * 86_400_000);
}

/** Events newest first, with paging. */
export async function listEvents(
  deps: Pick<Deps, "db" | "now">,
  scope: Scope,
  input: { limit: number; cursor?: string; type?: EventType; paymentId?: string },
): Promise<{ data: EventEnvelope[]; nextCursor: string | null }> {
  let query = deps.db
    .selectFrom("events")
    .selectAll()
    .where("tenant_id", "=", scope.tenantId)
    .where("environment", "=", scope.environment)
    .where("created_at", ">=", since(deps))
    .orderBy("id", "desc")
    .limit(input.limit + 1);
  if (input.type) query = query.where("type", "=", input.type);
  if (input.paymentId !== undefined) query = query.where("payment_id", "=", input.paymentId);
  if (input.cursor) query = query.where("id", "<", decodeCursor("evt", input.cursor));
  const { rows, nextCursor } = toPage(await query.execute(), input.limit);
  return { data: rows.map(eventEnvelope), nextCursor };
}

/** One event of the tenant in that environment; 404 otherwise. */
export async function getEvent(deps: Pick<Deps, "db" | "now">, scope: Scope, eventId: string): Promise<EventEnvelope> {
  const row = isId("evt", eventId)
    ? await deps.db
        .selectFrom("events")
        .selectAll()
        .where("id", "=", eventId)
        .where("tenant_id", "=", scope.tenantId)
        .where("environment", "=", scope.environment)
        .where("created_at", ">=", since(deps))
        .executeTakeFirst()
    : undefined;
  if (!row) throw new NotFoundError("Event not found");
  return eventEnvelope(row);
}
