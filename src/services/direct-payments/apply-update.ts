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
 * webhooks, a sync run and a reader racing on one payment record one change and one event. This module
 * decides; the payment's one writer (`payments/transition.ts`) writes the move, its event and deliveries.
 */
import type { Transaction } from "kysely";
import type { Database, EventType, JsonValue, Payment, PaymentState, PaymentUpdate } from "../../db/schema.ts";
import type { PaymentReport } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { nextState } from "../payments/state-order.ts";
import { lockPaymentRow, type PaymentMove, type WrittenMove, writeMove, writeMoveIfUnchanged, writeMoveWithoutTargets } from "../payments/transition.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";
import { onRefundedByProvider } from "../payouts/refund-guard.ts";
import { forgetFinalRead } from "./final-read-cache.ts";
import { directPaymentStatus } from "./status.ts";
import { isFixableFailure, isRescuable } from "../rescue/offer.ts";

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

/**
 * What `update` changes in `row` (the order of states), without `updated_at`. `firstRereadAt`: when a payment
 * that settles now is first read again (`settled-rereads.ts`), null when its provider cannot give it back by itself.
 */
function decide(row: Payment, update: DirectPaymentUpdate, now: Date, firstRereadAt: Date | null): Decision {
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
    if (target === "succeeded" && firstRereadAt !== null) changes.reread_at = firstRereadAt;
  }
  return { changes, target, stateChanged };
}

/**
 * The move `decision` makes: its changes, and the event of its new state (`payment.completed` only on entering the
 * paid states); a failure its customer can fix offers a rescue with it (`rescue/offer.ts`).
 */
function moveOf(decision: Decision, row: Payment, publicBaseUrl: string | undefined): PaymentMove {
  const failureCode = decision.changes.failure_code ?? null;
  const rescuable = publicBaseUrl !== undefined && decision.stateChanged && decision.target === "failed" && isRescuable(row) && isFixableFailure(failureCode);
  return {
    ...(rescuable && { offerRescue: { reason: failureCode!, publicBaseUrl } }),
    changes: decision.changes,
    event: (after) => {
      const type = EVENT_OF_STATE[decision.target];
      return type ? { type, data: directPaymentEventData(after), directTargetUrl: after.callback_url ?? undefined } : null;
    },
  };
}

type Rereads = Pick<Deps, "config" | "providers">;

/** When `row`, settling at `now`, is first read again: the schedule's first step, when its provider can give it back outside the gateway. */
function firstRereadOf(deps: Rereads, row: Payment, now: Date): Date | null {
  const first = deps.config.settledRereadSchedule[0];
  if (first === undefined || !deps.providers.get(row.provider).capabilities.refundsOutsideGateway) return null;
  return new Date(now.getTime() + first);
}

interface Written {
  row: Payment;
  eventType: EventType | null;
  deliveryIds: string[];
}

function written(move: WrittenMove): Written {
  return { row: move.row, eventType: move.event?.type ?? null, deliveryIds: move.deliveryIds };
}

/** Locks the row, decides and writes the move: the general path, inside `tx`. */
async function applyLocked(tx: Transaction<Database>, now: Date, paymentId: string, update: DirectPaymentUpdate, deps: Rereads): Promise<Written> {
  const row = await lockPaymentRow(tx, paymentId);
  const decision = decide(row, update, now, firstRereadOf(deps, row, now));
  const move = written(await writeMove(tx, now, row, moveOf(decision, row, deps.config.publicBaseUrl)));
  // The provider gave (more of) it back by itself: refunds of ours that no longer fit stop here (refund-guard.ts).
  if (decision.changes.refunded_by_provider !== undefined) move.deliveryIds.push(...(await onRefundedByProvider(tx, now, move.row)));
  return move;
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
  deps: Pick<Deps, "db" | "queue" | "logger" | "now" | "syncHold" | "caches" | "config" | "providers">,
  paymentId: string,
  update: DirectPaymentUpdate,
  seen?: Payment,
): Promise<ApplyResult> {
  const now = deps.now();
  const decided = seen !== undefined && seen.id === paymentId ? decide(seen, update, now, firstRereadOf(deps, seen, now)) : undefined;
  // A refund by the provider itself may stop refunds of ours: that is decided under the lock, in one transaction.
  const optimistic = decided?.changes.refunded_by_provider === undefined ? decided : undefined;
  let result: Written | undefined;
  if (optimistic && Object.keys(optimistic.changes).length > 0) {
    const move = moveOf(optimistic, seen!, deps.config.publicBaseUrl);
    const eventExpected = optimistic.stateChanged && EVENT_OF_STATE[optimistic.target] !== undefined;
    if (!eventExpected) {
      // No event: the guarded update alone is the whole change, atomic as one statement.
      const moved = await writeMoveIfUnchanged(deps.db, now, seen!, move);
      if (moved) result = written(moved);
    } else {
      const targetsKey = `${seen!.tenant_id}:${seen!.environment}`;
      // Whether the last event of this tenant and environment had deliveries (`deps.caches.eventTargets`): a hint only.
      if (seen!.callback_url === null && !deps.caches.eventTargets.get(targetsKey)) {
        // Most likely no target: the move and its event in one statement (nothing to deliver).
        const moved = await writeMoveWithoutTargets(deps.db, now, seen!, move);
        if (moved) result = written(moved);
      }
      result ??= await deps.db.transaction().execute(async (tx) => {
        const moved = await writeMoveIfUnchanged(tx, now, seen!, move);
        return moved ? written(moved) : applyLocked(tx, now, paymentId, update, deps);
      });
      if (result.eventType !== null) deps.caches.eventTargets.set(targetsKey, result.deliveryIds.length > (result.row.callback_url ? 1 : 0));
    }
  }
  result ??= await deps.db.transaction().execute((tx) => applyLocked(tx, now, paymentId, update, deps));
  // Its first sync step, if this gateway still holds it, has nothing left to do (first-sync.ts).
  if (result.row.state !== "pending") deps.syncHold.settled(paymentId);
  forgetFinalRead(deps, result.row);
  if (result.deliveryIds.length > 0) await scheduleDeliveries(deps, result.deliveryIds);
  return { row: result.row, eventType: result.eventType };
}
