/**
 * Provider A's payout wire as the simulator speaks it (providers-money-out.md, "A (FedaPay) payouts"): the
 * payout modes and the country each serves, the statuses, the documented limits, and the request bodies
 * of create and start (one zod schema each). Refusals use the provider's error shape (`../wire.ts`).
 */
import { z } from "zod";

/** The payout modes FedaPay documents (FR docs, 2025-10), each with the country its operator serves. All pay out XOF. */
export const PAYOUT_MODE_COUNTRIES = {
  mtn_open: "bj",
  moov: "bj",
  sbin: "bj",
  togocel: "tg",
  mtn_ci: "ci",
} as const;

export type PayoutMode = keyof typeof PAYOUT_MODE_COUNTRIES;

/** Whether `value` is one of the payout modes above. */
export function isPayoutMode(value: string): value is PayoutMode {
  return Object.hasOwn(PAYOUT_MODE_COUNTRIES, value);
}

/** The only currency of provider A's payouts. */
export const PAYOUT_CURRENCY = "XOF";

/** `pending` (created, not started) → `scheduled` (started for later) | `started` → `processing` → `sent` | `failed`. */
export type PayoutStatus = "pending" | "scheduled" | "started" | "processing" | "sent" | "failed";

/** The dashboard's documented limits: at most 1,000,000 XOF per payout, 3 payouts per number per 24 h. */
export const PAYOUT_LIMITS = { maxAmount: 1_000_000, perNumber: 3, windowHours: 24 } as const;

const phoneNumberSchema = z.object({
  number: z.string({ error: "is required" }).regex(/^\+?\d{6,15}$/, { error: "is not a valid phone number" }),
  country: z.string({ error: "is required" }).regex(/^[a-zA-Z]{2}$/, { error: "is not a valid country code" }),
});

export type PayoutPhoneNumber = z.infer<typeof phoneNumberSchema>;

/**
 * `POST /v1/payouts`. `mode` is checked by the route before this schema (without it the provider answers a
 * blank 500). The customer is given inline; `{ id }` of an existing customer is not simulated.
 */
export const createPayoutSchema = z.object({
  amount: z
    .number({ error: "must be a positive integer" })
    .int({ error: "must be a positive integer" })
    .positive({ error: "must be a positive integer" })
    .max(PAYOUT_LIMITS.maxAmount, { error: `must be less than or equal to ${PAYOUT_LIMITS.maxAmount}` }),
  currency: z
    .object({ iso: z.string() }, { error: "is required" })
    .refine((currency) => currency.iso.toUpperCase() === PAYOUT_CURRENCY, { error: "is not supported" }),
  mode: z.string().refine(isPayoutMode, { error: "is not a valid mode" }),
  description: z.string().max(255, { error: "is too long (maximum is 255 characters)" }).nullish(),
  merchant_reference: z.string().min(1).max(255).nullish(),
  custom_metadata: z.record(z.string(), z.unknown(), { error: "must be an object" }).nullish(),
  customer: z.object(
    {
      firstname: z.string().max(255).nullish(),
      lastname: z.string().max(255).nullish(),
      email: z.email({ error: "is not a valid email" }).nullish(),
      phone_number: phoneNumberSchema,
    },
    { error: "is required" },
  ),
});

export type CreatePayoutInput = z.infer<typeof createPayoutSchema>;

/** `PUT /v1/payouts/start`: `{ payouts: [{ id, scheduled_at?, phone_number? }] }` (the SDKs' shape; OpenAPI's bare array is wrong). */
export const startPayoutsSchema = z.object({
  payouts: z
    .array(
      z.object({
        id: z.number({ error: "must be an integer" }).int({ error: "must be an integer" }).positive({ error: "must be an integer" }),
        scheduled_at: z.string().nullish(),
        phone_number: phoneNumberSchema.nullish(),
      }),
      { error: "is required" },
    )
    .min(1, { error: "is required" }),
});

export type StartPayoutsInput = z.infer<typeof startPayoutsSchema>;

/** `POST /_sim/payouts/{id}/fail` (JSON; the console's form sends none). */
export const failPayoutSchema = z.object({ last_error_code: z.string().min(1).max(64).optional() });

/** `POST /_sim/accounts/{secretKey}/balances`: credits (or, negative, debits) one mode's balance by hand. */
export const creditBalanceSchema = z.object({
  mode: z.string().min(1).max(32),
  amount: z.number().int(),
  currency: z.string().default(PAYOUT_CURRENCY),
});

/**
 * A `scheduled_at` as the provider reads it (`Y-m-d H:i:s`, taken as UTC, or ISO 8601); `undefined` when
 * absent, `null` when unreadable.
 */
export function parseScheduledAt(raw: string | null | undefined): Date | null | undefined {
  if (!raw) return undefined;
  const text = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(raw) ? `${raw.replace(" ", "T")}Z` : raw;
  const date = new Date(text);
  return Number.isNaN(date.getTime()) ? null : date;
}
