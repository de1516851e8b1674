/**
 * Moving a direct payment forward (contract §4, "Order of states"), in one database transaction with the
 * event it causes and that event's deliveries (tenant webhooks and the payment's `callback_url`):
 *
 * - a paid state (approved, transferred, partially refunded) wins over pending, failed, declined and
 *   canceled — a provider may report a late success — and sends `payment.completed` once: only the move
 *   from a non-paid state into a paid one sends it, and nothing leaves the paid states but `refunded`;
 * - `refunded` follows a paid state (or a pending one whose approval we missed) and sends `payment.refunded`;
 * - declined / canceled / our `failed` only replace `pending`;
 * - nothing moves a record back to `pending`.
 *
 * The row is locked (`for update`) while deciding, so duplicate webhooks, a sync run and a reader racing
 * on one payment record one change and one event.
 */
import type { EventType, JsonValue, Payment, PaymentState, PaymentUpdate } from "../../db/schema.ts";
import type { ProviderATransactionFacts } from "../../providers/providerA/mod.ts";
import type { Deps } from "../deps.ts";
import { recordEvent } from "../events/record-event.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";
import { directPaymentStatus } from "./status.ts";

/** What was learnt about a payment: a read of provider A, or our own conclusion that it failed. */
export type DirectPaymentUpdate =
  | { kind: "provider"; facts: ProviderATransactionFacts }
  | { kind: "failed"; failureCode: string; outcomeUnknown?: false };

const EVENT_OF_STATE: Partial<Record<PaymentState, EventType>> = {
  succeeded: "payment.completed",
  failed: "payment.failed",
  cancelled: "payment.cancelled",
  refunded: "payment.refunded",
};

/** The state a payment moves to, or the current one when the order of states forbids the move. */
export function nextState(current: PaymentState, proposed: PaymentState): PaymentState {
  if (proposed === current || proposed === "pending") return current;
  if (proposed === "succeeded") return current === "refunded" ? current : "succeeded";
  if (proposed === "refunded") return "refunded";
  // failed / cancelled
  return current === "pending" ? proposed : current;
}

/** The event data of a direct payment (contract §6). */
export function directPaymentEventData(row: Payment): Record<string, JsonValue> {
  return {
    paymentId: row.id,
    provider: "providerA",
    kind: "direct_payment",
    providerTransactionId: row.provider_transaction_id,
    transactionId: row.provider_transaction_id === null ? null : Number(row.provider_transaction_id),
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

/**
 * Applies what was learnt to the payment, with its event and deliveries, then enqueues the deliveries.
 *
 * @example
 * ```ts
 * const facts = toTransactionFacts(await client.getTransaction(412));
 * if (facts) await applyDirectPaymentUpdate(deps, paymentId, { kind: "provider", facts });
 * ```
 */
export async function applyDirectPaymentUpdate(deps: Pick<Deps, "db" | "queue" | "logger" | "now">, paymentId: string, update: DirectPaymentUpdate): Promise<ApplyResult> {
  const result = await deps.db.transaction().execute(async (tx) => {
    const row = await tx.selectFrom("payments").selectAll().where("id", "=", paymentId).forUpdate().executeTakeFirstOrThrow();
    const now = deps.now();
    const changes: PaymentUpdate = {};
    let target: PaymentState;
    if (update.kind === "provider") {
      const { facts } = update;
      target = nextState(row.state, facts.state);
      if (row.provider_transaction_id === null) changes.provider_transaction_id = String(facts.transactionId);
      if (facts.reference && row.reference !== facts.reference) changes.reference = facts.reference;
      changes.provider_synced_at = now;
      // The provider answered about it: whatever it says replaces our "we do not know" (contract §4).
      if (row.outcome_unknown) changes.outcome_unknown = false;
      // The provider's word is kept when the order of states accepts it (or it is a paid word inside the paid states).
      const accepted = target !== row.state || facts.state === row.state;
      if (accepted && row.provider_status !== facts.status) changes.provider_status = facts.status;
      if (facts.approvedAt && !row.approved_at && target === "succeeded") changes.approved_at = facts.approvedAt;
      if (target === "failed" && target !== row.state) changes.failure_code = facts.errorCode;
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
      changes.next_sync_at = null;
    }
    if (Object.keys(changes).length === 0) return { row, eventType: null, deliveryIds: [] as string[] };
    changes.updated_at = now;
    const updated = await tx.updateTable("payments").set(changes).where("id", "=", paymentId).returningAll().executeTakeFirstOrThrow();
    // `payment.completed` only on entering the paid states; refunded after paid sends `payment.refunded`.
    const eventType = stateChanged ? (EVENT_OF_STATE[target] ?? null) : null;
    if (!eventType) return { row: updated, eventType: null, deliveryIds: [] as string[] };
    const recorded = await recordEvent(tx, now, {
      tenantId: updated.tenant_id,
      environment: updated.environment,
      type: eventType,
      data: directPaymentEventData(updated),
      paymentId: updated.id,
      directTargetUrl: updated.callback_url ?? undefined,
    });
    return { row: updated, eventType, deliveryIds: recorded.deliveryIds };
  });
  if (result.deliveryIds.length > 0) await scheduleDeliveries(deps, result.deliveryIds);
  return { row: result.row, eventType: result.eventType };
}
