/**
 * Recording an event: inside the caller's database transaction — the one that changes the state the
 * event is about — insert the event and one delivery row per enabled endpoint of that tenant and
 * environment subscribed to its type, plus an optional direct target (a direct payment's
 * `callback_url`). Nothing is sent here: after the transaction commits, the caller hands the delivery ids
 * to {@link scheduleDeliveries}; if that is lost, the sweeper finds the due rows (contract §6: never lost).
 *
 * @example
 * ```ts
 * const recorded = await deps.db.transaction().execute(async (tx) => {
 *   await tx.updateTable("payments").set({ state: "succeeded" }).where("id", "=", paymentId).execute();
 *   return recordEvent(tx, deps.now(), { tenantId, environment, type: "payment.completed", data, paymentId });
 * });
 * await scheduleDeliveries(deps, recorded.deliveryIds);
 * ```
 */
import { sql, type Kysely, type Transaction } from "kysely";
import type { Environment } from "../../config.ts";
import type { Database, EventType, JsonValue } from "../../db/schema.ts";
import { newId } from "../ids.ts";

export interface EventInput {
  tenantId: string;
  environment: Environment;
  type: EventType;
  data: Record<string, JsonValue>;
  /** The payment the event is about, when there is one. */
  paymentId?: string;
  /** Also deliver to this URL (signed with the tenant's callback secret). */
  directTargetUrl?: string;
  /** Deliver to this endpoint only, whatever its filters (`webhook.test`, replays). */
  onlyEndpointId?: string;
}

export interface RecordedEvent {
  eventId: string;
  deliveryIds: string[];
}

/** Inserts the event and its deliveries with `db` (pass the caller's transaction). */
export async function recordEvent(db: Transaction<Database> | Kysely<Database>, now: Date, input: EventInput): Promise<RecordedEvent> {
  const eventId = newId("evt");
  await db
    .insertInto("events")
    .values({
      id: eventId,
      tenant_id: input.tenantId,
      environment: input.environment,
      type: input.type,
      data: input.data,
      payment_id: input.paymentId ?? null,
      created_at: now,
    })
    .execute();

  let endpoints = db
    .selectFrom("webhook_endpoints")
    .select("id")
    .where("tenant_id", "=", input.tenantId)
    .where("environment", "=", input.environment)
    .where("enabled", "=", true);
  endpoints = input.onlyEndpointId
    ? endpoints.where("id", "=", input.onlyEndpointId)
    : endpoints.where((eb) => eb.or([eb("event_types", "is", null), sql<boolean>`jsonb_exists(event_types, ${input.type})`]));
  const targets: { endpoint_id: string | null; target_url: string | null }[] = (await endpoints.execute()).map((e) => ({ endpoint_id: e.id, target_url: null }));
  if (input.directTargetUrl) targets.push({ endpoint_id: null, target_url: input.directTargetUrl });
  if (targets.length === 0) return { eventId, deliveryIds: [] };

  const rows = targets.map((target) => ({
    id: newId("dlv"),
    event_id: eventId,
    tenant_id: input.tenantId,
    environment: input.environment,
    ...target,
    next_attempt_at: now,
    created_at: now,
    updated_at: now,
  }));
  await db.insertInto("deliveries").values(rows).execute();
  return { eventId, deliveryIds: rows.map((row) => row.id) };
}
