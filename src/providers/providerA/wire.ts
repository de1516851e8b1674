/**
 * Provider A's wire shapes (providers.md, "Provider A"): what the adapter sends and reads. Only the
 * adapter folder sees these types; the core gets domain values from `map.ts`.
 */
import { z } from "zod";
import { REPORTED_STATUSES } from "../direct-payment-words.ts";

/** Provider A's transaction statuses (providers.md): the words contract §4 adopted, declared there once. */
export const WIRE_STATUSES = REPORTED_STATUSES;

export type WireStatus = (typeof WIRE_STATUSES)[number];

/** The wire modes of a direct (USSD push) payment. */
export type WireMode = "mtn_open" | "moov" | "sbin" | "moov_tg" | "togocel" | "mtn_open_gn" | "mtn_ci" | "airtel_ne" | "free_sn";

/** `POST /v1/transactions` body. */
export interface WireCreateTransaction {
  description: string;
  amount: number;
  currency: { iso: string };
  mode: WireMode;
  /** Our `pay_` id: the provider finds the transaction by it (`GET /v1/transactions/merchant/{ref}`). */
  merchant_reference: string;
  custom_metadata: Record<string, string>;
  customer: {
    firstname?: string;
    lastname?: string;
    email?: string;
    phone_number: { number: string; country: string };
  };
}

/**
 * A `v1/transaction` as read back. Lenient: the provider adds fields freely; only these are used, so the
 * others are dropped (`z.object` strips them: 3.5 µs per answer against 8.5 µs for `z.looseObject`, which
 * copies the ~30 fields provider A adds one by one). `status` stays a string so an unknown future status
 * is seen (and ignored) rather than failing the read.
 */
export const wireTransactionSchema = z.object({
  klass: z.string().optional(),
  id: z.number().int().positive(),
  reference: z.string().nullish(),
  status: z.string(),
  mode: z.string().nullish(),
  amount: z.number().optional(),
  merchant_reference: z.string().nullish(),
  last_error_code: z.string().nullish(),
  approved_at: z.string().nullish(),
  declined_at: z.string().nullish(),
  canceled_at: z.string().nullish(),
  refunded_at: z.string().nullish(),
});

export type WireTransaction = z.infer<typeof wireTransactionSchema>;

/** `{ "v1/transaction": { … } }`, the envelope of every transaction answer. */
export const wireTransactionEnvelopeSchema = z.object({ "v1/transaction": wireTransactionSchema });

/** `POST /v1/transactions/{id}/token` answer. */
export const wireTokenSchema = z.object({ token: z.string().min(1), url: z.string().optional() });

/** The provider's error body: `{ message, errors?: { "<field>": ["…"] } }`. */
export const wireErrorSchema = z.looseObject({
  message: z.string().optional(),
  errors: z.record(z.string(), z.union([z.array(z.string()), z.string()])).optional(),
});

/** A webhook body: `{ name: "transaction.approved", entity: { …transaction… } }`. Read only after the signature checked out. */
export const wireWebhookSchema = z.looseObject({
  name: z.string().optional(),
  entity: z.looseObject({ id: z.number().int().positive() }).optional(),
});

// --- payouts (providers-money-out.md, "A (FedaPay) payouts") ---

/** The wire modes of a payout (FR docs, 2025-10): Benin's three operators, Togocel, MTN Côte d'Ivoire. */
export type WirePayoutMode = "mtn_open" | "moov" | "sbin" | "togocel" | "mtn_ci";

/** Provider A's payout statuses: `pending` (created, nothing sent) → `started` (OpenAPI: `scheduled`) → `processing` → `sent` | `failed`. */
export const WIRE_PAYOUT_STATUSES = ["pending", "scheduled", "started", "processing", "sent", "failed"] as const;

export type WirePayoutStatus = (typeof WIRE_PAYOUT_STATUSES)[number];

/** `POST /v1/payouts` body. `mode` is always sent: without it the provider answers a blank 500. */
export interface WireCreatePayout {
  amount: number;
  currency: { iso: string };
  mode: WirePayoutMode;
  description: string;
  /** Our `po_`/`rf_` id: unique per account, and how the payout is found again (`GET /v1/payouts/merchant/{ref}`). */
  merchant_reference: string;
  custom_metadata: Record<string, string>;
  customer: {
    firstname?: string;
    lastname?: string;
    email?: string;
    phone_number: { number: string; country: string };
  };
}

/** A `v1/payout` as read back; lenient like the transaction (unused fields dropped, `status` a free string). */
export const wirePayoutSchema = z.object({
  id: z.number().int().positive(),
  reference: z.string().nullish(),
  status: z.string(),
  mode: z.string().nullish(),
  amount: z.number().optional(),
  fees: z.number().nullish(),
  merchant_reference: z.string().nullish(),
  last_error_code: z.string().nullish(),
  sent_at: z.string().nullish(),
});

export type WirePayout = z.infer<typeof wirePayoutSchema>;

/** `{ "v1/payout": { … } }`. */
export const wirePayoutEnvelopeSchema = z.object({ "v1/payout": wirePayoutSchema });

/** `PUT /v1/payouts/start` answer: `{ "v1/payouts": [ … ] }`. */
export const wirePayoutListSchema = z.object({ "v1/payouts": z.array(wirePayoutSchema) });

/** `GET /v1/balances` answer: one balance per mode and currency. */
export const wireBalancesSchema = z.object({
  "v1/balances": z.array(z.object({ id: z.number(), currency_id: z.number().nullish(), amount: z.number(), mode: z.string().nullish() })),
});

export type WireBalance = z.infer<typeof wireBalancesSchema>["v1/balances"][number];

/** A payout webhook body: `{ name: "payout.sent", entity: { id, merchant_reference, … } }`. Read only after the signature checked out. */
export const wirePayoutWebhookSchema = z.looseObject({
  name: z.string(),
  entity: z.looseObject({ id: z.number().int().positive().optional(), merchant_reference: z.string().nullish() }),
});
