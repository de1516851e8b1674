/**
 * Provider A ↔ domain, both ways: the spec's `payment_method` values as provider A's wire modes (with the
 * country each operator serves and its currency), a wire transaction as a domain {@link PaymentReport}, a
 * payout's operator and country as its payout mode, and a wire payout as a {@link PayoutReport}.
 */
import { PAID_STATUSES, type PaymentMethod } from "../direct-payment-words.ts";
import type {
  Currency,
  PaymentMethodCapability,
  PaymentState,
  PaymentReport,
  PayoutMethodCapability,
  PayoutReport,
  PayoutState,
  ProviderBalance,
} from "../provider.ts";
import type { WireBalance, WireMode, WirePayout, WirePayoutMode, WirePayoutStatus, WireStatus, WireTransaction } from "./wire.ts";
import { WIRE_PAYOUT_STATUSES, WIRE_STATUSES } from "./wire.ts";

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
    // Refunded on its dashboard, fully or partly: provider A says no amount (its transaction has no refunded amount field).
    ...(trx.status.includes("refunded") && { refundedByProvider: { amount: null } }),
  };
}

// --- payouts ---

/** Each payout mode by the operator and country it pays to (providers-money-out.md, FR docs 2025-10), keyed `<country>:<operator>`. */
export const PAYOUT_MODES: Readonly<Record<string, WirePayoutMode>> = {
  "bj:mtn": "mtn_open",
  "bj:moov": "moov",
  "bj:celtiis": "sbin",
  "tg:togocel": "togocel",
  "ci:mtn": "mtn_ci",
};

/** The wallets provider A pays out to, as its capabilities declare them. */
export const PROVIDER_A_PAYOUT_METHODS: readonly PayoutMethodCapability[] = Object.keys(PAYOUT_MODES).map((key) => {
  const [country, operator] = key.split(":") as [string, string];
  return { operator, country, currency: currencyOf(country) };
});

/** The payout mode of an operator in a country; undefined when provider A does not pay out there. */
export function payoutModeOf(operator: string, country: string): WirePayoutMode | undefined {
  return PAYOUT_MODES[`${country.toLowerCase()}:${operator.toLowerCase()}`];
}

function isWirePayoutStatus(status: string): status is WirePayoutStatus {
  return (WIRE_PAYOUT_STATUSES as readonly string[]).includes(status);
}

/** Our state of a provider A payout status: only `sent` and `failed` end it. */
function stateOfPayoutStatus(status: WirePayoutStatus): PayoutState {
  if (status === "sent") return "sent";
  if (status === "failed") return "failed";
  return "pending";
}

function dateOrNull(text: string | null | undefined): Date | null {
  const date = text ? new Date(text) : null;
  return date && !Number.isNaN(date.getTime()) ? date : null;
}

/** A wire payout as the domain's report; `undefined` for a status this adapter does not know. */
export function toPayoutReport(payout: WirePayout): PayoutReport | undefined {
  if (!isWirePayoutStatus(payout.status)) return undefined;
  return {
    providerPayoutId: String(payout.id),
    providerStatus: payout.status,
    state: stateOfPayoutStatus(payout.status),
    // `pending` is created and not started: nothing was sent, so starting it cannot send twice.
    notSentYet: payout.status === "pending",
    errorCode: payout.status === "failed" ? (payout.last_error_code ?? null) : null,
    fee: payout.fees ?? null,
    sentAt: dateOrNull(payout.sent_at),
  };
}

/** Provider A's `currency_id`s (the ids its API answers with). */
const CURRENCY_OF_ID: Readonly<Record<number, Currency>> = { 1: "XOF", 2: "GNF" };

/** Wire balances as the domain's, labelled by mode; a currency this gateway does not handle is left out. */
export function toProviderBalances(balances: readonly WireBalance[]): ProviderBalance[] {
  return balances.flatMap((balance) => {
    const currency = balance.currency_id == null ? undefined : CURRENCY_OF_ID[balance.currency_id];
    return currency ? [{ currency, amount: balance.amount, label: balance.mode ?? null }] : [];
  });
}
