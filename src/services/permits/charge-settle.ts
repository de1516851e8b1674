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
import type { Environment } from "../../config.ts";
import type { Database, PermitChargeRow, PermitChargeStatus } from "../../db/schema.ts";
import { AppError } from "../../errors.ts";
import { MODE_OF, type CheckoutConfirmation } from "../../providers/providerB/wire.ts";
import { confirmedAmount } from "../../providers/providerB/map.ts";
import type { Deps } from "../deps.ts";
import { recordEvent } from "../events/record-event.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";
import { openPermitAccount } from "./permit-account.ts";
import { permitEventData } from "./permit-view.ts";
import { healPastDueSchedule } from "./schedules.ts";

/** May a charge in `from` move to `to`? */
export function mayMoveCharge(from: PermitChargeStatus, to: PermitChargeStatus): boolean {
  if (from === to || to === "pending") return false;
  return from === "pending" || (from === "failed" && to === "succeeded");
}

export interface SettleDetails {
  to: "succeeded" | "failed";
  failReason?: string | null;
  /** Provider B's own word (`completed`, `failed`, `cancelled`). */
  providerStatus?: string;
  /** What the invoice confirm adds: the receipt and the channel. */
  confirmation?: CheckoutConfirmation;
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
  await tx
    .updateTable("payments")
    .set({
      state: details.to,
      ...(details.providerStatus ? { provider_status: details.providerStatus } : {}),
      failure_code: failReason,
      outcome_unknown: false,
      updated_at: now,
      completed_at: now,
      ...(confirmation?.customer?.payment_method ? { payment_method: confirmation.customer.payment_method } : {}),
      ...(confirmation?.receipt_url ? { receipt_url: confirmation.receipt_url } : {}),
      ...(confirmation?.receipt_identifier ? { receipt_identifier: confirmation.receipt_identifier } : {}),
      ...(confirmation?.provider_reference ? { provider_reference: confirmation.provider_reference } : {}),
    })
    .where("id", "=", charge.payment_id)
    .execute();
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
export function chargeMismatchOf(charge: PermitChargeRow, confirmation: CheckoutConfirmation): string | null {
  if (confirmation.invoice.token !== charge.invoice_token) return "the confirmed token is not the charge's invoice";
  if (confirmedAmount(confirmation) !== Number(charge.amount)) return `the confirmed amount ${confirmation.invoice.total_amount} is not ${charge.amount}`;
  if (confirmation.mode !== MODE_OF[charge.environment as Environment]) return `the confirmed mode ${confirmation.mode} is not the charge's environment`;
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
  const permit = await deps.db
    .selectFrom("permits")
    .select(["tenant_id", "environment", "credential_version"])
    .where("id", "=", charge.permit_id)
    .executeTakeFirstOrThrow();
  const account = await openPermitAccount(deps, { tenantId: permit.tenant_id, environment: permit.environment, version: permit.credential_version });
  if (!account) return rejectMismatch(deps, charge, "the credential version the permit was made with is gone", options.ipnId);
  let confirmation: CheckoutConfirmation;
  try {
    confirmation = await account.invoices.confirmCheckoutInvoice(charge.invoice_token);
  } catch (error) {
    if (error instanceof AppError && error.status === 422)
      return rejectMismatch(deps, charge, `provider B refused the confirm: ${error.message}`, options.ipnId);
    throw error;
  }
  const mismatch = chargeMismatchOf(charge, confirmation);
  if (mismatch) return rejectMismatch(deps, charge, mismatch, options.ipnId);

  const result = await deps.db.transaction().execute(async (tx) => {
    const now = deps.now();
    const locked = await lockChargeToSettle(tx, chargeId);
    let settled: { charge: PermitChargeRow; deliveryIds: string[] } = { charge: locked, deliveryIds: [] };
    if (confirmation.status === "completed") settled = await settleCharge(tx, now, locked, { to: "succeeded", providerStatus: "completed", confirmation });
    else if (confirmation.status !== "pending")
      settled = await settleCharge(tx, now, locked, {
        to: "failed",
        failReason: confirmation.fail_reason ?? confirmation.status,
        providerStatus: confirmation.status,
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
