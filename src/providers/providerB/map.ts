/**
 * Provider B's words to ours, both ways: its confirmed checkout (or charge invoice) as a {@link PaymentReport},
 * its permit as an {@link AuthorisationReport}, a charge's answer and refusal codes as our outcomes, our
 * environment as its `mode`; for money out, our wallets as its `withdraw_mode` (and a pay-in channel back
 * to a wallet), a disbursement's status as a {@link PayoutReport} and its balances.
 */
import type {
  Environment,
  PaymentState,
  PermitStatus,
  AuthorisationChargeResult,
  AuthorisationReport,
  PaymentReport,
  PayoutReport,
  PayoutState,
  ProviderBalance,
  ProviderCallError,
} from "../provider.ts";
import { DISBURSE_STATUSES, type DisburseStatus } from "./disburse.ts";
import { AMOUNT_EXCEEDS_PERMIT_CODE, PERMIT_NOT_ACTIVE_CODE, type PermitChargeAnswer, type PermitConfirmation, type ProviderChargeStatus } from "./permit.ts";
import type { CheckoutConfirmation, CheckoutStatus } from "./wire.ts";
import { MODE_OF } from "./wire.ts";

export const STATE_OF: Record<CheckoutStatus, PaymentState> = {
  pending: "pending",
  completed: "succeeded",
  cancelled: "cancelled",
  failed: "failed",
};

/** A charge's first answer, in our states (a cancelled charge does not exist there). */
const CHARGE_STATE_OF: Record<ProviderChargeStatus, "pending" | "succeeded" | "failed"> = {
  pending: "pending",
  completed: "succeeded",
  failed: "failed",
};

/** Our environment of a provider B `mode`. */
export function environmentOf(mode: (typeof MODE_OF)[Environment]): Environment {
  return mode === MODE_OF.live ? "live" : "sandbox";
}

/** The customer provider B reports: only the fields it gives. */
function customerOf(customer: CheckoutConfirmation["customer"]): { name?: string; email?: string; phone?: string } {
  const given: { name?: string; email?: string; phone?: string } = {};
  if (customer?.name) given.name = customer.name;
  if (customer?.email) given.email = customer.email;
  if (customer?.phone) given.phone = customer.phone;
  return given;
}

/** A confirmed invoice (a checkout's, or a permit charge's) in our terms, with its details. */
export function toPaymentReport(confirmation: CheckoutConfirmation): PaymentReport {
  return {
    providerPaymentId: confirmation.invoice.token,
    reference: confirmation.provider_reference,
    providerStatus: confirmation.status,
    state: STATE_OF[confirmation.status],
    errorCode: confirmation.fail_reason,
    approvedAt: null,
    details: {
      amount: Number(confirmation.invoice.total_amount),
      environment: environmentOf(confirmation.mode),
      customer: customerOf(confirmation.customer),
      paymentMethod: confirmation.customer?.payment_method ?? null,
      receiptUrl: confirmation.receipt_url,
      receiptIdentifier: confirmation.receipt_identifier,
    },
  };
}

/** A confirmed permit in our terms (provider B's permit statuses are our words). */
export function toAuthorisationReport(confirmation: PermitConfirmation): AuthorisationReport {
  return {
    providerAuthorisationId: confirmation.permit.token,
    status: confirmation.status satisfies PermitStatus,
    maxAmount: confirmation.max_amount,
    environment: environmentOf(confirmation.mode),
    paymentMethod: confirmation.customer?.payment_method ?? null,
  };
}

/** A charge's answer in our terms. */
export function toChargeResult(answer: PermitChargeAnswer): AuthorisationChargeResult {
  return {
    outcome: "answered",
    providerPaymentId: answer.invoice_token,
    providerStatus: answer.status,
    state: CHARGE_STATE_OF[answer.status],
    failReason: answer.fail_reason,
  };
}

/** Our reason for a refused charge, from provider B's `response_code`. */
export function refusalOf(failure: ProviderCallError): Extract<AuthorisationChargeResult, { outcome: "refused" }> {
  const code = failure.details.providerCode;
  const reason = code === PERMIT_NOT_ACTIVE_CODE ? "permit_not_active" : code === AMOUNT_EXCEEDS_PERMIT_CODE ? "amount_exceeds_permit" : "provider_refused";
  return { outcome: "refused", reason, failure };
}

// --- money out: disburse v2 ---

/** A wallet provider B sends to: our operator and country, and its `withdraw_mode` (all in XOF). */
interface WithdrawMode {
  operator: string;
  country: string;
  mode: string;
}

/** The operator × country → `withdraw_mode` table (providers-money-out.md, "B disburse"; `togocel` is T-Money). */
export const WITHDRAW_MODES: readonly WithdrawMode[] = [
  { operator: "orange", country: "sn", mode: "orange-money-senegal" },
  { operator: "free", country: "sn", mode: "free-money-senegal" },
  { operator: "expresso", country: "sn", mode: "expresso-senegal" },
  { operator: "wave", country: "sn", mode: "wave-senegal" },
  { operator: "mtn", country: "bj", mode: "mtn-benin" },
  { operator: "moov", country: "bj", mode: "moov-benin" },
  { operator: "mtn", country: "ci", mode: "mtn-ci" },
  { operator: "orange", country: "ci", mode: "orange-money-ci" },
  { operator: "moov", country: "ci", mode: "moov-ci" },
  { operator: "wave", country: "ci", mode: "wave-ci" },
  { operator: "togocel", country: "tg", mode: "t-money-togo" },
  { operator: "moov", country: "tg", mode: "moov-togo" },
  { operator: "orange", country: "ml", mode: "orange-money-mali" },
  { operator: "orange", country: "bf", mode: "orange-money-burkina" },
];

/** The `withdraw_mode` of a wallet, or undefined when provider B does not send there. */
export function withdrawModeOf(operator: string, country: string): string | undefined {
  return WITHDRAW_MODES.find((entry) => entry.operator === operator && entry.country === country)?.mode;
}

/**
 * Pay-in channels that are wallets, beyond the withdraw modes themselves (a checkout's `payment_method`,
 * `_` read as `-`): the SoftPay names provider B has no withdraw mode of.
 */
const PAY_IN_WALLETS: readonly WithdrawMode[] = [
  ...WITHDRAW_MODES,
  { operator: "orange", country: "sn", mode: "new-orange-money-senegal" },
  { operator: "moov", country: "ml", mode: "moov-mali" },
  { operator: "moov", country: "bf", mode: "moov-burkina" },
];

/** The wallet behind a pay-in channel (`wave_senegal`, `orange-money-ci`…); undefined for a card or an unknown channel. */
export function walletOfChannel(channel: string | null): { operator: string; country: string } | undefined {
  if (!channel) return undefined;
  const mode = channel.trim().toLowerCase().replaceAll("_", "-");
  const wallet = PAY_IN_WALLETS.find((entry) => entry.mode === mode);
  return wallet ? { operator: wallet.operator, country: wallet.country } : undefined;
}

/** Calling codes of the countries provider B serves, and the length of their national numbers. */
const NATIONAL_NUMBERS: Record<string, { code: string; length: number }> = {
  sn: { code: "221", length: 9 },
  bj: { code: "229", length: 10 },
  ci: { code: "225", length: 10 },
  tg: { code: "228", length: 8 },
  ml: { code: "223", length: 8 },
  bf: { code: "226", length: 8 },
};

/**
 * The national number of a phone provider B reports (`771234567`, `+221771234567`, `00221 77 123 45 67`):
 * the country's calling code is dropped when the number carries it. Null when nothing is left.
 */
export function nationalNumberOf(phone: string, country: string): string | null {
  const international = /^\s*(\+|00)/.test(phone);
  let digits = phone.replace(/\D/g, "");
  if (international && digits.startsWith("00")) digits = digits.slice(2);
  const plan = NATIONAL_NUMBERS[country];
  if (plan && digits.startsWith(plan.code) && (international || digits.length === plan.code.length + plan.length)) digits = digits.slice(plan.code.length);
  return digits === "" ? null : digits;
}

/** A disbursement's statuses in our terms; `created` is held at provider B with nothing sent. */
const PAYOUT_STATE_OF: Record<DisburseStatus, PayoutState> = { created: "pending", pending: "pending", success: "sent", failed: "failed" };

/** `2026-11-26 10:15:00` (provider B's format, UTC) or ISO: a date, or null. */
function providerDateOf(text: string | null): Date | null {
  if (!text) return null;
  const date = new Date(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?$/.test(text) ? `${text.replace(" ", "T")}Z` : text);
  return Number.isNaN(date.getTime()) ? null : date;
}

/**
 * A disbursement's status in our terms; undefined for a status word we do not know (nothing to apply).
 *
 * @example
 * ```ts
 * toPayoutReport("tok", { status: "created", fee: null, updated_at: null }); // pending, notSentYet
 * ```
 */
export function toPayoutReport(
  token: string,
  answer: { status: string; fee?: number | null; updated_at?: string | null; fail_reason?: unknown },
): PayoutReport | undefined {
  if (!(DISBURSE_STATUSES as readonly string[]).includes(answer.status)) return undefined;
  const status = answer.status as DisburseStatus;
  const state = PAYOUT_STATE_OF[status];
  return {
    providerPayoutId: token,
    providerStatus: status,
    state,
    notSentYet: status === "created",
    errorCode: state === "failed" && typeof answer.fail_reason === "string" && answer.fail_reason !== "" ? answer.fail_reason : null,
    fee: answer.fee === null || answer.fee === undefined ? null : Math.round(answer.fee),
    sentAt: state === "sent" ? providerDateOf(answer.updated_at ?? null) : null,
  };
}

/** `"Balance SN": "738612.00 XOF"` → one balance per country (label `sn`); fields of another shape are left out. */
export function toProviderBalances(answer: Record<string, unknown>): ProviderBalance[] {
  const balances: ProviderBalance[] = [];
  for (const [field, value] of Object.entries(answer)) {
    const country = /^balance[ _]([a-z]{2})$/i.exec(field.trim())?.[1];
    const amount = typeof value === "string" ? /^\s*(-?\d+(?:\.\d+)?)\s*([A-Z]{3})\s*$/i.exec(value) : null;
    const currency = amount?.[2]?.toUpperCase();
    if (!country || !amount || (currency !== "XOF" && currency !== "GNF")) continue;
    balances.push({ currency, amount: Math.trunc(Number(amount[1])), label: country.toLowerCase() });
  }
  return balances;
}
