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
 *   await tx.updateTable("permit_schedules").set({ status: "past_due" }).where("id", "=", scheduleId).execute();
 *   return recordEvent(tx, deps.now(), { tenantId, environment, type: "permit.schedule.past_due", data });
 * });
 * await scheduleDeliveries(deps, recorded.deliveryIds);
 * ```
 */
import { sql, type Expression, type ExpressionBuilder, type Kysely, type SqlBool, type Transaction } from "kysely";
import type { Environment } from "../../config.ts";
import { precompile } from "../../db/precompiled.ts";
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

/** The values of {@link eventStatement}. */
interface EventValues {
  eventId: string;
  tenantId: string;
  environment: Environment;
  type: EventType;
  data: Record<string, JsonValue>;
  paymentId: string | null;
  now: Date;
  onlyEndpointId: string;
}

/**
 * The event's insert, and in the same statement the endpoints it goes to: the enabled endpoints of that
 * tenant and environment subscribed to its type (shape `subscribed`), or one given endpoint whatever its
 * filters (shape `only`). Built and compiled once per shape (`precompile`).
 */
const eventStatement = precompile<EventValues>()((db, p, shape) =>
  db
    .with("event", (db) =>
      db
        .insertInto("events")
        .values({ id: p.eventId, tenant_id: p.tenantId, environment: p.environment, type: p.type, data: p.data, payment_id: p.paymentId, created_at: p.now })
        .returning("id"),
    )
    .selectFrom("webhook_endpoints")
    .select("webhook_endpoints.id")
    .where("tenant_id", "=", p.tenantId)
    .where("environment", "=", p.environment)
    .where("enabled", "=", true)
    .where((eb) => (shape === "only" ? eb("webhook_endpoints.id", "=", p.onlyEndpointId) : subscribesTo(eb, p.type)))
    .orderBy("webhook_endpoints.id"),
);

/**
 * An endpoint (a `webhook_endpoints` row in scope) takes events of `type`: no filter, or the type in its
 * filter. With `enabled`, the rule that picks an event's deliveries — also used by the direct payment's
 * one-statement approval to know that an event has none.
 */
export function subscribesTo(eb: ExpressionBuilder<Database, "webhook_endpoints">, type: unknown): Expression<SqlBool> {
  return eb.or([eb("webhook_endpoints.event_types", "is", null), sql<boolean>`jsonb_exists(webhook_endpoints.event_types, ${type})`]);
}

/**
 * The deliveries of one event, one row per element of the arrays (an endpoint or a direct URL each). They are
 * due at once on every clock: `next_attempt_at` is the earlier of the writer's clock and the database's
 * (`db/shared-clock.ts`), so the sweep of a worker on the database's clock finds them due even when the
 * process that wrote them has a clock ahead (one 184 s ahead made them wait that long), and a test's
 * injected clock still finds them due on its own time.
 */
const deliveriesStatement = precompile<{
  ids: string[];
  endpointIds: (string | null)[];
  targetUrls: (string | null)[];
  eventId: string;
  tenantId: string;
  environment: Environment;
  now: Date;
}>()((db, p) =>
  db
    .insertInto("deliveries")
    .columns(["id", "event_id", "tenant_id", "environment", "endpoint_id", "target_url", "next_attempt_at", "created_at", "updated_at"])
    .expression(
      sql`select t.id, ${p.eventId}::text, ${p.tenantId}::text, ${p.environment}::text, t.endpoint_id, t.target_url,
                 least(${p.now}::timestamptz, date_trunc('milliseconds', now())), ${p.now}::timestamptz, ${p.now}::timestamptz
          from unnest(${p.ids}::text[], ${p.endpointIds}::text[], ${p.targetUrls}::text[]) as t(id, endpoint_id, target_url)`,
    ),
);

/** Inserts the event and its deliveries with `db` (pass the caller's transaction): two statements. */
export async function recordEvent(db: Transaction<Database> | Kysely<Database>, now: Date, input: EventInput): Promise<RecordedEvent> {
  const eventId = newId("evt");
  const { rows: endpoints } = await eventStatement(
    db,
    {
      eventId,
      tenantId: input.tenantId,
      environment: input.environment,
      type: input.type,
      data: input.data,
      paymentId: input.paymentId ?? null,
      now,
      onlyEndpointId: input.onlyEndpointId ?? "",
    },
    input.onlyEndpointId ? "only" : "subscribed",
  );
  const targets: { endpoint_id: string | null; target_url: string | null }[] = endpoints.map((e) => ({ endpoint_id: e.id, target_url: null }));
  if (input.directTargetUrl) targets.push({ endpoint_id: null, target_url: input.directTargetUrl });
  if (targets.length === 0) return { eventId, deliveryIds: [] };

  const ids = targets.map(() => newId("dlv"));
  await deliveriesStatement(db, {
    ids,
    endpointIds: targets.map((t) => t.endpoint_id),
    targetUrls: targets.map((t) => t.target_url),
    eventId,
    tenantId: input.tenantId,
    environment: input.environment,
    now,
  });
  return { eventId, deliveryIds: ids };
}
