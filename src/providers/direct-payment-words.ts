/**
 * The contract's words for a direct payment that a provider maps its own words to (contract §4): the spec's
 * `payment_method` enum, the status words a provider reports, and the ones in which the money is the
 * merchant's. Part of the port's vocabulary; the domain's `services/direct-payments/payment-methods.ts`
 * builds on them.
 *
 * @module
 */

/** The spec's `payment_method` values, in the spec's order (the 400 message lists them so). */
export const PAYMENT_METHODS = ["mnoA_open", "mnoB", "mnoC", "mnoB_tg", "mnoD", "mnoA_open_gn", "mnoA_ci", "mnoE_ne", "mnoF_sn"] as const;

export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** The status words a provider reports for a direct payment, as contract §4 lists them (provider A's words). */
export const REPORTED_STATUSES = [
  "pending",
  "approved",
  "declined",
  "canceled",
  "refunded",
  "transferred",
  "approved_partially_refunded",
  "transferred_partially_refunded",
] as const;

/** Statuses in which the money is the merchant's (contract §4): `approved` is true for these. */
export const PAID_STATUSES: readonly string[] = ["approved", "transferred", "approved_partially_refunded", "transferred_partially_refunded"];
