/**
 * Applies the provider's word on a payout or refund (a {@link PayoutReport}) in one transaction: its state
 * moves forward only (`pending` → `sent` | `failed`), with its ledger journal, its event and — for a refund
 * that was sent — the payment's refunded amount (and `refunded` with `payment.refunded` once all of it is
 * back). A final payout the provider reports otherwise is kept as it is and recorded as a reconciliation
 * difference.
 *
 * | move              | ledger                 | event (payout / refund)            |
 * |-------------------|------------------------|------------------------------------|
 * | pending → sent    | `sent` (+ `fee`)       | `payout.sent` / `refund.succeeded` (+ `payment.refunded` when full) |
 * | pending → failed  | `released`             | `payout.failed` / `refund.failed`  |
 *
 * @module
 */
import type { Transaction, Updateable } from "kysely";
import type { Database, EventType, Payment, PayoutRow } from "../../db/schema.ts";
import type { PayoutReport } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { recordEvent } from "../events/record-event.ts";
import { chargeFee, release, releaseFee, settleSent } from "../ledger/ledger.ts";
import { lockPaymentRow, writeMove } from "../payments/transition.ts";
import { recordDifference } from "../reports/differences.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";
import { moneyOutEventData } from "./payout-view.ts";
import { ledgerSubjectOf } from "./record-money-out.ts";
import { excessOf, noteRefundBeyondProvider } from "./refund-room.ts";

type ApplyDeps = Pick<Deps, "db" | "now" | "queue" | "logger">;

const EVENTS: Record<PayoutRow["purpose"], { sent: EventType; failed: EventType }> = {
  payout: { sent: "payout.sent", failed: "payout.failed" },
  refund: { sent: "refund.succeeded", failed: "refund.failed" },
};

/** The fields a report sets on a pending row (no state change). */
function reportFields(report: PayoutReport, now: Date) {
  return {
    provider_payout_id: report.providerPayoutId,
    provider_status: report.providerStatus,
    provider_synced_at: now,
    updated_at: now,
    ...(report.fee !== null && { fee: report.fee }),
  };
}

/**
 * A sent refund adds to its payment's refunded amount; all of it back makes a paid payment `refunded`, with
 * `payment.refunded` — one move by the payment's one writer. The payment's row is locked already
 * ({@link lockPayout}: a refund's payment first).
 */
async function refundSent(tx: Transaction<Database>, now: Date, row: PayoutRow): Promise<{ payment: Payment; deliveryIds: string[] }> {
  const payment = await lockPaymentRow(tx, row.payment_id!);
  const amountRefunded = Number(payment.amount_refunded) + Number(row.amount);
  const allBack = amountRefunded >= Number(payment.amount) && payment.state === "succeeded";
  const moved = await writeMove(tx, now, payment, {
    changes: { amount_refunded: amountRefunded, ...(allBack ? { state: "refunded" as const } : {}) },
    event: (refunded) => ({
      type: "payment.refunded",
      data: {
        paymentId: refunded.id,
        provider: refunded.provider,
        kind: refunded.kind,
        state: refunded.state,
        amount: Number(refunded.amount),
        amountRefunded: Number(refunded.amount_refunded),
        currency: refunded.currency,
        description: refunded.description,
        lastRefundId: row.id,
      },
      directTargetUrl: refunded.callback_url ?? undefined,
    }),
  });
  return { payment: moved.row, deliveryIds: moved.deliveryIds };
}

/**
 * Moves the pending payout `payoutId` (locked by the caller, and for a refund its payment's row before it)
 * to its final state, with its ledger journal and event; a sent refund adds to its payment's refunded amount,
 * and one that went out beyond what its provider left of the payment is kept as a difference. Answers the
 * row and the deliveries to schedule after commit.
 */
async function finish(
  tx: Transaction<Database>,
  now: Date,
  payoutId: string,
  set: Updateable<Database["payouts"]>,
): Promise<{ row: PayoutRow; deliveryIds: string[] }> {
  const row = await tx.updateTable("payouts").set(set).where("id", "=", payoutId).returningAll().executeTakeFirstOrThrow();
  const subject = ledgerSubjectOf(row);
  const amount = Number(row.amount);
  const ids: string[] = [];
  if (row.state === "sent") {
    await settleSent(tx, now, subject, amount);
    await chargeFee(tx, now, subject, row.fee === null ? null : Number(row.fee));
  } else {
    await release(tx, now, subject, amount);
    await releaseFee(tx, now, subject);
  }
  const recorded = await recordEvent(tx, now, {
    tenantId: row.tenant_id,
    environment: row.environment,
    type: EVENTS[row.purpose][row.state === "sent" ? "sent" : "failed"],
    data: moneyOutEventData(row),
    ...(row.payment_id !== null && { paymentId: row.payment_id }),
  });
  ids.push(...recorded.deliveryIds);
  if (row.purpose === "refund" && row.state === "sent") {
    const { payment, deliveryIds } = await refundSent(tx, now, row);
    ids.push(...deliveryIds);
    // Sent beyond what the payment's provider left of it (it gave the payment back meanwhile): money out twice.
    if (excessOf(payment, Number(payment.amount_refunded)) > 0) await noteRefundBeyondProvider(tx, now, payment, row);
  }
  return { row, deliveryIds: ids };
}

/**
 * Stops a pending payout or refund before anything was sent — a refund that no longer fits what its
 * payment's provider left of it, a pooled payout whose fee the tenant's money there cannot cover: `failed`
 * with `failureCode`, its reservation released, `payout.failed` / `refund.failed` — in the caller's
 * transaction, which holds its rows ({@link lockPayout}). Answers the deliveries to schedule after commit.
 */
export async function stopBeforeSending(
  tx: Transaction<Database>,
  now: Date,
  payoutId: string,
  failureCode: string,
): Promise<{ row: PayoutRow; deliveryIds: string[] }> {
  return finish(tx, now, payoutId, { state: "failed", failed_at: now, failure_code: failureCode, outcome_unknown: false, updated_at: now });
}

/**
 * Locks the payout's row for a decision about it; a refund's payment first, in the order every writer
 * of a payment's refunds takes them (payment, then refund), so none waits on another in a circle.
 */
export async function lockPayout(tx: Transaction<Database>, payoutId: string): Promise<PayoutRow> {
  const ref = await tx.selectFrom("payouts").select("payment_id").where("id", "=", payoutId).executeTakeFirstOrThrow();
  if (ref.payment_id !== null) await lockPaymentRow(tx, ref.payment_id);
  return tx.selectFrom("payouts").selectAll().where("id", "=", payoutId).forUpdate().executeTakeFirstOrThrow();
}

/**
 * Applies `report` to the payout `payoutId`; answers the row as it is after. Idempotent: a report already
 * applied changes nothing and records nothing.
 *
 * @example
 * ```ts
 * const after = await applyPayoutReport(deps, row.id, await provider.payouts.read(deps, ref));
 * ```
 */
export async function applyPayoutReport(deps: ApplyDeps, payoutId: string, report: PayoutReport): Promise<PayoutRow> {
  const now = deps.now();
  const { row, deliveryIds } = await deps.db.transaction().execute(async (tx) => {
    const seen = await lockPayout(tx, payoutId);
    if (seen.state !== "pending") {
      if (report.state !== seen.state && report.state !== "pending")
        await recordDifference(tx, now, {
          subjectId: seen.id,
          subjectKind: seen.purpose,
          tenantId: seen.tenant_id,
          environment: seen.environment,
          provider: seen.provider,
          ourState: seen.state,
          providerState: report.state,
          providerStatus: report.providerStatus,
          amount: Number(seen.amount),
          currency: seen.currency,
        });
      return { row: seen, deliveryIds: [] as string[] };
    }
    if (report.state === "pending") {
      const row = await tx.updateTable("payouts").set(reportFields(report, now)).where("id", "=", payoutId).returningAll().executeTakeFirstOrThrow();
      return { row, deliveryIds: [] as string[] };
    }
    const final =
      report.state === "sent"
        ? { state: "sent" as const, sent_at: report.sentAt ?? now, failure_code: null }
        : { state: "failed" as const, failed_at: now, failure_code: report.errorCode ?? "provider_failed" };
    return finish(tx, now, payoutId, { ...reportFields(report, now), ...final, outcome_unknown: false });
  });
  if (deliveryIds.length > 0) await scheduleDeliveries(deps, deliveryIds);
  return row;
}
