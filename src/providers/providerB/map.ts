/**
 * Provider B's words to ours, both ways: its confirmed checkout (or charge invoice) as a {@link PaymentReport},
 * its permit as an {@link AuthorisationReport}, a charge's answer and refusal codes as our outcomes, and our
 * environment as its `mode`.
 */
import type { Environment, PaymentState, PermitStatus } from "../../db/schema.ts";
import type { AuthorisationChargeResult, AuthorisationReport, PaymentReport, ProviderCallError } from "../provider.ts";
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
