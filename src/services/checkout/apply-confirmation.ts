/**
 * Applying what provider B confirmed to a checkout: checked against our record first (token, amount,
 * mode), then — in one database transaction — the new state, its event and the event's deliveries
 * (contract §5, §6). Used by the `ipn` job and the `providerB-sync` job alike.
 */
import type { Environment } from "../../config.ts";
import type { JsonValue, Payment } from "../../db/schema.ts";
import { AppError } from "../../errors.ts";
import { confirmedAmount, customerOf, EVENT_OF, mayMove, STATE_OF } from "../../providers/providerB/map.ts";
import { MODE_OF, type CheckoutConfirmation } from "../../providers/providerB/wire.ts";
import type { Deps } from "../deps.ts";
import { recordEvent } from "../events/record-event.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";
import { openProviderBAccount } from "./provider-b-account.ts";

/** What a confirmation did. */
export type ConfirmOutcome =
  | { outcome: "moved"; state: Payment["state"]; eventId: string }
  | { outcome: "unchanged"; state: Payment["state"] }
  | { outcome: "mismatch"; reason: string };

/** Why a confirmation does not match our record, or null when it does. */
export function mismatchOf(payment: Payment, confirmation: CheckoutConfirmation): string | null {
  if (confirmation.invoice.token !== payment.provider_transaction_id) return "the confirmed token is not the checkout's";
  if (confirmedAmount(confirmation) !== Number(payment.amount)) return `the confirmed amount ${confirmation.invoice.total_amount} is not ${payment.amount}`;
  if (confirmation.mode !== MODE_OF[payment.environment as Environment]) return `the confirmed mode ${confirmation.mode} is not the checkout's environment`;
  return null;
}

function eventData(payment: Payment, confirmation: CheckoutConfirmation): Record<string, JsonValue> {
  return {
    paymentId: payment.id,
    provider: "providerB",
    kind: "checkout",
    providerTransactionId: payment.provider_transaction_id,
    reference: null,
    status: confirmation.status,
    amount: Number(payment.amount),
    currency: payment.currency,
    description: payment.description,
    customer: (payment.customer ?? {}) as Record<string, JsonValue>,
    customData: (payment.custom_data ?? {}) as Record<string, JsonValue>,
    paymentMethod: payment.payment_method,
    receiptUrl: confirmation.receipt_url,
    ...(confirmation.status === "failed" ? { failReason: confirmation.fail_reason } : {}),
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
export async function confirmAndApply(deps: Deps, paymentId: string, options: { ipnId?: number } = {}): Promise<ConfirmOutcome> {
  const payment = await deps.db.selectFrom("payments").selectAll().where("id", "=", paymentId).executeTakeFirstOrThrow();
  const account = await openProviderBAccount(deps, {
    tenantId: payment.tenant_id,
    environment: payment.environment,
    version: payment.credential_version ?? undefined,
  });
  if (!account) return rejectMismatch(deps, payment, "the credential version the checkout was made with is gone", options.ipnId);
  let confirmation: CheckoutConfirmation;
  try {
    confirmation = await account.client.confirmCheckoutInvoice(payment.provider_transaction_id!);
  } catch (error) {
    if (error instanceof AppError && error.status === 422)
      return rejectMismatch(deps, payment, `provider B refused the confirm: ${error.message}`, options.ipnId);
    throw error;
  }
  const mismatch = mismatchOf(payment, confirmation);
  if (mismatch) return rejectMismatch(deps, payment, mismatch, options.ipnId);
  return applyConfirmation(deps, paymentId, confirmation, options);
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
export async function applyConfirmation(
  deps: Deps,
  paymentId: string,
  confirmation: CheckoutConfirmation,
  options: { ipnId?: number } = {},
): Promise<ConfirmOutcome> {
  const result = await deps.db.transaction().execute(async (tx) => {
    const now = deps.now();
    const payment = await tx.selectFrom("payments").selectAll().where("id", "=", paymentId).forUpdate().executeTakeFirstOrThrow();
    const to = STATE_OF[confirmation.status];
    let outcome: ConfirmOutcome = { outcome: "unchanged", state: payment.state };
    let deliveryIds: string[] = [];
    if (mayMove(payment.state, to)) {
      const updated = await tx
        .updateTable("payments")
        .set({
          state: to,
          provider_status: confirmation.status,
          customer: customerOf(confirmation, payment.customer),
          payment_method: confirmation.customer?.payment_method ?? payment.payment_method,
          failure_code: to === "failed" ? (confirmation.fail_reason ?? "failed") : null,
          // The receipt as provider B confirmed it (issue 6): kept on the record, shown in the payment view.
          receipt_url: confirmation.receipt_url ?? payment.receipt_url,
          receipt_identifier: confirmation.receipt_identifier ?? payment.receipt_identifier,
          provider_reference: confirmation.provider_reference ?? payment.provider_reference,
          updated_at: now,
          completed_at: now,
        })
        .where("id", "=", paymentId)
        .returningAll()
        .executeTakeFirstOrThrow();
      const recorded = await recordEvent(tx, now, {
        tenantId: updated.tenant_id,
        environment: updated.environment,
        type: EVENT_OF[to]!,
        data: eventData(updated, confirmation),
        paymentId,
      });
      deliveryIds = recorded.deliveryIds;
      outcome = { outcome: "moved", state: to, eventId: recorded.eventId };
    } else if (payment.state === "pending" && payment.provider_status !== confirmation.status) {
      await tx.updateTable("payments").set({ provider_status: confirmation.status, updated_at: now }).where("id", "=", paymentId).execute();
    }
    if (options.ipnId !== undefined)
      await tx.updateTable("ipn_messages").set({ state: "processed", processed_at: now }).where("id", "=", options.ipnId).execute();
    return { outcome, deliveryIds };
  });
  if (result.deliveryIds.length > 0) await scheduleDeliveries(deps, result.deliveryIds);
  return result.outcome;
}
