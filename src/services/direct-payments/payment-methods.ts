/**
 * The contract's words for a direct payment (contract §4), which the API shows whatever provider carries
 * it: the spec's `payment_method` enum, the countries and their calling codes, and the status words with
 * the ones in which the money is the merchant's. A provider maps its own words to these in its folder.
 *
 * @module
 */

import type { Country } from "../countries.ts";

/** The spec's `payment_method` values, in the spec's order (the 400 message lists them so). */
export const PAYMENT_METHODS = ["mnoA_open", "mnoB", "mnoC", "mnoB_tg", "mnoD", "mnoA_open_gn", "mnoA_ci", "mnoE_ne", "mnoF_sn"] as const;

export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** The countries direct payments serve (contract §4), in its order; their calling codes are in `services/countries.ts`. */
export const DIRECT_PAYMENT_COUNTRIES = ["bj", "tg", "gn", "ci", "ne", "sn"] as const satisfies readonly Country[];

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

/** Every status a direct payment can show (contract §4): the reported words, plus our `failed`. */
export const DIRECT_PAYMENT_STATUSES = [...REPORTED_STATUSES, "failed"] as const;

export type DirectPaymentStatus = (typeof DIRECT_PAYMENT_STATUSES)[number];

/** Statuses in which the money is the merchant's (contract §4): `approved` is true for these. */
export const PAID_STATUSES: readonly string[] = ["approved", "transferred", "approved_partially_refunded", "transferred_partially_refunded"];
