/**
 * What a tenant can ask of its deliveries by hand (contract §6): deliver one again now, replay a window
 * of events to an endpoint, send a `webhook.test` event. Every function is scoped by tenant and
 * environment, and answers 404 for anything else.
 *
 * A delivery is one row per (event, endpoint) — the unique index says so — so a retry or a replay
 * re-opens the existing row rather than adding one: it goes back to `pending`, due now, its attempts
 * kept, so the delivery log of that event at that endpoint stays one story. The attempt count carries on
 * too, and with it the retry schedule: a delivery that had used up its attempts gets exactly one more,
 * one that had succeeded at its first attempt gets the rest of the schedule if the new attempt fails.
 */
import { ConflictError, ValidationError } from "../../errors.ts";
import { sharedNow } from "../../db/shared-clock.ts";
import type { Deps } from "../deps.ts";
import { recordEvent } from "../events/record-event.ts";
import { newId } from "../ids.ts";
import { enqueueManualDelivery } from "../../jobs/queues.ts";
import { getDelivery, type DeliveryScope, type DeliveryView } from "./delivery-log.ts";
import { findEndpoint } from "./endpoints.ts";
import { scheduleDeliveries } from "./schedule-deliveries.ts";

/** The longest window a replay may cover (contract §6). */
export const MAX_REPLAY_WINDOW_MS = 14 * 86_400_000;
/** Events re-opened per transaction during a replay. */
const REPLAY_BATCH = 500;

/**
 * Delivers one delivery again now, whatever its state. A delivery whose attempt is under way right now
 * is left to it (the answer shows it pending).
 *
 * @example
 * ```ts
 * const delivery = await retryDelivery(deps, { tenantId, environment: "sandbox" }, "dlv_01J…");
 * delivery.state; // "pending"
 * ```
 * @throws {NotFoundError} when the delivery is not the caller's.
 * @throws {ConflictError} when its endpoint was deleted or is disabled.
 */
export async function retryDelivery(deps: Deps, scope: DeliveryScope, deliveryId: string): Promise<DeliveryView> {
  const current = await getDelivery(deps, scope, deliveryId);
  if (current.endpointId === null && current.targetUrl === null) throw new ConflictError("The delivery's webhook endpoint was deleted");
  if (current.endpointId !== null) {
    const endpoint = await findEndpoint(deps, scope, current.endpointId);
    if (!endpoint.enabled) throw new ConflictError("The webhook endpoint is disabled; enable it first");
  }
  const now = deps.now();
  const reopened = await deps.db
    .updateTable("deliveries")
    .set({ state: "pending", next_attempt_at: sharedNow(deps), locked_until: null, updated_at: now })
    .where("id", "=", deliveryId)
    .where("tenant_id", "=", scope.tenantId)
    .where("environment", "=", scope.environment)
    .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<", sharedNow(deps))]))
    .returning(["id", "attempts"])
    .executeTakeFirst();
  if (!reopened) return getDelivery(deps, scope, deliveryId);
  // Read before the attempt is queued: a fast worker could otherwise have made it already, and the answer
  // would say `succeeded` (or `failed`) for a retry that was only just asked for.
  const view = await getDelivery(deps, scope, deliveryId);
  await enqueueManualDelivery(deps, { deliveryId, attempt: reopened.attempts + 1 });
  return view;
}

/** The endpoint (enabled) and the window `[since, until]` a replay or a recovery covers: at most 14 days, `until` now by default. */
async function windowOnEndpoint(deps: Deps, scope: DeliveryScope, endpointId: string, window: { since: Date | string; until?: Date | string | undefined }) {
  const endpoint = await findEndpoint(deps, scope, endpointId);
  const now = deps.now();
  const since = toDate(window.since, "since");
  const until = window.until === undefined ? now : toDate(window.until, "until");
  if (until.getTime() <= since.getTime()) throw new ValidationError(["until must be after since"]);
  if (until.getTime() - since.getTime() > MAX_REPLAY_WINDOW_MS) throw new ValidationError(["since must be at most 14 days before until"]);
  if (!endpoint.enabled) throw new ConflictError("The webhook endpoint is disabled; enable it first");
  return { endpoint, now, since, until };
}

function toDate(value: Date | string, field: string): Date {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) throw new ValidationError([`${field} must be an RFC 3339 date-time`]);
  return date;
}

/**
 * Re-delivers to one endpoint every event of the window `[since, until]` (at most 14 days; `until`
 * defaults to now) of the endpoint's tenant and environment whose type it subscribes to now, including
 * events from before it existed. `webhook.test` events are replayed only to the endpoint they were sent
 * to. An event the endpoint already has a delivery of re-opens that delivery; any other gets a new one.
 *
 * @example
 * ```ts
 * await replayEndpoint(deps, scope, "whe_01J…", { since: new Date(Date.now() - 86_400_000) });
 * // { endpointId: "whe_01J…", since: "…", until: "…", replayed: 12 }
 * ```
 * @throws {NotFoundError} when the endpoint is not the caller's.
 * @throws {ValidationError} for a window that is empty, inverted or longer than 14 days.
 * @throws {ConflictError} when the endpoint is disabled.
 */
export async function replayEndpoint(
  deps: Deps,
  scope: DeliveryScope,
  endpointId: string,
  window: { since: Date | string; until?: Date | string | undefined },
): Promise<{ endpointId: string; since: string; until: string; replayed: number }> {
  const { endpoint, now, since, until } = await windowOnEndpoint(deps, scope, endpointId, window);

  let replayed = 0;
  let after: string | undefined;
  for (;;) {
    let events = deps.db
      .selectFrom("events")
      .select("events.id")
      .where("events.tenant_id", "=", scope.tenantId)
      .where("events.environment", "=", scope.environment)
      .where("events.created_at", ">=", since)
      .where("events.created_at", "<=", until)
      .where((eb) =>
        eb.or([
          eb.and([eb("events.type", "!=", "webhook.test"), endpoint.event_types ? eb("events.type", "in", endpoint.event_types) : eb.lit(true)]),
          eb.exists(
            eb
              .selectFrom("deliveries")
              .select("deliveries.id")
              .whereRef("deliveries.event_id", "=", "events.id")
              .where("deliveries.endpoint_id", "=", endpointId),
          ),
        ]),
      )
      .orderBy("events.id")
      .limit(REPLAY_BATCH);
    if (after) events = events.where("events.id", ">", after);
    const batch = await events.execute();
    if (batch.length === 0) break;
    after = batch[batch.length - 1]!.id;

    const eventIds = batch.map((event) => event.id);
    // Re-open the deliveries that exist, then add the missing ones, without ever waiting for a delivery's
    // row lock. A worker's lease statement locks its rows in no particular order, so a replay that waited
    // for one row while holding others could deadlock with it (PostgreSQL then killed one of the two: a 500,
    // or a lost lease). A row locked right now is being leased, recorded or re-opened by a concurrent replay:
    // its attempt is under way, so it is left to it, like a delivery whose lease is held.
    const reopened = await deps.db
      .updateTable("deliveries")
      .set({ state: "pending", next_attempt_at: sharedNow(deps), locked_until: null, updated_at: now })
      .where("id", "in", (eb) =>
        eb
          .selectFrom("deliveries as d")
          .select("d.id")
          .where("d.endpoint_id", "=", endpointId)
          .where("d.event_id", "in", eventIds)
          .where((eb) => eb.or([eb("d.locked_until", "is", null), eb("d.locked_until", "<", sharedNow(deps))]))
          .forUpdate()
          .skipLocked(),
      )
      .returning(["id", "attempts"])
      .execute();
    // An insert waits only for another replay inserting the same (event, endpoint); every replay inserts in
    // event order, so those waits cannot form a cycle. An existing row is not locked (`do nothing`).
    const inserted = await deps.db
      .insertInto("deliveries")
      .values(
        batch.map((event) => ({
          id: newId("dlv"),
          event_id: event.id,
          tenant_id: scope.tenantId,
          environment: scope.environment,
          endpoint_id: endpointId,
          target_url: null,
          next_attempt_at: sharedNow(deps),
          created_at: now,
          updated_at: now,
        })),
      )
      .onConflict((oc) => oc.columns(["event_id", "endpoint_id"]).where("endpoint_id", "is not", null).doNothing())
      .returning(["id", "attempts"])
      .execute();
    reopened.push(...inserted);
    for (const row of reopened) await enqueueManualDelivery(deps, { deliveryId: row.id, attempt: row.attempts + 1 });
    replayed += reopened.length;
    if (batch.length < REPLAY_BATCH) break;
  }
  return { endpointId, since: since.toISOString(), until: until.toISOString(), replayed };
}

/**
 * Delivers again every delivery to this endpoint that failed — used up its attempts, or was refused for
 * good — among those made in a window (at most 14 days), as Svix's "recover failed messages" does. Unlike
 * {@link replayEndpoint}, deliveries that succeeded or are still under way are left alone, and no delivery
 * is added. Each re-opened delivery gets one more attempt, then the rest of the retry schedule if it
 * fails again (see the module's comment).
 *
 * @example
 * ```ts
 * await recoverEndpoint(deps, { tenantId, environment: "sandbox" }, "whe_01J…", { since: "2026-01-05T00:00:00Z" });
 * // { endpointId: "whe_01J…", since, until, recovered: 3 }
 * ```
 * @throws {NotFoundError} when the endpoint is not the caller's.
 * @throws {ValidationError} for an empty window or one over 14 days.
 * @throws {ConflictError} when the endpoint is disabled.
 */
export async function recoverEndpoint(
  deps: Deps,
  scope: DeliveryScope,
  endpointId: string,
  window: { since: Date | string; until?: Date | string | undefined },
): Promise<{ endpointId: string; since: string; until: string; recovered: number }> {
  const { now, since, until } = await windowOnEndpoint(deps, scope, endpointId, window);

  let recovered = 0;
  for (;;) {
    // A failed delivery has no lease; `skip locked` still keeps off a row a concurrent retry or replay is
    // re-opening right now (it will be pending, which is what this call wants too). Each batch is its own
    // statement: a re-opened row is pending, so the next batch does not see it again.
    const reopened = await deps.db
      .updateTable("deliveries")
      .set({ state: "pending", next_attempt_at: sharedNow(deps), locked_until: null, updated_at: now })
      .where("id", "in", (eb) =>
        eb
          .selectFrom("deliveries as d")
          .select("d.id")
          .where("d.endpoint_id", "=", endpointId)
          .where("d.tenant_id", "=", scope.tenantId)
          .where("d.state", "=", "failed")
          .where("d.created_at", ">=", since)
          .where("d.created_at", "<=", until)
          .orderBy("d.id")
          .limit(REPLAY_BATCH)
          .forUpdate()
          .skipLocked(),
      )
      .returning(["id", "attempts"])
      .execute();
    for (const row of reopened) await enqueueManualDelivery(deps, { deliveryId: row.id, attempt: row.attempts + 1 });
    recovered += reopened.length;
    if (reopened.length < REPLAY_BATCH) break;
  }
  return { endpointId, since: since.toISOString(), until: until.toISOString(), recovered };
}

/**
 * Records a `webhook.test` event for one endpoint (whatever its filters) and sends it.
 *
 * @example
 * ```ts
 * const { eventId, deliveryId } = await sendTestEvent(deps, scope, "whe_01J…");
 * ```
 * @throws {NotFoundError} when the endpoint is not the caller's.
 * @throws {ConflictError} when the endpoint is disabled.
 */
export async function sendTestEvent(deps: Deps, scope: DeliveryScope, endpointId: string): Promise<{ eventId: string; deliveryId: string }> {
  const endpoint = await findEndpoint(deps, scope, endpointId);
  if (!endpoint.enabled) throw new ConflictError("The webhook endpoint is disabled; enable it first");
  const recorded = await deps.db.transaction().execute((tx) =>
    recordEvent(tx, deps.now(), {
      tenantId: scope.tenantId,
      environment: scope.environment,
      type: "webhook.test",
      data: { endpointId, message: "A test event from Passerelle" },
      onlyEndpointId: endpointId,
    }),
  );
  const deliveryId = recorded.deliveryIds[0];
  // Disabled between the check and the transaction: the event is kept, with nothing to send.
  if (!deliveryId) throw new ConflictError("The webhook endpoint is disabled; enable it first");
  await scheduleDeliveries(deps, recorded.deliveryIds);
  return { eventId: recorded.eventId, deliveryId };
}
