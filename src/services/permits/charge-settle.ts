/**
 * Settling a permit charge: the charge, its payment and its event in the caller's transaction
 * ({@link settleCharge}), and settling a pending charge from its invoice as provider B confirms it — after
 * the charge's IPN or from the sync job ({@link confirmChargeAndApply}).
 *
 * A charge moves `pending` → `succeeded` | `failed`, and a failed one may still become `succeeded` when
 * provider B later confirms its invoice completed (the money moved: paid wins, as for a checkout). Each
 * move records one `permit.charge.succeeded` or `permit.charge.failed`; a charge emits no `payment.*` event.
 * A renewal that succeeds after its schedule went `past_due` returns the schedule to `active` in the same
 * transaction ({@link healPastDueSchedule}).
 */
import type { Transaction } from "kysely";
import type { Database, PermitChargeRow, PermitChargeStatus } from "../../db/schema.ts";
import type { PaymentReport } from "../../providers/provider.ts";
import { readConfirmation } from "../checkout/apply-confirmation.ts";
import type { Deps } from "../deps.ts";
import { recordEvent } from "../events/record-event.ts";
import { mayMove, nextState } from "../payments/state-order.ts";
import { lockPaymentRow, writeMove } from "../payments/transition.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";
import { permitEventData } from "./permit-view.ts";
import { healPastDueSchedule } from "./schedules.ts";

/** May a charge in `from` move to `to`? A charge is a payment: the order of payment states (`payments/state-order.ts`). */
export function mayMoveCharge(from: PermitChargeStatus, to: PermitChargeStatus): boolean {
  return mayMove(from, to);
}

export interface SettleDetails {
  to: "succeeded" | "failed";
  failReason?: string | null;
  /** Provider B's own word (`completed`, `failed`, `cancelled`). */
  providerStatus?: string;
  /** What the invoice confirm adds: the receipt and the channel. */
  confirmation?: PaymentReport;
}

/**
 * Locks a charge to settle it, in the caller's transaction: a renewal's schedule row first, then the charge.
 * That is the order of every transaction that takes both (a renewal's insert, the outcome a sweep or job
 * applies), so a settle that moves its schedule ({@link healPastDueSchedule}) cannot deadlock with them.
 */
export async function lockChargeToSettle(tx: Transaction<Database>, chargeId: string): Promise<PermitChargeRow> {
  await tx
    .selectFrom("permit_schedules as s")
    .innerJoin("permit_charges as c", "c.schedule_id", "s.id")
    .select("s.id")
    .where("c.id", "=", chargeId)
    .forUpdate("s")
    .execute();
  return tx.selectFrom("permit_charges").selectAll().where("id", "=", chargeId).forUpdate().executeTakeFirstOrThrow();
}

/**
 * Moves the charge (locked by the caller with {@link lockChargeToSettle}) and its payment to `details.to`,
 * records the event, and heals its schedule when it was `past_due` on the charge's period; returns the
 * charge as it now stands and the deliveries to enqueue after the commit. A move not allowed changes nothing.
 */
export async function settleCharge(
  tx: Transaction<Database>,
  now: Date,
  charge: PermitChargeRow,
  details: SettleDetails,
): Promise<{ charge: PermitChargeRow; deliveryIds: string[] }> {
  if (!mayMoveCharge(charge.status, details.to)) return { charge, deliveryIds: [] };
  const failReason = details.to === "failed" ? (details.failReason ?? "failed") : null;
  const updated = await tx
    .updateTable("permit_charges")
    .set({ status: details.to, fail_reason: failReason, settled_at: now, updated_at: now })
    .where("id", "=", charge.id)
    .returningAll()
    .executeTakeFirstOrThrow();
  const confirmation = details.confirmation;
  // Its payment moves with it, by the payment's one writer; the charge's own event (below) is the one it causes.
  const payment = await lockPaymentRow(tx, charge.payment_id);
  await writeMove(tx, now, payment, {
    changes: {
      state: nextState(payment.state, details.to),
      ...(details.providerStatus ? { provider_status: details.providerStatus } : {}),
      failure_code: failReason,
      outcome_unknown: false,
      completed_at: now,
      ...(confirmation?.details?.paymentMethod ? { payment_method: confirmation.details.paymentMethod } : {}),
      ...(confirmation?.details?.receiptUrl ? { receipt_url: confirmation.details.receiptUrl } : {}),
      ...(confirmation?.details?.receiptIdentifier ? { receipt_identifier: confirmation.details.receiptIdentifier } : {}),
      ...(confirmation?.reference ? { provider_reference: confirmation.reference } : {}),
    },
    event: () => null,
  });
  // Paid wins over past_due too: the period is paid, the schedule goes on with the next one.
  if (updated.status === "succeeded") await healPastDueSchedule(tx, now, updated);
  const permit = await tx.selectFrom("permits").selectAll().where("id", "=", charge.permit_id).executeTakeFirstOrThrow();
  const recorded = await recordEvent(tx, now, {
    tenantId: updated.tenant_id,
    environment: updated.environment,
    type: details.to === "succeeded" ? "permit.charge.succeeded" : "permit.charge.failed",
    data: permitEventData(permit, updated),
    paymentId: updated.payment_id,
  });
  return { charge: updated, deliveryIds: recorded.deliveryIds };
}

export type ChargeOutcome = { outcome: "moved" | "unchanged"; status: PermitChargeStatus } | { outcome: "mismatch"; reason: string };

/** Why an invoice confirmation does not match the charge, or null when it does. */
export function chargeMismatchOf(charge: PermitChargeRow, report: PaymentReport): string | null {
  if (report.providerPaymentId !== charge.invoice_token) return "the confirmed token is not the charge's invoice";
  if (!report.details) return "the confirmation carries no amount";
  if (report.details.amount !== Number(charge.amount)) return `the confirmed amount ${report.details.amount} is not ${charge.amount}`;
  if (report.details.environment !== charge.environment) return `the confirmed environment ${report.details.environment} is not the charge's`;
  return null;
}

/**
 * Confirms the charge's invoice with provider B (the permit's credential version) and applies it: only the
 * confirmed answer counts. A charge not answered yet has no invoice to confirm (the caller sends it
 * instead). Provider failures throw (the job retries); a refusal or mismatch changes nothing, alerts, and
 * rejects the IPN.
 */
export async function confirmChargeAndApply(deps: Deps, chargeId: string, options: { ipnId?: number } = {}): Promise<ChargeOutcome> {
  const charge = await deps.db.selectFrom("permit_charges").selectAll().where("id", "=", chargeId).executeTakeFirstOrThrow();
  if (!charge.invoice_token) return { outcome: "unchanged", status: charge.status };
  // The charge's payment carries its invoice token and the permit's credential version: read it as any payment.
  const payment = await deps.db.selectFrom("payments").selectAll().where("id", "=", charge.payment_id).executeTakeFirstOrThrow();
  const confirmation = await readConfirmation(deps, payment);
  if (typeof confirmation === "string") return rejectMismatch(deps, charge, confirmation, options.ipnId);
  const mismatch = chargeMismatchOf(charge, confirmation);
  if (mismatch) return rejectMismatch(deps, charge, mismatch, options.ipnId);

  const result = await deps.db.transaction().execute(async (tx) => {
    const now = deps.now();
    const locked = await lockChargeToSettle(tx, chargeId);
    let settled: { charge: PermitChargeRow; deliveryIds: string[] } = { charge: locked, deliveryIds: [] };
    if (confirmation.state === "succeeded")
      settled = await settleCharge(tx, now, locked, { to: "succeeded", providerStatus: confirmation.providerStatus, confirmation });
    else if (confirmation.state !== "pending")
      settled = await settleCharge(tx, now, locked, {
        to: "failed",
        failReason: confirmation.errorCode ?? confirmation.providerStatus,
        providerStatus: confirmation.providerStatus,
        confirmation,
      });
    if (options.ipnId !== undefined)
      await tx.updateTable("ipn_messages").set({ state: "processed", processed_at: now }).where("id", "=", options.ipnId).execute();
    return { moved: settled.charge.status !== locked.status, status: settled.charge.status, deliveryIds: settled.deliveryIds };
  });
  if (result.deliveryIds.length > 0) await scheduleDeliveries(deps, result.deliveryIds);
  return { outcome: result.moved ? "moved" : "unchanged", status: result.status };
}

async function rejectMismatch(deps: Deps, charge: PermitChargeRow, reason: string, ipnId: number | undefined): Promise<ChargeOutcome> {
  deps.logger.error(
    {
      alert: "providerB_charge_confirm_mismatch",
      chargeId: charge.id,
      paymentId: charge.payment_id,
      tenantId: charge.tenant_id,
      environment: charge.environment,
      ipnId,
      reason,
    },
    "provider B's confirmation does not match the permit charge: nothing changed",
  );
  if (ipnId !== undefined)
    await deps.db.updateTable("ipn_messages").set({ state: "rejected", last_error: reason, processed_at: deps.now() }).where("id", "=", ipnId).execute();
  return { outcome: "mismatch", reason };
}
