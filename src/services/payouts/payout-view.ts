/**
 * A payout and a refund as the API shows them: the schemas (response validation, TypeScript types, OpenAPI)
 * and the mapping from a `payouts` row. A refund is a payout to the payer (`purpose = 'refund'`); the API
 * names its states in a refund's words: `sent` is `succeeded`.
 *
 * @module
 */
import { z } from "zod";
import type { JsonValue, PayoutRow } from "../../db/schema.ts";
import { CURRENCIES } from "../payments/payment-view.ts";

const timestamp = z.string().meta({ format: "date-time" });

/** A payout's states, in their order (`sent` and `failed` are final). */
export const PAYOUT_STATES = ["pending", "sent", "failed"] as const;

/** A refund's states, in their order (`succeeded` and `failed` are final). */
export const REFUND_STATES = ["pending", "succeeded", "failed"] as const;

export type RefundState = (typeof REFUND_STATES)[number];

const recipientSchema = z
  .object({
    phone: z.object({
      number: z.string().meta({ description: "International format with a leading +", example: "+22997000001" }),
      country: z.string().meta({ description: "Lower-case two-letter country code", example: "bj" }),
    }),
    operator: z.string().meta({ description: "The wallet's operator", example: "mtn" }),
    firstname: z.string().optional(),
    lastname: z.string().optional(),
    email: z.string().optional(),
  })
  .meta({ id: "PayoutRecipient" });

const moneyOutFields = {
  provider: z.string().meta({ description: "The provider that sends it", example: "providerA" }),
  providerStatus: z.string().nullable().meta({ description: "The provider's own status word, as last seen" }),
  providerPayoutId: z
    .string()
    .nullable()
    .meta({ description: "The provider's id of it (provider A's payout id, provider B's disburse token); null until it answered" }),
  amount: z.number().int().meta({ description: "Whole units of the currency", example: 2500 }),
  currency: z.enum(CURRENCIES),
  fee: z.number().int().nullable().meta({ description: "What the provider charged for it, when it says" }),
  recipient: recipientSchema,
  failureCode: z.string().nullable().meta({ description: "The provider's error code of a failure, when it gives one" }),
  outcomeUnknown: z.boolean().meta({ description: "True after a call whose answer never came: it is settled by reading the provider, never sent again" }),
  environment: z.enum(["sandbox", "live"]),
  createdAt: timestamp,
  updatedAt: timestamp,
  failedAt: timestamp.nullable(),
};

export const payoutSchema = z
  .object({
    id: z.string().meta({ description: "Our payout id (po_ + ULID)", example: "po_01JD3Z6Q5W8B8Y4G1M7T2N9XKC" }),
    state: z.enum(PAYOUT_STATES).meta({ description: "pending → sent | failed" }),
    description: z.string(),
    metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).nullable(),
    ...moneyOutFields,
    sentAt: timestamp.nullable(),
  })
  .meta({ id: "Payout" });

export type PayoutView = z.infer<typeof payoutSchema>;

export const refundSchema = z
  .object({
    id: z.string().meta({ description: "Our refund id (rf_ + ULID)", example: "rf_01JD3Z6Q5W8B8Y4G1M7T2N9XKC" }),
    paymentId: z.string().meta({ description: "The payment it gives back" }),
    state: z.enum(REFUND_STATES).meta({ description: "pending → succeeded | failed" }),
    reason: z.string().nullable(),
    ...moneyOutFields,
    succeededAt: timestamp.nullable(),
  })
  .meta({ id: "Refund" });

export type RefundView = z.infer<typeof refundSchema>;

/** A refund's state in its own words. */
export function refundStateOf(row: Pick<PayoutRow, "state">): RefundState {
  return row.state === "sent" ? "succeeded" : row.state;
}

function commonView(row: PayoutRow) {
  return {
    provider: row.provider,
    providerStatus: row.provider_status,
    providerPayoutId: row.provider_payout_id,
    amount: Number(row.amount),
    currency: row.currency,
    fee: row.fee === null ? null : Number(row.fee),
    recipient: { phone: { number: row.phone_number, country: row.country }, operator: row.operator, ...row.recipient },
    failureCode: row.failure_code,
    outcomeUnknown: row.outcome_unknown,
    environment: row.environment,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    failedAt: row.failed_at?.toISOString() ?? null,
  };
}

/** A `payouts` row of purpose `payout` as the API shows it. */
export function toPayoutView(row: PayoutRow): PayoutView {
  return {
    id: row.id,
    state: row.state,
    description: row.description,
    metadata: row.metadata,
    ...commonView(row),
    sentAt: row.sent_at?.toISOString() ?? null,
  };
}

/** A `payouts` row of purpose `refund` as the API shows it. */
export function toRefundView(row: PayoutRow): RefundView {
  return {
    id: row.id,
    paymentId: row.payment_id ?? "",
    state: refundStateOf(row),
    reason: row.reason,
    ...commonView(row),
    succeededAt: row.sent_at?.toISOString() ?? null,
  };
}

/** The view of either purpose, as an event's data. */
export function moneyOutEventData(row: PayoutRow): Record<string, JsonValue> {
  return (row.purpose === "refund" ? toRefundView(row) : toPayoutView(row)) as unknown as Record<string, JsonValue>;
}
