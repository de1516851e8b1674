/**
 * Moving a permit forward (contract §5): what provider B confirmed — after a permit IPN, from the permit's
 * `providerB-sync` chain (`permit-sync.ts`, for a lost IPN), or when a
 * revocation is asked — checked against our record, then in ONE database transaction: the new status, its
 * event and the event's deliveries, and (for an ended permit) the cancellation of its renewal schedule.
 *
 * | from | to | event |
 * |---|---|---|
 * | pending | active | `permit.activated` |
 * | pending | declined | `permit.declined` |
 * | pending, active | revoked | `permit.revoked` |
 * | pending, active | expired | `permit.revoked` with `status: "expired"` (no event type of its own in the contract) |
 *
 * Declined, revoked and expired are final; anything else (a late `active` after a revocation, the same
 * status again) changes nothing.
 */
import type { EventType, Permit, PermitStatus } from "../../db/schema.ts";
import { NotConfiguredError } from "../../errors.ts";
import { type AuthorisationRef, type AuthorisationReport, ProviderCallError } from "../../providers/provider.ts";
import { checkoutProviderOf } from "../checkout/checkout-provider.ts";
import type { Deps } from "../deps.ts";
import { recordEvent } from "../events/record-event.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";
import { permitEventData } from "./permit-view.ts";
import { cancelScheduleOfPermit } from "./schedules.ts";

export const ENDED_STATUSES: readonly PermitStatus[] = ["declined", "revoked", "expired"];

const EVENT_OF: Record<Exclude<PermitStatus, "pending">, EventType> = {
  active: "permit.activated",
  declined: "permit.declined",
  revoked: "permit.revoked",
  expired: "permit.revoked",
};

/** May a permit in `from` move to `to`? Only forward: pending to anything else, active to revoked or expired. */
export function mayMovePermit(from: PermitStatus, to: PermitStatus): boolean {
  if (from === to || to === "pending") return false;
  if (from === "pending") return true;
  return from === "active" && (to === "revoked" || to === "expired");
}

export type PermitOutcome =
  | { outcome: "moved"; status: PermitStatus; eventId: string }
  | { outcome: "unchanged"; status: PermitStatus }
  | { outcome: "mismatch"; reason: string };

/** The permit as the port names it: the account version it was made with and provider B's token. */
export function authorisationOf(permit: Permit): AuthorisationRef {
  return { tenantId: permit.tenant_id, environment: permit.environment, credentialVersion: permit.credential_version, providerAuthorisationId: permit.token };
}

/** Why a confirmation does not match our permit, or null when it does. */
export function permitMismatchOf(permit: Permit, report: AuthorisationReport): string | null {
  if (report.providerAuthorisationId !== permit.token) return "the confirmed token is not the permit's";
  if (report.environment !== permit.environment) return `the confirmed environment ${report.environment} is not the permit's`;
  if (report.maxAmount !== null && report.maxAmount !== Number(permit.max_amount))
    return `the confirmed max_amount ${report.maxAmount} is not ${permit.max_amount}`;
  return null;
}

/**
 * Confirms the permit with provider B — with the credential version it was made with — and applies the
 * answer. Provider failures (502/504) throw, so the calling job retries; a refusal or a mismatch changes
 * nothing and is logged as an alert (the IPN is marked rejected).
 */
export async function confirmPermitAndApply(deps: Deps, permitId: string, options: { ipnId?: number } = {}): Promise<PermitOutcome> {
  const permit = await deps.db.selectFrom("permits").selectAll().where("id", "=", permitId).executeTakeFirstOrThrow();
  let report: AuthorisationReport;
  try {
    report = await checkoutProviderOf(deps).recurring.read(deps, authorisationOf(permit));
  } catch (error) {
    if (error instanceof NotConfiguredError) return rejectMismatch(deps, permit, "the credential version the permit was made with is gone", options.ipnId);
    // A refusal: provider B does not know the token.
    if (error instanceof ProviderCallError && error.kind === "refused")
      return rejectMismatch(deps, permit, `provider B refused the confirm: ${error.message}`, options.ipnId);
    throw error;
  }
  const mismatch = permitMismatchOf(permit, report);
  if (mismatch) return rejectMismatch(deps, permit, mismatch, options.ipnId);
  return applyPermitStatus(deps, permitId, report.status, { paymentMethod: report.paymentMethod, ipnId: options.ipnId });
}

async function rejectMismatch(deps: Deps, permit: Permit, reason: string, ipnId: number | undefined): Promise<PermitOutcome> {
  deps.logger.error(
    { alert: "providerB_permit_confirm_mismatch", permitId: permit.id, tenantId: permit.tenant_id, environment: permit.environment, ipnId, reason },
    "provider B's permit confirmation does not match the permit: nothing changed",
  );
  if (ipnId !== undefined)
    await deps.db.updateTable("ipn_messages").set({ state: "rejected", last_error: reason, processed_at: deps.now() }).where("id", "=", ipnId).execute();
  return { outcome: "mismatch", reason };
}

/**
 * The transaction part: the permit row locked, moved forward when allowed, its event recorded, its schedule
 * cancelled when it ended, the IPN marked processed; then the deliveries are enqueued.
 */
export async function applyPermitStatus(
  deps: Deps,
  permitId: string,
  to: PermitStatus,
  options: { paymentMethod?: string | null; ipnId?: number } = {},
): Promise<PermitOutcome> {
  const result = await deps.db.transaction().execute(async (tx) => {
    const now = deps.now();
    const permit = await tx.selectFrom("permits").selectAll().where("id", "=", permitId).forUpdate().executeTakeFirstOrThrow();
    let outcome: PermitOutcome = { outcome: "unchanged", status: permit.status };
    let deliveryIds: string[] = [];
    if (mayMovePermit(permit.status, to)) {
      const ended = ENDED_STATUSES.includes(to);
      const updated = await tx
        .updateTable("permits")
        .set({
          status: to,
          updated_at: now,
          ...(to === "active" ? { activated_at: now, payment_method: options.paymentMethod ?? permit.payment_method } : {}),
          ...(ended ? { ended_at: now } : {}),
        })
        .where("id", "=", permitId)
        .returningAll()
        .executeTakeFirstOrThrow();
      if (ended) await cancelScheduleOfPermit(tx, permitId, now);
      const recorded = await recordEvent(tx, now, {
        tenantId: updated.tenant_id,
        environment: updated.environment,
        type: EVENT_OF[to as Exclude<PermitStatus, "pending">],
        data: permitEventData(updated),
      });
      deliveryIds = recorded.deliveryIds;
      outcome = { outcome: "moved", status: to, eventId: recorded.eventId };
    }
    if (options.ipnId !== undefined)
      await tx.updateTable("ipn_messages").set({ state: "processed", processed_at: now }).where("id", "=", options.ipnId).execute();
    return { outcome, deliveryIds };
  });
  if (result.deliveryIds.length > 0) await scheduleDeliveries(deps, result.deliveryIds);
  return result.outcome;
}
