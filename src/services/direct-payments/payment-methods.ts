/**
 * The contract's words for a direct payment (contract §4), which the API shows whatever provider carries
 * it: the spec's `payment_method` enum, the countries and their calling codes, and the status words with
 * the ones in which the money is the merchant's. A provider maps its own words to these in its folder.
 *
 * @module
 */

import type { Country } from "../countries.ts";

export { PAID_STATUSES, PAYMENT_METHODS, type PaymentMethod, REPORTED_STATUSES } from "../../providers/direct-payment-words.ts";
import { REPORTED_STATUSES } from "../../providers/direct-payment-words.ts";

/** The countries direct payments serve (contract §4), in its order; their calling codes are in `services/countries.ts`. */
export const DIRECT_PAYMENT_COUNTRIES = ["bj", "tg", "gn", "ci", "ne", "sn"] as const satisfies readonly Country[];

/** Every status a direct payment can show (contract §4): the reported words, plus our `failed`. */
export const DIRECT_PAYMENT_STATUSES = [...REPORTED_STATUSES, "failed"] as const;

export type DirectPaymentStatus = (typeof DIRECT_PAYMENT_STATUSES)[number];
