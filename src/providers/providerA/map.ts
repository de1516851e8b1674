/**
 * Provider A ↔ domain: the spec's `payment_method` enum and its wire modes, countries, calling codes and
 * currencies (providers.md table, contract §4), and a wire transaction as a domain status.
 */
import type { Currency, PaymentState } from "../../db/schema.ts";
import type { WireMode, WireStatus, WireTransaction } from "./wire.ts";
import { WIRE_STATUSES } from "./wire.ts";

/** The spec's `payment_method` values, in the spec's order (the 400 message lists them so). */
export const PAYMENT_METHODS = ["mnoA_open", "mnoB", "mnoC", "mnoB_tg", "mnoD", "mnoA_open_gn", "mnoA_ci", "mnoE_ne", "mnoF_sn"] as const;

export type PaymentMethod = (typeof PAYMENT_METHODS)[number];

/** Countries provider A's direct payments serve. */
export type DirectPaymentCountry = "bj" | "tg" | "gn" | "ci" | "ne" | "sn";

/** Each method's wire mode and the country its operator serves. */
export const METHOD_WIRE: Record<PaymentMethod, { mode: WireMode; country: DirectPaymentCountry }> = {
  mnoA_open: { mode: "mtn_open", country: "bj" },
  mnoB: { mode: "moov", country: "bj" },
  mnoC: { mode: "sbin", country: "bj" },
  mnoB_tg: { mode: "moov_tg", country: "tg" },
  mnoD: { mode: "togocel", country: "tg" },
  mnoA_open_gn: { mode: "mtn_open_gn", country: "gn" },
  mnoA_ci: { mode: "mtn_ci", country: "ci" },
  mnoE_ne: { mode: "airtel_ne", country: "ne" },
  mnoF_sn: { mode: "free_sn", country: "sn" },
};

/** International calling codes of the served countries (contract §4). */
export const CALLING_CODES: Record<DirectPaymentCountry, string> = { bj: "229", tg: "228", gn: "224", ci: "225", ne: "227", sn: "221" };

/** The currency follows the country: GNF for gn, XOF otherwise. */
export function currencyOf(country: string): Currency {
  return country === "gn" ? "GNF" : "XOF";
}

/** The wire mode of a spec `payment_method`. */
export function wireModeOf(method: PaymentMethod): WireMode {
  return METHOD_WIRE[method].mode;
}

/** Statuses in which the money is the merchant's (contract §4): `approved` is true for these. */
export const PAID_STATUSES: readonly string[] = ["approved", "transferred", "approved_partially_refunded", "transferred_partially_refunded"];

/** Whether `status` is a known provider A status. */
export function isWireStatus(status: string): status is WireStatus {
  return (WIRE_STATUSES as readonly string[]).includes(status);
}

/** Our normalised state of a provider A status. */
export function stateOfWireStatus(status: WireStatus): PaymentState {
  if (PAID_STATUSES.includes(status)) return "succeeded";
  if (status === "declined") return "failed";
  if (status === "canceled") return "cancelled";
  if (status === "refunded") return "refunded";
  return "pending";
}

/** What the core learns from one read of a provider A transaction. */
export interface ProviderATransactionFacts {
  /** Provider A's integer id. */
  transactionId: number;
  reference: string | null;
  status: WireStatus;
  state: PaymentState;
  errorCode: string | null;
  approvedAt: Date | null;
}

/** A wire transaction as domain facts; `undefined` for a status this adapter does not know. */
export function toTransactionFacts(trx: WireTransaction): ProviderATransactionFacts | undefined {
  if (!isWireStatus(trx.status)) return undefined;
  const approvedAt = trx.approved_at ? new Date(trx.approved_at) : null;
  return {
    transactionId: trx.id,
    reference: trx.reference ?? null,
    status: trx.status,
    state: stateOfWireStatus(trx.status),
    errorCode: trx.last_error_code ?? null,
    approvedAt: approvedAt && !Number.isNaN(approvedAt.getTime()) ? approvedAt : null,
  };
}
