/**
 * The delivery log (contract §6): each delivery of an endpoint or of a payment's events, newest first,
 * with every attempt's time, status code, duration, error and the first 2 KiB of the answer.
 */
import type { Environment } from "../../config.ts";
import type { Delivery, DeliveryAttempt, DeliveryState, EventType } from "../../db/schema.ts";
import { NotFoundError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { isId } from "../ids.ts";
import { decodeCursor, toPage } from "../paging.ts";
import { findEndpoint } from "./endpoints.ts";

/** Whose deliveries: a tenant in one environment. */
export interface DeliveryScope {
  tenantId: string;
  environment: Environment;
}

/** One HTTP attempt. */
export interface DeliveryAttemptView {
  attempt: number;
  attemptedAt: string;
  url: string;
  /** null when no answer came (timeout, refused connection, refused target). */
  status: number | null;
  durationMs: number;
  error: string | null;
  /** The first 2 KiB of the answer. */
  responseBody: string | null;
}

/** One event to one target, with its attempts, oldest first. */
export interface DeliveryView {
  id: string;
  eventId: string;
  eventType: EventType;
  /** The tenant endpoint; null for a payment's `callback_url`, or once the endpoint was deleted. */
  endpointId: string | null;
  /** The direct target (a payment's `callback_url`); null for an endpoint. */
  targetUrl: string | null;
  state: DeliveryState;
  attemptCount: number;
  /** When the next attempt is due; null unless pending. */
  nextAttemptAt: string | null;
  lastStatus: number | null;
  lastError: string | null;
  deliveredAt: string | null;
  createdAt: string;
  updatedAt: string;
  attempts: DeliveryAttemptView[];
}

export function deliveryAttemptView(row: DeliveryAttempt): DeliveryAttemptView {
  return {
    attempt: row.attempt,
    attemptedAt: row.attempted_at.toISOString(),
    url: row.url,
    status: row.status,
    durationMs: row.duration_ms,
    error: row.error,
    responseBody: row.response_body,
  };
}

export function deliveryView(row: Delivery & { event_type: EventType }, attempts: DeliveryAttempt[]): DeliveryView {
  return {
    id: row.id,
    eventId: row.event_id,
    eventType: row.event_type,
    endpointId: row.endpoint_id,
    targetUrl: row.target_url,
    state: row.state,
    attemptCount: row.attempts,
    nextAttemptAt: row.state === "pending" ? row.next_attempt_at.toISOString() : null,
    lastStatus: row.last_status,
    lastError: row.last_error,
    deliveredAt: row.delivered_at?.toISOString() ?? null,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    attempts: attempts.map(deliveryAttemptView),
  };
}

function deliveriesOf(deps: Pick<Deps, "db">, scope: DeliveryScope) {
  return deps.db
    .selectFrom("deliveries")
    .innerJoin("events", "events.id", "deliveries.event_id")
    .selectAll("deliveries")
    .select("events.type as event_type")
    .where("deliveries.tenant_id", "=", scope.tenantId)
    .where("deliveries.environment", "=", scope.environment);
}

/** Attaches each delivery's attempts (one query for the page). */
async function withAttempts(deps: Pick<Deps, "db">, rows: (Delivery & { event_type: EventType })[]): Promise<DeliveryView[]> {
  if (rows.length === 0) return [];
  const attempts = await deps.db
    .selectFrom("delivery_attempts")
    .selectAll()
    .where(
      "delivery_id",
      "in",
      rows.map((row) => row.id),
    )
    .orderBy("delivery_id")
    .orderBy("attempt")
    .orderBy("id")
    .execute();
  const byDelivery = new Map<string, DeliveryAttempt[]>();
  for (const attempt of attempts) byDelivery.set(attempt.delivery_id, [...(byDelivery.get(attempt.delivery_id) ?? []), attempt]);
  return rows.map((row) => deliveryView(row, byDelivery.get(row.id) ?? []));
}

/**
 * Deliveries newest first, of one endpoint, of one payment's events, or of the whole tenant.
 *
 * @example
 * ```ts
 * const page = await listDeliveries(deps, { tenantId, environment: "sandbox" }, { endpointId: "whe_…", limit: 20 });
 * page.data[0]?.attempts[0]; // { attempt: 1, attemptedAt, url, status: 200, durationMs: 41, error: null, responseBody: "ok" }
 * ```
 * @throws {NotFoundError} when the endpoint or payment is not the caller's.
 */
export async function listDeliveries(
  deps: Pick<Deps, "db">,
  scope: DeliveryScope,
  input: { endpointId?: string; paymentId?: string; state?: DeliveryState | undefined; limit: number; cursor?: string },
): Promise<{ data: DeliveryView[]; nextCursor: string | null }> {
  let query = deliveriesOf(deps, scope)
    .orderBy("deliveries.id", "desc")
    .limit(input.limit + 1);
  if (input.state !== undefined) query = query.where("deliveries.state", "=", input.state);
  if (input.endpointId !== undefined) {
    await findEndpoint(deps, scope, input.endpointId);
    query = query.where("deliveries.endpoint_id", "=", input.endpointId);
  }
  if (input.paymentId !== undefined) {
    await assertPaymentInScope(deps, scope, input.paymentId);
    query = query.where("events.payment_id", "=", input.paymentId);
  }
  if (input.cursor) query = query.where("deliveries.id", "<", decodeCursor("dlv", input.cursor));
  const { rows, nextCursor } = toPage(await query.execute(), input.limit);
  return { data: await withAttempts(deps, rows), nextCursor };
}

/** One delivery of the caller's, with its attempts; 404 otherwise. */
export async function getDelivery(deps: Pick<Deps, "db">, scope: DeliveryScope, deliveryId: string): Promise<DeliveryView> {
  const row = isId("dlv", deliveryId) ? await deliveriesOf(deps, scope).where("deliveries.id", "=", deliveryId).executeTakeFirst() : undefined;
  if (!row) throw new NotFoundError("Delivery not found");
  const [view] = await withAttempts(deps, [row]);
  return view!;
}

async function assertPaymentInScope(deps: Pick<Deps, "db">, scope: DeliveryScope, paymentId: string): Promise<void> {
  const found = isId("pay", paymentId)
    ? await deps.db
        .selectFrom("payments")
        .select("id")
        .where("id", "=", paymentId)
        .where("tenant_id", "=", scope.tenantId)
        .where("environment", "=", scope.environment)
        .executeTakeFirst()
    : undefined;
  if (!found) throw new NotFoundError("Payment not found");
}
