/**
 * Moving a direct payment forward, in one database transaction with the event it causes and that event's
 * deliveries (tenant webhooks and the payment's `callback_url`). The state moves by the order of states
 * every payment follows (`payments/state-order.ts`, contract §4):
 *
 * - a paid state (approved, transferred, partially refunded: our `succeeded`) wins over pending, failed,
 *   declined and canceled and sends `payment.completed` once: only the move from a non-paid state into a
 *   paid one sends it, and a paid word inside the paid states only updates `provider_status`;
 * - `refunded` follows and sends `payment.refunded`; declined / canceled / our `failed` only replace `pending`;
 * - nothing moves a record back to `pending`;
 * - a provider that says it gave the payment back by itself, fully or partly (`refundedByProvider`), raises
 *   `refunded_by_provider` (all of it when it does not say how much), and in the same transaction refunds
 *   of ours that no longer fit are stopped (`payouts/refund-guard.ts`): that move always takes the lock.
 *
 * The row is locked (`for update`) while deciding, or — when the caller passes the row it read — updated
 * only if what the decision read in it is unchanged (else decided again under the lock), so duplicate
 * webhooks, a sync run and a reader racing on one payment record one change and one event.
 */
import { sql, type Kysely, type QueryCreator, type Transaction } from "kysely";
import { precompile } from "../../db/precompiled.ts";
import type { Database, EventType, JsonValue, Payment, PaymentState, PaymentUpdate } from "../../db/schema.ts";
import type { PaymentReport } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import { recordEvent, subscribesTo } from "../events/record-event.ts";
import { nextState } from "../payments/state-order.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";
import { onRefundedByProvider } from "../payouts/refund-guard.ts";
import { forgetFinalRead } from "./final-read-cache.ts";
import { directPaymentStatus } from "./status.ts";

/** What was learnt about a payment: a read of provider A, or our own conclusion that it failed. */
export type DirectPaymentUpdate = { kind: "provider"; report: PaymentReport } | { kind: "failed"; failureCode: string; outcomeUnknown?: false };

const EVENT_OF_STATE: Partial<Record<PaymentState, EventType>> = {
  succeeded: "payment.completed",
  failed: "payment.failed",
  cancelled: "payment.cancelled",
  refunded: "payment.refunded",
};

/** The event data of a direct payment (contract §6). */
export function directPaymentEventData(row: Payment): Record<string, JsonValue> {
  return {
    paymentId: row.id,
    provider: row.provider,
    kind: "direct_payment",
    providerTransactionId: row.provider_transaction_id,
    // Provider A's ids are integers (the spec's `transactionId`); another provider's id is in providerTransactionId only.
    transactionId: row.provider_transaction_id !== null && /^\d+$/.test(row.provider_transaction_id) ? Number(row.provider_transaction_id) : null,
    reference: row.reference,
    status: directPaymentStatus(row),
    amount: Number(row.amount),
    currency: row.currency,
    description: row.description,
    customer: (row.customer ?? null) as JsonValue,
    customData: null,
    paymentMethod: row.payment_method,
    receiptUrl: null,
    errorCode: row.failure_code,
  };
}

/** The row, locked for the decision (precompiled: it runs on every webhook and sync). */
const lockPayment = precompile<{ id: string }>()((db, p) => db.selectFrom("payments").selectAll().where("id", "=", p.id).forUpdate());

type UpdateValues = Record<string, unknown> & { id: string };

/**
 * `UPDATE … RETURNING *` of the changed columns, precompiled once per set of columns (its shape: the names,
 * sorted, joined by commas). The sets that occur are few (a provider read without news, an approval, a
 * failure…), so each is compiled once per process.
 */
const updatePayment = precompile<UpdateValues>()((db, p, columns) =>
  db
    .updateTable("payments")
    .set(Object.fromEntries(columns.split(",").map((column) => [column, p[column]])) as PaymentUpdate)
    .where("id", "=", p.id)
    .returningAll(),
);

/** The shape of {@link updatePayment} for `changes`: like Kysely's `.set()`, a column whose value is undefined is left out. */
function changedColumns(changes: PaymentUpdate): string {
  return (Object.keys(changes) as (keyof PaymentUpdate & string)[])
    .filter((column) => changes[column] !== undefined)
    .sort()
    .join(",");
}

export interface ApplyResult {
  row: Payment;
  /** The event recorded, when the state changed. */
  eventType: EventType | null;
}

interface Decision {
  changes: PaymentUpdate;
  target: PaymentState;
  stateChanged: boolean;
}

/** How much of the payment its provider says it gave back by itself: all of it when it does not say how much; 0 when it reports no refund. */
function providerRefundOf(row: Payment, report: PaymentReport): number {
  if (!report.refundedByProvider) return 0;
  const amount = Number(row.amount);
  return Math.min(amount, report.refundedByProvider.amount ?? amount);
}

/** What `update` changes in `row` (the order of states), without `updated_at`. */
function decide(row: Payment, update: DirectPaymentUpdate, now: Date): Decision {
  const changes: PaymentUpdate = {};
  let target: PaymentState;
  if (update.kind === "provider") {
    const { report } = update;
    target = nextState(row.state, report.state);
    if (row.provider_transaction_id === null) changes.provider_transaction_id = report.providerPaymentId;
    if (report.reference && row.reference !== report.reference) changes.reference = report.reference;
    changes.provider_synced_at = now;
    // The provider answered about it: whatever it says replaces our "we do not know" (contract §4).
    if (row.outcome_unknown) changes.outcome_unknown = false;
    // The provider's word is kept when the order of states accepts it (or it is a paid word inside the paid states).
    const accepted = target !== row.state || report.state === row.state;
    if (accepted && row.provider_status !== report.providerStatus) changes.provider_status = report.providerStatus;
    if (report.approvedAt && !row.approved_at && target === "succeeded") changes.approved_at = report.approvedAt;
    if (target === "failed" && target !== row.state) changes.failure_code = report.errorCode;
    // Given back by the provider itself, fully or partly: how much (all of it when it does not say), only ever more.
    const givenBack = providerRefundOf(row, report);
    if (givenBack > Number(row.refunded_by_provider ?? 0)) changes.refunded_by_provider = givenBack;
  } else {
    target = nextState(row.state, "failed");
    if (target !== row.state) {
      changes.failure_code = update.failureCode;
      changes.outcome_unknown = false;
    }
  }
  const stateChanged = target !== row.state;
  if (stateChanged) {
    changes.state = target;
    changes.completed_at = row.completed_at ?? now;
  }
  return { changes, target, stateChanged };
}

/**
 * The optimistic form of {@link updatePayment}: the same `UPDATE … RETURNING *`, applied only while the
 * row still holds what {@link decide} read in it — `state`, `provider_transaction_id`, `reference`,
 * `outcome_unknown`, `provider_status`, and whether `approved_at` and `completed_at` are set. Under READ
 * COMMITTED, PostgreSQL re-checks these on the latest row version after any concurrent writer commits, so
 * a row it updates is one the same decision holds for; when another writer got there first it updates
 * nothing, and the caller decides again under `for update`. Shape: the changed columns, `|`, and `1`/`0`
 * for "approved_at is null" and "completed_at is null".
 */
const updatePaymentIfUnchanged = precompile<UpdateValues>()((db, p, shape) => guardedUpdate(db, p, shape).returningAll());

/** The guarded `UPDATE payments` of {@link updatePaymentIfUnchanged}, also the first step of {@link settleWithoutTargets}. */
function guardedUpdate(db: QueryCreator<Database>, p: UpdateValues, shape: string) {
  const [columns, nulls] = shape.split("|") as [string, string];
  return db
    .updateTable("payments")
    .set(Object.fromEntries(columns.split(",").map((column) => [column, p[column]])) as PaymentUpdate)
    .where("id", "=", p.id)
    .where("state", "=", p.seen_state as PaymentState)
    .where("provider_transaction_id", "is not distinct from", p.seen_provider_transaction_id as string | null)
    .where("reference", "is not distinct from", p.seen_reference as string | null)
    .where("outcome_unknown", "=", p.seen_outcome_unknown as boolean)
    .where("provider_status", "is not distinct from", p.seen_provider_status as string | null)
    .where("approved_at", nulls[0] === "1" ? "is" : "is not", null)
    .where("completed_at", nulls[1] === "1" ? "is" : "is not", null);
}

/**
 * The whole move of a payment whose event has **no target** — no enabled endpoint of the tenant and
 * environment takes that event type, and the payment has no `callback_url` — in one statement: the
 * guarded update of {@link updatePaymentIfUnchanged} and the event's insert (its data computed from the
 * row as it will be). It updates nothing when the row moved on, or when a target exists (then the
 * deliveries are needed, and `recordEvent` writes them in a transaction): the caller falls back.
 *
 * The "no target" test is `recordEvent`'s choice of endpoints negated: `enabled` and the same
 * `subscribesTo` rule (services/events/record-event.ts); test/services/direct-payments/apply-update.test.ts checks both
 * agree on every kind of endpoint.
 */
const settleWithoutTargets = precompile<UpdateValues>()((db, p, shape) => {
  return db
    .with("moved", (q) =>
      guardedUpdate(q, p, shape)
        .where("callback_url", "is", null)
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

function settleValues(seen: Payment, decision: Decision, eventType: EventType): UpdateValues {
  const after = { ...seen, ...decision.changes } as Payment;
  return {
    ...guardedValues(seen, decision.changes),
    event_id: newId("evt"),
    event_type: eventType,
    event_data: directPaymentEventData(after),
  };
}

type Executor = Kysely<Database> | Transaction<Database>;

/** The event of the move (if any), recorded with `tx`, the caller's transaction. */
async function recordMove(
  tx: Transaction<Database>,
  now: Date,
  updated: Payment,
  decision: Decision,
): Promise<{ eventType: EventType | null; deliveryIds: string[] }> {
  // `payment.completed` only on entering the paid states; refunded after paid sends `payment.refunded`.
  const eventType = decision.stateChanged ? (EVENT_OF_STATE[decision.target] ?? null) : null;
  if (!eventType) return { eventType: null, deliveryIds: [] };
  const recorded = await recordEvent(tx, now, {
    tenantId: updated.tenant_id,
    environment: updated.environment,
    type: eventType,
    data: directPaymentEventData(updated),
    paymentId: updated.id,
    directTargetUrl: updated.callback_url ?? undefined,
  });
  return { eventType, deliveryIds: recorded.deliveryIds };
}

/** Locks the row, decides, updates and records the event: the general path, inside `tx`. */
async function applyLocked(tx: Transaction<Database>, now: Date, paymentId: string, update: DirectPaymentUpdate) {
  const row = (await lockPayment(tx, { id: paymentId })).rows[0];
  if (!row) throw new Error(`payment ${paymentId} not found`);
  const decision = decide(row, update, now);
  if (Object.keys(decision.changes).length === 0) return { row, eventType: null, deliveryIds: [] as string[] };
  decision.changes.updated_at = now;
  const updated = (await updatePayment(tx, { ...decision.changes, id: paymentId } as UpdateValues, changedColumns(decision.changes))).rows[0]!;
  const move = await recordMove(tx, now, updated, decision);
  // The provider gave (more of) it back by itself: refunds of ours that no longer fit stop here (refund-guard.ts).
  if (decision.changes.refunded_by_provider !== undefined) move.deliveryIds.push(...(await onRefundedByProvider(tx, now, updated)));
  return { row: updated, ...move };
}

/** The guarded update of `seen` (see {@link updatePaymentIfUnchanged}); undefined when the row moved on. */
async function updateIfUnchanged(db: Executor, seen: Payment, decision: Decision): Promise<Payment | undefined> {
  return (await updatePaymentIfUnchanged(db, guardedValues(seen, decision.changes), guardedShape(seen, decision.changes))).rows[0];
}

/**
 * Applies what was learnt to the payment, with its event and deliveries, then enqueues the deliveries.
 *
 * `seen` is the row as the caller read it before asking the provider (a webhook's look-up, a sync run's
 * read). With it, the decision is taken on that row and applied with a guarded update (see
 * {@link updatePaymentIfUnchanged}): without an event that is one autocommitted statement, with one it
 * saves the `SELECT … FOR UPDATE` in the transaction. When the row changed since it was read, the
 * decision is taken again under the lock, as without `seen`.
 *
 * @example
 * ```ts
 * const report = await deps.providers.get(row.provider).readPayment(deps, row);
 * if (report) await applyDirectPaymentUpdate(deps, paymentId, { kind: "provider", report });
 * ```
 */
export async function applyDirectPaymentUpdate(
  deps: Pick<Deps, "db" | "queue" | "logger" | "now" | "syncHold" | "caches">,
  paymentId: string,
  update: DirectPaymentUpdate,
  seen?: Payment,
): Promise<ApplyResult> {
  const now = deps.now();
  const decided = seen !== undefined && seen.id === paymentId ? decide(seen, update, now) : undefined;
  // A refund by the provider itself may stop refunds of ours: that is decided under the lock, in one transaction.
  const optimistic = decided?.changes.refunded_by_provider === undefined ? decided : undefined;
  let result: { row: Payment; eventType: EventType | null; deliveryIds: string[] } | undefined;
  if (optimistic && Object.keys(optimistic.changes).length > 0) {
    optimistic.changes.updated_at = now;
    const eventExpected = optimistic.stateChanged && EVENT_OF_STATE[optimistic.target] !== undefined;
    if (!eventExpected) {
      // No event: the guarded update alone is the whole change, atomic as one statement.
      const updated = await updateIfUnchanged(deps.db, seen!, optimistic);
      if (updated) result = { row: updated, eventType: null, deliveryIds: [] };
    } else {
      const eventType = EVENT_OF_STATE[optimistic.target]!;
      const targetsKey = `${seen!.tenant_id}:${seen!.environment}`;
      // Whether the last event of this tenant and environment had deliveries (`deps.caches.eventTargets`): a hint only.
      if (seen!.callback_url === null && !deps.caches.eventTargets.get(targetsKey)) {
        // Most likely no target: the move and its event in one statement (nothing to deliver).
        const updated = (await settleWithoutTargets(deps.db, settleValues(seen!, optimistic, eventType), guardedShape(seen!, optimistic.changes))).rows[0];
        if (updated) result = { row: updated, eventType, deliveryIds: [] };
      }
      result ??= await deps.db.transaction().execute(async (tx) => {
        const updated = await updateIfUnchanged(tx, seen!, optimistic);
        if (!updated) return applyLocked(tx, now, paymentId, update);
        return { row: updated, ...(await recordMove(tx, now, updated, optimistic)) };
      });
      if (result.eventType !== null) deps.caches.eventTargets.set(targetsKey, result.deliveryIds.length > (result.row.callback_url ? 1 : 0));
    }
  }
  result ??= await deps.db.transaction().execute((tx) => applyLocked(tx, now, paymentId, update));
  // Its first sync step, if this gateway still holds it, has nothing left to do (first-sync.ts).
  if (result.row.state !== "pending") deps.syncHold.settled(paymentId);
  forgetFinalRead(deps, result.row);
  if (result.deliveryIds.length > 0) await scheduleDeliveries(deps, result.deliveryIds);
  return { row: result.row, eventType: result.eventType };
}
