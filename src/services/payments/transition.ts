/**
 * The one writer of a payment's state (issue 26 point 5): every move of a payment — a direct payment's
 * provider report or our own failure, a checkout's confirmation, a permit charge's settlement, a refund that
 * gives all of it back — is written here, with the event it causes and that event's deliveries, in the
 * caller's transaction or as one statement. The callers decide *what* changes (the provider's word, the
 * receipt, the refunded amount); this module decides nothing but *how* it is written, and refuses a move the
 * order of states forbids (`state-order.ts`: nothing goes back, `failed` and `cancelled` only replace
 * `pending`). The ledger follows the state by itself: its trigger credits a payment that becomes paid.
 *
 * Three ways to write a move, the same move in each:
 *
 * - {@link writeMove}: on a row the caller locked (`for update`, {@link lockPaymentRow}) in its transaction;
 * - {@link writeMoveIfUnchanged}: without the lock, applied only while the row still holds what the caller
 *   read in it (else nothing is written and the caller decides again under the lock);
 * - {@link writeMoveWithoutTargets}: that guarded update and its event in one statement, when the event has
 *   no delivery to make (nothing is written when it has one: the caller falls back to a transaction).
 *
 * @example
 * ```ts
 * const written = await deps.db.transaction().execute(async (tx) => {
 *   const row = await lockPaymentRow(tx, paymentId);
 *   return writeMove(tx, deps.now(), row, { changes: { state: "succeeded" }, event: (after) => ({ type: "payment.completed", data: viewOf(after) }) });
 * });
 * await scheduleDeliveries(deps, written.deliveryIds);
 * ```
 *
 * @module
 */
import { sql, type Kysely, type QueryCreator, type Transaction } from "kysely";
import { precompile } from "../../db/precompiled.ts";
import type { Database, EventType, JsonValue, Payment, PaymentUpdate } from "../../db/schema.ts";
import { recordEvent, subscribesTo } from "../events/record-event.ts";
import { paysLink, recordLinkPaid } from "../payment-links/link-paid.ts";
import { recordRescueOffer } from "../rescue/offer.ts";
import { newId } from "../ids.ts";
import { mayMove } from "./state-order.ts";

/** The event a move causes, from the row as it is after the move. */
export interface MoveEvent {
  type: EventType;
  data: Record<string, JsonValue>;
  /** Also deliver to this URL (a direct payment's `callback_url`). */
  directTargetUrl?: string;
}

/** A move of one payment: what changes, and the event it causes when its state changes. */
export interface PaymentMove {
  /** The columns to set, `state` among them when it moves; `updated_at` is the writer's. A column left undefined is not set. */
  changes: PaymentUpdate;
  /** The event of a state change (called only when `changes.state` moves the payment), or null for none. */
  event: (after: Payment) => MoveEvent | null;
  /**
   * When the move fails the payment for a reason its customer can fix: offer a rescue (`rescue/offer.ts`) in the
   * same transaction, with `payment.rescue_available` and its URL under `publicBaseUrl`.
   */
  offerRescue?: { reason: string; publicBaseUrl: string };
}

/** What a move wrote. */
export interface WrittenMove {
  row: Payment;
  /** The event recorded, when the state changed and the move has one. */
  event: { id: string; type: EventType } | null;
  /** Its deliveries, to schedule after the commit. */
  deliveryIds: string[];
}

type Executor = Kysely<Database> | Transaction<Database>;
type UpdateValues = Record<string, unknown> & { id: string };

/** The row, locked for a decision (precompiled: it runs on every webhook and sync). */
const lockStatement = precompile<{ id: string }>()((db, p) => db.selectFrom("payments").selectAll().where("id", "=", p.id).forUpdate());

/** Locks the payment's row in `tx` for a decision about it; throws when there is none. */
export async function lockPaymentRow(tx: Transaction<Database>, paymentId: string): Promise<Payment> {
  const row = (await lockStatement(tx, { id: paymentId })).rows[0];
  if (!row) throw new Error(`payment ${paymentId} not found`);
  return row;
}

/**
 * `UPDATE … RETURNING *` of the changed columns, precompiled once per set of columns (its shape: the names,
 * sorted, joined by commas). The sets that occur are few (a provider read without news, an approval, a
 * failure, a confirmation…), so each is compiled once per process.
 */
const updateStatement = precompile<UpdateValues>()((db, p, columns) =>
  db
    .updateTable("payments")
    .set(Object.fromEntries(columns.split(",").map((column) => [column, p[column]])) as PaymentUpdate)
    .where("id", "=", p.id)
    .returningAll(),
);

/** The shape of {@link updateStatement} for `changes`: like Kysely's `.set()`, a column whose value is undefined is left out. */
function changedColumns(changes: PaymentUpdate): string {
  return (Object.keys(changes) as (keyof PaymentUpdate & string)[])
    .filter((column) => changes[column] !== undefined)
    .sort()
    .join(",");
}

/** Whether `changes` moves the payment out of `from` (a state equal to `from` is no move). */
function movesState(from: Payment, changes: PaymentUpdate): boolean {
  return changes.state !== undefined && changes.state !== from.state;
}

/** The order of states is the writer's to keep: a move it forbids is a bug in the caller, never written. */
function checkOrder(from: Payment, changes: PaymentUpdate): void {
  if (movesState(from, changes) && !mayMove(from.state, changes.state!))
    throw new Error(`payment ${from.id} cannot move from ${from.state} to ${changes.state} (the order of states)`);
}

/** Whether `changes` sets anything. */
function isEmpty(changes: PaymentUpdate): boolean {
  return changedColumns(changes) === "";
}

/** The event of the move written on `updated` (from `before`), recorded with `tx`. */
async function recordMoveEvent(tx: Executor, now: Date, before: Payment, updated: Payment, move: PaymentMove): Promise<Omit<WrittenMove, "row">> {
  const event = movesState(before, move.changes) ? move.event(updated) : null;
  // A payment link's payment that succeeds counts on its link, with `payment_link.paid`, in this same transaction.
  const linkPaid = paysLink(before, updated) ? await recordLinkPaid(tx, now, updated) : undefined;
  const recorded = event
    ? await recordEvent(tx, now, {
        tenantId: updated.tenant_id,
        environment: updated.environment,
        type: event.type,
        data: event.data,
        paymentId: updated.id,
        directTargetUrl: event.directTargetUrl,
      })
    : undefined;
  // A failure its customer can fix offers a rescue, with `payment.rescue_available` after `payment.failed`, in this same transaction.
  const rescue =
    move.offerRescue && updated.state === "failed" && before.state !== "failed" ? await recordRescueOffer(tx, now, updated, move.offerRescue) : undefined;
  const deliveryIds = [...(recorded?.deliveryIds ?? []), ...(linkPaid?.deliveryIds ?? []), ...(rescue?.deliveryIds ?? [])];
  return { event: recorded && event ? { id: recorded.eventId, type: event.type } : null, deliveryIds };
}

/**
 * Writes `move` on `locked` — the row as the caller locked it in `tx` ({@link lockPaymentRow}) — with its
 * event and deliveries. A move that changes nothing writes nothing.
 */
export async function writeMove(tx: Transaction<Database>, now: Date, locked: Payment, move: PaymentMove): Promise<WrittenMove> {
  if (isEmpty(move.changes)) return { row: locked, event: null, deliveryIds: [] };
  checkOrder(locked, move.changes);
  const changes = { ...move.changes, updated_at: now };
  const updated = (await updateStatement(tx, { ...changes, id: locked.id } as UpdateValues, changedColumns(changes))).rows[0]!;
  return { row: updated, ...(await recordMoveEvent(tx, now, locked, updated, move)) };
}

/**
 * The guarded `UPDATE payments`: applied only while the row still holds what the caller read in it —
 * `state`, `provider_transaction_id`, `reference`, `outcome_unknown`, `provider_status`, and whether
 * `approved_at` and `completed_at` are set. Under READ COMMITTED, PostgreSQL re-checks these on the latest
 * row version after any concurrent writer commits, so a row it updates is one the same decision holds for;
 * when another writer got there first it updates nothing. Shape: the changed columns, `|`, and `1`/`0` for
 * "approved_at is null" and "completed_at is null".
 */
function guardedUpdate(db: QueryCreator<Database>, p: UpdateValues, shape: string) {
  const [columns, nulls] = shape.split("|") as [string, string];
  return db
    .updateTable("payments")
    .set(Object.fromEntries(columns.split(",").map((column) => [column, p[column]])) as PaymentUpdate)
    .where("id", "=", p.id)
    .where("state", "=", p.seen_state as Payment["state"])
    .where("provider_transaction_id", "is not distinct from", p.seen_provider_transaction_id as string | null)
    .where("reference", "is not distinct from", p.seen_reference as string | null)
    .where("outcome_unknown", "=", p.seen_outcome_unknown as boolean)
    .where("provider_status", "is not distinct from", p.seen_provider_status as string | null)
    .where("approved_at", nulls[0] === "1" ? "is" : "is not", null)
    .where("completed_at", nulls[1] === "1" ? "is" : "is not", null);
}

const guardedStatement = precompile<UpdateValues>()((db, p, shape) => guardedUpdate(db, p, shape).returningAll());

/**
 * The guarded update and the event's insert in one statement (its data computed from the row as it will
 * be), only when the event has **no target**: no enabled endpoint of the tenant and environment takes
 * that event type, and the payment has no `callback_url`. The "no target" test is `recordEvent`'s choice
 * of endpoints negated: `enabled` and the same `subscribesTo` rule (test/services/direct-payments/
 * apply-update.test.ts checks both agree on every kind of endpoint).
 */
const settleStatement = precompile<UpdateValues>()((db, p, shape) => {
  return db
    .with("moved", (q) =>
      guardedUpdate(q, p, shape)
        .where("callback_url", "is", null)
        // A payment link's payment also moves its link (`payment-links/link-paid.ts`): that takes a transaction.
        .where("payment_link_id", "is", null)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom("webhook_endpoints")
                .select(sql<number>`1`.as("one"))
                .whereRef("webhook_endpoints.tenant_id", "=", "payments.tenant_id")
                .whereRef("webhook_endpoints.environment", "=", "payments.environment")
                .where("webhook_endpoints.enabled", "=", true)
                .where((eb) => subscribesTo(eb, p.event_type)),
            ),
          ),
        )
        .returningAll(),
    )
    .with("event", (q) =>
      q
        .insertInto("events")
        .columns(["id", "tenant_id", "environment", "type", "data", "payment_id", "created_at"])
        .expression((eb) =>
          eb
            .selectFrom("moved")
            .select([
              sql<string>`${p.event_id}::text`.as("id"),
              "moved.tenant_id",
              "moved.environment",
              sql<EventType>`${p.event_type}::text`.as("type"),
              sql<JsonValue>`${p.event_data}::jsonb`.as("data"),
              "moved.id as payment_id",
              sql<Date>`${p.updated_at}::timestamptz`.as("created_at"),
            ]),
        ),
    )
    .selectFrom("moved")
    .selectAll();
});

function guardedValues(seen: Payment, changes: PaymentUpdate): UpdateValues {
  return {
    ...changes,
    id: seen.id,
    seen_state: seen.state,
    seen_provider_transaction_id: seen.provider_transaction_id,
    seen_reference: seen.reference,
    seen_outcome_unknown: seen.outcome_unknown,
    seen_provider_status: seen.provider_status,
  } as UpdateValues;
}

function guardedShape(seen: Payment, changes: PaymentUpdate): string {
  return `${changedColumns(changes)}|${seen.approved_at === null ? 1 : 0}${seen.completed_at === null ? 1 : 0}`;
}

/**
 * Writes `move` on `seen` — the row as the caller read it, unlocked — only while the row still holds what
 * the caller read in it; undefined when it moved on (then decide again under the lock, {@link writeMove}).
 * With `db` a transaction the event is recorded in it; a move that causes an event must be given one.
 */
export async function writeMoveIfUnchanged(db: Executor, now: Date, seen: Payment, move: PaymentMove): Promise<WrittenMove | undefined> {
  checkOrder(seen, move.changes);
  const changes = { ...move.changes, updated_at: now };
  const updated = (await guardedStatement(db, guardedValues(seen, changes), guardedShape(seen, changes))).rows[0];
  if (!updated) return undefined;
  return { row: updated, ...(await recordMoveEvent(db, now, seen, updated, move)) };
}

/**
 * Writes `move` on `seen` with its event in one statement when the event has no delivery to make; undefined
 * when nothing was written — the row moved on, or the event has a target (then write it in a transaction).
 * Only for a move that changes the state and causes an event.
 */
export async function writeMoveWithoutTargets(db: Executor, now: Date, seen: Payment, move: PaymentMove): Promise<WrittenMove | undefined> {
  checkOrder(seen, move.changes);
  const changes = { ...move.changes, updated_at: now };
  const event = move.event({ ...seen, ...changes } as Payment);
  if (!movesState(seen, move.changes) || !event) throw new Error("writeMoveWithoutTargets writes a state change with its event");
  // A rescue offered with the move is a second event: that takes a transaction.
  if (move.offerRescue && move.changes.state === "failed") return undefined;
  const eventId = newId("evt");
  const values = { ...guardedValues(seen, changes), event_id: eventId, event_type: event.type, event_data: event.data };
  const updated = (await settleStatement(db, values, guardedShape(seen, changes))).rows[0];
  if (!updated) return undefined;
  return { row: updated, event: { id: eventId, type: event.type }, deliveryIds: [] };
}
