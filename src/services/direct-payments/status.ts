/**
 * A direct payment's status as the API shows it (contract §4): the status word (provider A's, or our
 * `failed`), the `approved` flag, the detailed view of `GET /providerA/transaction/{id}/status` and the
 * short one of `…/is-approved`. One schema per answer, reused for validation, types and the document.
 */
import { z } from "zod";
import type { Payment } from "../../db/schema.ts";
import { DIRECT_PAYMENT_STATUSES, type DirectPaymentStatus, PAID_STATUSES, PAYMENT_METHODS } from "./payment-methods.ts";

export { DIRECT_PAYMENT_STATUSES, type DirectPaymentStatus } from "./payment-methods.ts";

const STATUS_OF_STATE: Record<Payment["state"], DirectPaymentStatus> = {
  pending: "pending",
  succeeded: "approved",
  failed: "failed",
  cancelled: "canceled",
  refunded: "refunded",
};

/**
 * The status word of a direct payment row: provider A's last word, except our own `failed` (the provider
 * refused, or never received, the request) which no provider status replaces unless the provider later
 * reports money moving.
 */
export function directPaymentStatus(row: Pick<Payment, "state" | "provider_status">): DirectPaymentStatus {
  if (row.state === "failed" && row.provider_status !== "declined") return "failed";
  const status = row.provider_status ?? "pending";
  if ((DIRECT_PAYMENT_STATUSES as readonly string[]).includes(status)) return status as DirectPaymentStatus;
  // Another provider's own word (kept as `providerStatus`): the contract's word for our state.
  return STATUS_OF_STATE[row.state];
}

/** True when the money is the merchant's: approved, transferred, or partially refunded (not refunded). */
export function isApprovedStatus(status: string): boolean {
  return PAID_STATUSES.includes(status);
}

const timestamp = z.string().meta({ format: "date-time" });

export const transactionStatusSchema = z
  .object({
    ok: z.literal(true),
    transactionId: z.number().int().meta({ description: "Provider A's integer transaction id", example: 412 }),
    paymentId: z.string().meta({ description: "Our payment id", example: "pay_01JD3Z6Q5W8B8Y4G1M7T2N9XKC" }),
    status: z.enum(DIRECT_PAYMENT_STATUSES),
    approved: z.boolean().meta({ description: "True for approved, transferred and the partially refunded states" }),
    amount: z.number().int(),
    currency: z.enum(["XOF", "GNF"]),
    description: z.string(),
    payment_method: z.enum(PAYMENT_METHODS).nullable(),
    phone_number: z.object({ number: z.string(), country: z.string() }).nullable(),
    reference: z.string().nullable().meta({ description: "Provider A's reference" }),
    errorCode: z.string().nullable().meta({ description: "Provider A's last_error_code, or ours for a failed request" }),
    outcomeUnknown: z.boolean().meta({ description: "True while a request's answer never came and the sync job has not settled it yet" }),
    environment: z.enum(["sandbox", "live"]),
    createdAt: timestamp,
    updatedAt: timestamp,
    approvedAt: timestamp.nullable(),
  })
  .meta({ id: "ProviderATransactionStatus" });

export type TransactionStatusView = z.infer<typeof transactionStatusSchema>;

export const isApprovedSchema = z
  .object({
    transactionId: z.number().int(),
    approved: z.boolean(),
    status: z.enum(DIRECT_PAYMENT_STATUSES),
  })
  .meta({ id: "ProviderAIsApproved" });

export type IsApprovedView = z.infer<typeof isApprovedSchema>;

/** The detailed view of a direct payment row that has a provider id. */
export function toTransactionStatusView(row: Payment): TransactionStatusView {
  const status = directPaymentStatus(row);
  const customer = row.customer;
  return {
    ok: true,
    transactionId: Number(row.provider_transaction_id),
    paymentId: row.id,
    status,
    approved: isApprovedStatus(status),
    amount: Number(row.amount),
    currency: row.currency,
    description: row.description,
    payment_method: (PAYMENT_METHODS as readonly string[]).includes(row.payment_method ?? "") ? (row.payment_method as (typeof PAYMENT_METHODS)[number]) : null,
    phone_number: customer?.phone && customer.country ? { number: customer.phone, country: customer.country } : null,
    reference: row.reference,
    errorCode: row.failure_code,
    outcomeUnknown: row.outcome_unknown,
    environment: row.environment,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    approvedAt: row.approved_at?.toISOString() ?? null,
  };
}
