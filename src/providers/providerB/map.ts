/**
 * From provider B's words to ours: a confirmed checkout status to our payment state and event type, and
 * the order in which states may follow each other (contract §5: `completed` wins over `cancelled` and
 * `failed`, since a customer may pay after cancelling once).
 */
import type { EventType, PaymentCustomer, PaymentState } from "../../db/schema.ts";
import type { CheckoutConfirmation, CheckoutStatus } from "./wire.ts";

export const STATE_OF: Record<CheckoutStatus, PaymentState> = {
  pending: "pending",
  completed: "succeeded",
  cancelled: "cancelled",
  failed: "failed",
};

export const EVENT_OF: Partial<Record<PaymentState, EventType>> = {
  succeeded: "payment.completed",
  cancelled: "payment.cancelled",
  failed: "payment.failed",
};

/**
 * May a checkout in state `from` move to `to`? Pending moves to any outcome; a cancelled or failed one
 * may still complete (or change between the two); a succeeded one is final.
 */
export function mayMove(from: PaymentState, to: PaymentState): boolean {
  if (from === to || to === "pending") return false;
  if (from === "pending") return true;
  if (from === "cancelled" || from === "failed") return to !== "refunded";
  return false;
}

/** The customer provider B reports, merged over what we had (only the fields it gives). */
export function customerOf(confirmation: CheckoutConfirmation, before: PaymentCustomer | null): PaymentCustomer {
  const merged: PaymentCustomer = { ...before };
  const given = confirmation.customer;
  if (given?.name) merged.name = given.name;
  if (given?.email) merged.email = given.email;
  if (given?.phone) merged.phone = given.phone;
  return merged;
}

/** Amount of the confirmation, in whole units. */
export function confirmedAmount(confirmation: CheckoutConfirmation): number {
  return Number(confirmation.invoice.total_amount);
}
