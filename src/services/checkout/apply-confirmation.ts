/**
 * Applying what provider B confirmed to a checkout (its {@link PaymentReport}, read through the port):
 * checked against our record first (token, amount, environment), then — in one database transaction, by the payment's one writer
 * (`payments/transition.ts`) — the new state, its event and the event's deliveries (contract §5, §6). The state moves by the order every payment follows (`payments/state-order.ts`: `completed` wins
 * over `cancelled` and `failed`, which only replace `pending`). Used by the `ipn` job and the `providerB-sync` job alike.
 */
import type { EventType, JsonValue, Payment, PaymentState } from "../../db/schema.ts";
import { type PaymentReport, ProviderCallError } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { mayMove } from "../payments/state-order.ts";
import { lockPaymentRow, writeMove } from "../payments/transition.ts";
import { applyDirectPaymentUpdate } from "../direct-payments/apply-update.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";
import { checkoutProviderOf } from "./checkout-provider.ts";

export const EVENT_OF: Record<Exclude<PaymentState, "pending">, EventType> = {
  succeeded: "payment.completed",
  cancelled: "payment.cancelled",
  failed: "payment.failed",
  refunded: "payment.refunded",
};

/** What a confirmation did. */
export type ConfirmOutcome =
  | { outcome: "moved"; state: Payment["state"]; eventId: string }
  | { outcome: "unchanged"; state: Payment["state"] }
  | { outcome: "mismatch"; reason: string };

/** Why a confirmation does not match our record, or null when it does. */
export function mismatchOf(payment: Payment, report: PaymentReport): string | null {
  if (report.providerPaymentId !== payment.provider_transaction_id) return "the confirmed token is not the checkout's";
  if (!report.details) return "the confirmation carries no amount";
  if (report.details.amount !== Number(payment.amount)) return `the confirmed amount ${report.details.amount} is not ${payment.amount}`;
  if (report.details.environment !== payment.environment) return `the confirmed environment ${report.details.environment} is not the checkout's`;
  return null;
}

function eventData(payment: Payment, report: PaymentReport): Record<string, JsonValue> {
  return {
    paymentId: payment.id,
    provider: payment.provider,
    kind: "checkout",
    providerTransactionId: payment.provider_transaction_id,
    reference: null,
    status: report.providerStatus,
    amount: Number(payment.amount),
    currency: payment.currency,
    description: payment.description,
    customer: (payment.customer ?? {}) as Record<string, JsonValue>,
    customData: (payment.custom_data ?? {}) as Record<string, JsonValue>,
    paymentMethod: payment.payment_method,
    receiptUrl: report.details?.receiptUrl ?? null,
    ...(report.state === "failed" ? { failReason: report.errorCode } : {}),
  };
}

/**
 * Confirms the checkout with provider B — with the credential version it was made with — and applies the
 * answer. A mismatch changes nothing and is logged as an alert. Provider failures (502/504) throw, so the
 * calling job retries; a refusal (e.g. the provider does not know the token) counts as a mismatch.
 *
 * @example
 * ```ts
 * const result = await confirmAndApply(deps, paymentId, { ipnId: 42 });
 * ```
 */
export async function confirmAndApply(deps: Deps, paymentId: string, options: { ipnId?: number; payment?: Payment } = {}): Promise<ConfirmOutcome> {
  // A caller that has just read the row (the sync step) passes it: the same read, not made twice.
  const payment =
    options.payment?.id === paymentId
      ? options.payment
      : await deps.db.selectFrom("payments").selectAll().where("id", "=", paymentId).executeTakeFirstOrThrow();
  const read = await readConfirmation(deps, payment);
  if (typeof read === "string") return rejectMismatch(deps, payment, read, options.ipnId);
  const mismatch = mismatchOf(payment, read);
  if (mismatch) return rejectMismatch(deps, payment, mismatch, options.ipnId);
  if (payment.kind === "direct_payment") return applyToDirectPayment(deps, payment, read, options.ipnId);
  return applyConfirmation(deps, paymentId, read, options);
}

/**
 * A provider B direct payment (SoftPay, an invoice paid by the operator's call) moves like every direct
 * payment (`direct-payments/apply-update.ts`: its order of states, its event data); its IPN is then processed.
 */
async function applyToDirectPayment(deps: Deps, payment: Payment, report: PaymentReport, ipnId: number | undefined): Promise<ConfirmOutcome> {
  const { row, eventType } = await applyDirectPaymentUpdate(deps, payment.id, { kind: "provider", report }, payment);
  if (ipnId !== undefined) await deps.db.updateTable("ipn_messages").set({ state: "processed", processed_at: deps.now() }).where("id", "=", ipnId).execute();
  if (!eventType) return { outcome: "unchanged", state: row.state };
  const event = await deps.db
    .selectFrom("events")
    .select("id")
    .where("payment_id", "=", payment.id)
    .where("type", "=", eventType)
    .orderBy("created_at", "desc")
    .executeTakeFirstOrThrow();
  return { outcome: "moved", state: row.state, eventId: event.id };
}

/**
 * Provider B's confirmation of a payment's invoice (a checkout's or a permit charge's), or why there is
 * none to apply: a refusal (provider B does not know the token, or the credential version is gone) is a
 * reason, not an error. Other provider failures throw, so the calling job retries.
 */
export async function readConfirmation(deps: Deps, payment: Payment): Promise<PaymentReport | string> {
  try {
    const report = await checkoutProviderOf(deps).readPayment(deps, payment);
    return report ?? "the credential version it was made with is gone";
  } catch (error) {
    if (error instanceof ProviderCallError && error.kind === "refused") return `provider B refused the confirm: ${error.message}`;
    throw error;
  }
}

async function rejectMismatch(deps: Deps, payment: Payment, reason: string, ipnId: number | undefined): Promise<ConfirmOutcome> {
  deps.logger.error(
    { alert: "providerB_confirm_mismatch", paymentId: payment.id, tenantId: payment.tenant_id, environment: payment.environment, ipnId, reason },
    "provider B's confirmation does not match the checkout: nothing changed",
  );
  if (ipnId !== undefined)
    await deps.db.updateTable("ipn_messages").set({ state: "rejected", last_error: reason, processed_at: deps.now() }).where("id", "=", ipnId).execute();
  return { outcome: "mismatch", reason };
}

/** The transaction part: state, event, deliveries; then the deliveries are enqueued. */
export async function applyConfirmation(deps: Deps, paymentId: string, report: PaymentReport, options: { ipnId?: number } = {}): Promise<ConfirmOutcome> {
  const result = await deps.db.transaction().execute(async (tx) => {
    const now = deps.now();
    const payment = await lockPaymentRow(tx, paymentId);
    const to = report.state;
    let outcome: ConfirmOutcome = { outcome: "unchanged", state: payment.state };
    let deliveryIds: string[] = [];
    if (mayMove(payment.state, to)) {
      const moved = await writeMove(tx, now, payment, {
        changes: {
          state: to,
          provider_status: report.providerStatus,
          // The customer fields provider B gives, over what we had.
          customer: { ...payment.customer, ...report.details?.customer },
          payment_method: report.details?.paymentMethod ?? payment.payment_method,
          failure_code: to === "failed" ? (report.errorCode ?? "failed") : null,
          // The receipt as provider B confirmed it (issue 6): kept on the record, shown in the payment view.
          receipt_url: report.details?.receiptUrl ?? payment.receipt_url,
          receipt_identifier: report.details?.receiptIdentifier ?? payment.receipt_identifier,
          provider_reference: report.reference ?? payment.provider_reference,
          completed_at: now,
        },
        event: (after) => ({ type: EVENT_OF[to as Exclude<PaymentState, "pending">], data: eventData(after, report) }),
      });
      deliveryIds = moved.deliveryIds;
      outcome = { outcome: "moved", state: to, eventId: moved.event!.id };
    } else if (payment.state === "pending" && payment.provider_status !== report.providerStatus) {
      await writeMove(tx, now, payment, { changes: { provider_status: report.providerStatus }, event: () => null });
    }
    if (options.ipnId !== undefined)
      await tx.updateTable("ipn_messages").set({ state: "processed", processed_at: now }).where("id", "=", options.ipnId).execute();
    return { outcome, deliveryIds };
  });
  if (result.deliveryIds.length > 0) await scheduleDeliveries(deps, result.deliveryIds);
  return result.outcome;
}
