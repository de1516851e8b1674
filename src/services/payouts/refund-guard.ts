/**
 * Never more out than in, whoever refunds (issue 24; docs/money-out.md, "Refunded at the provider"). A
 * payment's provider may give it back by itself (provider A's dashboard) while refunds of ours are on their
 * way; what it gave back (`payments.refunded_by_provider`) plus our refunds that have not failed must never
 * exceed what the payment collected. Two guards keep it, both with the payment's row locked (then the
 * refunds' rows: the lock order of `refund-room.ts`):
 *
 * - when a provider's read of the payment reports it refunded (`onRefundedByProvider`, in the
 *   transaction that applies the read): our refunds that no provider call can have sent yet (no provider id:
 *   the sending calls come after it is stored) are stopped, newest first, until the rest fits; when what
 *   the provider gave back and our refunds already sent exceed the payment, each sent one is kept as a
 *   reconciliation difference;
 * - right before each provider call of a refund's sync step — before the create and before the call that
 *   moves money (`clearToSend`, called by `advance-payout.ts` and through the port's `beforeSending`): a
 *   refund that no longer fits is stopped there, in the transaction that decides, and nothing is sent.
 *
 * A stopped refund is `failed` with `failureCode` `refunded_at_provider`, its reservation released and
 * `refund.failed` recorded, in one transaction. A refund that already went out (sent, or its sending call
 * made) is never stopped: when it ends `sent` beyond the rule it is a difference (`apply-payout.ts`).
 *
 * @module
 */
import type { Transaction } from "kysely";
import type { Database, Payment, PayoutRow } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { recordDifference } from "../reports/differences.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";
import { stopBeforeSending } from "./apply-payout.ts";
import { lockPaymentRow } from "../payments/transition.ts";
import { excessOf, noteRefundBeyondProvider, refundsNotFailed } from "./refund-room.ts";

/** The failure code of a refund stopped because the payment's provider gave the payment back by itself. */
export const REFUNDED_AT_PROVIDER = "refunded_at_provider";

/**
 * After a provider's read moved `payment` (locked by the caller's `tx`) to refunded, fully or in part: stops
 * our refunds of it that were not sent and no longer fit, and keeps those already sent beyond it as
 * differences. Answers the deliveries of the `refund.failed` events, to schedule after commit.
 */
async function stopRefundsBeyondProvider(tx: Transaction<Database>, now: Date, payment: Payment): Promise<string[]> {
  const refunds = await tx
    .selectFrom("payouts")
    .selectAll()
    .where("payment_id", "=", payment.id)
    .where("purpose", "=", "refund")
    .where("state", "<>", "failed")
    .orderBy("id", "desc")
    .forUpdate()
    .execute();
  let excess = excessOf(
    payment,
    refunds.reduce((sum, r) => sum + Number(r.amount), 0),
  );
  if (excess <= 0) return [];
  const deliveryIds: string[] = [];
  // Newest first: the refunds asked for last give way first. Without a provider id no sending call was made.
  for (const refund of refunds) {
    if (excess <= 0) break;
    if (refund.state !== "pending" || refund.provider_payout_id !== null) continue;
    deliveryIds.push(...(await stopBeforeSending(tx, now, refund.id, REFUNDED_AT_PROVIDER)).deliveryIds);
    excess -= Number(refund.amount);
  }
  // What was sent already cannot be stopped: beyond what the provider left, each sent refund is a difference.
  if (excessOf(payment, Number(payment.amount_refunded)) > 0)
    for (const refund of refunds) if (refund.state === "sent") await noteRefundBeyondProvider(tx, now, payment, refund);
  return deliveryIds;
}

/**
 * A provider's read moved `payment` (locked by the caller's `tx`) to refunded by the provider itself, fully
 * or in part: {@link stopRefundsBeyondProvider}, and a payment still `succeeded` (given back in part, the
 * ledger not told how much) is kept as a difference for the operator (ours `succeeded`, the provider's
 * `partially_refunded`). Answers the deliveries to schedule after commit.
 */
export async function onRefundedByProvider(tx: Transaction<Database>, now: Date, payment: Payment): Promise<string[]> {
  const deliveryIds = await stopRefundsBeyondProvider(tx, now, payment);
  if (payment.state === "succeeded")
    await recordDifference(tx, now, {
      subjectId: payment.id,
      subjectKind: "payment",
      tenantId: payment.tenant_id,
      environment: payment.environment,
      provider: payment.provider,
      ourState: payment.state,
      providerState: "partially_refunded",
      providerStatus: payment.provider_status ?? "partially_refunded",
      amount: Number(payment.amount),
      currency: payment.currency,
    });
  return deliveryIds;
}

/**
 * The last check before a provider call of the payout `row` may send it: a refund whose payment's provider
 * gave back so much that it no longer fits is stopped here (in the transaction that decides, the payment's
 * row locked). Answers the row as it is after, `stopped` when it must not be sent (stopped now, or no longer
 * pending). A payout that is not a refund always goes on.
 */
export async function clearToSend(deps: Pick<Deps, "db" | "now" | "queue" | "logger">, row: PayoutRow): Promise<{ row: PayoutRow; stopped: boolean }> {
  if (row.purpose !== "refund") return { row, stopped: false };
  const now = deps.now();
  const decided = await deps.db.transaction().execute(async (tx) => {
    // The payment's row, then the refund's: the order every writer of a payment's refunds takes them.
    const payment = await lockPaymentRow(tx, row.payment_id!);
    const locked = await tx.selectFrom("payouts").selectAll().where("id", "=", row.id).forUpdate().executeTakeFirstOrThrow();
    if (locked.state !== "pending") return { row: locked, stopped: true, deliveryIds: [] as string[] };
    if (excessOf(payment, await refundsNotFailed(tx, payment.id)) <= 0) return { row: locked, stopped: false, deliveryIds: [] as string[] };
    const stopped = await stopBeforeSending(tx, now, locked.id, REFUNDED_AT_PROVIDER);
    return { row: stopped.row, stopped: true, deliveryIds: stopped.deliveryIds };
  });
  if (decided.stopped && decided.row.state === "failed")
    deps.logger.warn({ payoutId: row.id, paymentId: row.payment_id }, "a refund was stopped before sending: its payment's provider gave it back");
  if (decided.deliveryIds.length > 0) await scheduleDeliveries(deps, decided.deliveryIds);
  return { row: decided.row, stopped: decided.stopped };
}
