/**
 * Provider A ↔ domain, both ways: the spec's `payment_method` values as provider A's wire modes (with the
 * country each operator serves and its currency), and a wire transaction as a domain {@link PaymentReport}.
 */
import type { Currency, PaymentState } from "../../db/schema.ts";
import { PAID_STATUSES, type PaymentMethod } from "../../services/direct-payments/payment-methods.ts";
import type { PaymentMethodCapability, PaymentReport } from "../provider.ts";
import type { WireMode, WireStatus, WireTransaction } from "./wire.ts";
import { WIRE_STATUSES } from "./wire.ts";

/** Each method's wire mode, the operator behind it and the country it serves (providers.md table). */
export const METHOD_WIRE: Record<PaymentMethod, { mode: WireMode; operator: string; country: string }> = {
  mnoA_open: { mode: "mtn_open", operator: "mtn", country: "bj" },
  mnoB: { mode: "moov", operator: "moov", country: "bj" },
  mnoC: { mode: "sbin", operator: "celtiis", country: "bj" },
  mnoB_tg: { mode: "moov_tg", operator: "moov", country: "tg" },
  mnoD: { mode: "togocel", operator: "togocel", country: "tg" },
  mnoA_open_gn: { mode: "mtn_open_gn", operator: "mtn", country: "gn" },
  mnoA_ci: { mode: "mtn_ci", operator: "mtn", country: "ci" },
  mnoE_ne: { mode: "airtel_ne", operator: "airtel", country: "ne" },
  mnoF_sn: { mode: "free_sn", operator: "free", country: "sn" },
};

/** The currency follows the country: GNF for gn, XOF otherwise. */
function currencyOf(country: string): Currency {
  return country === "gn" ? "GNF" : "XOF";
}

/** The methods provider A serves, as its capabilities declare them. */
export const PROVIDER_A_METHODS: readonly PaymentMethodCapability[] = Object.entries(METHOD_WIRE).map(([method, wire]) => ({
  method,
  operator: wire.operator,
  country: wire.country,
  currency: currencyOf(wire.country),
  collection: "ussd_push",
}));

/** The wire mode of a spec `payment_method`. */
export function wireModeOf(method: PaymentMethod): WireMode {
  return METHOD_WIRE[method].mode;
}

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

/** A wire transaction as the domain's report; `undefined` for a status this adapter does not know. */
export function toPaymentReport(trx: WireTransaction): PaymentReport | undefined {
  if (!isWireStatus(trx.status)) return undefined;
  const approvedAt = trx.approved_at ? new Date(trx.approved_at) : null;
  return {
    providerPaymentId: String(trx.id),
    reference: trx.reference ?? null,
    providerStatus: trx.status,
    state: stateOfWireStatus(trx.status),
    errorCode: trx.last_error_code ?? null,
    approvedAt: approvedAt && !Number.isNaN(approvedAt.getTime()) ? approvedAt : null,
  };
}
