/**
 * Provider A's wire shapes as the simulator speaks them (providers.md, "Provider A"): the request bodies
 * it accepts (one zod schema each), its modes, statuses and currencies, and its error shape
 * `{ message, errors?: { "<field>": ["…"] } }`. The `v1/transaction` and `v1/event` objects it answers
 * with are rendered from the ledger's records in `render.ts`.
 */
import { z } from "zod";

/** The wire modes of a direct (USSD push) payment, each with the country its operator serves. */
export const WIRE_MODE_COUNTRIES = {
  mtn_open: "bj",
  moov: "bj",
  sbin: "bj",
  moov_tg: "tg",
  togocel: "tg",
  mtn_open_gn: "gn",
  mtn_ci: "ci",
  airtel_ne: "ne",
  free_sn: "sn",
} as const;

export type WireMode = keyof typeof WIRE_MODE_COUNTRIES;

/** Whether `value` is one of the wire modes above. */
export function isWireMode(value: string): value is WireMode {
  return Object.hasOwn(WIRE_MODE_COUNTRIES, value);
}

/** A transaction id from a path segment (a positive integer), or `undefined`. */
export function transactionIdFrom(raw: string): number | undefined {
  return /^[1-9]\d{0,15}$/.test(raw) ? Number(raw) : undefined;
}

/** Currencies the simulated account accepts, with the provider's `currency_id` for each. */
export const CURRENCY_IDS: Record<string, number> = { XOF: 1, GNF: 2 };

export type TransactionStatus =
  | "pending"
  | "approved"
  | "declined"
  | "canceled"
  | "refunded"
  | "transferred"
  | "approved_partially_refunded"
  | "transferred_partially_refunded";

/** A refusal in the provider's error shape; `app.ts` turns it into the HTTP answer once. */
export class ProviderAError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly errors?: Record<string, string[]>,
  ) {
    super(message);
  }

  toBody(): { message: string; errors?: Record<string, string[]> } {
    return this.errors ? { message: this.message, errors: this.errors } : { message: this.message };
  }
}

const phoneNumberSchema = z.object({
  number: z.string({ error: "is required" }).regex(/^\+?\d{6,15}$/, { error: "is not a valid phone number" }),
  country: z.string({ error: "is required" }).regex(/^[a-zA-Z]{2}$/, { error: "is not a valid country code" }),
});

export type WirePhoneNumber = z.infer<typeof phoneNumberSchema>;

/** `POST /v1/transactions`. Unknown fields are ignored, as the provider does. */
export const createTransactionSchema = z.object({
  description: z.string({ error: "is required" }).trim().min(1, { error: "is required" }).max(255, { error: "is too long (maximum is 255 characters)" }),
  amount: z.number({ error: "must be a positive integer" }).int({ error: "must be a positive integer" }).positive({ error: "must be a positive integer" }),
  currency: z
    .object({ iso: z.string() }, { error: "is required" })
    .refine((currency) => Object.hasOwn(CURRENCY_IDS, currency.iso.toUpperCase()), { error: "is not supported" }),
  callback_url: z.url({ error: "is not a valid URL" }).nullish(),
  mode: z.string().refine(isWireMode, { error: "is not a valid mode" }).nullish(),
  custom_metadata: z.record(z.string(), z.unknown(), { error: "must be an object" }).nullish(),
  merchant_reference: z.string().min(1).max(255).nullish(),
  customer: z
    .object({
      firstname: z.string().max(255).nullish(),
      lastname: z.string().max(255).nullish(),
      email: z.email({ error: "is not a valid email" }).nullish(),
      phone_number: phoneNumberSchema.nullish(),
    })
    .nullish(),
});

export type CreateTransactionInput = z.infer<typeof createTransactionSchema>;

/** `POST /v1/{mode}`: the token of `POST /v1/transactions/{id}/token`, and optionally the phone to push to. */
export const sendNowSchema = z.object({
  token: z.string({ error: "is required" }).min(1, { error: "is required" }),
  phone_number: phoneNumberSchema.nullish(),
});

/** `POST /_sim/transactions/{id}/decline` (JSON; the console's form sends none). */
export const declineSchema = z.object({ last_error_code: z.string().min(1).max(64).optional() });

/** `POST /_sim/accounts`. */
/**
 * `POST /_sim/accounts`: a new test account of an environment, with fresh keys, or with the keys given (both
 * or neither), e.g. keys a gateway derived from its own secrets so that all its processes agree on them.
 */
export const createAccountSchema = z
  .object({
    environment: z.enum(["sandbox", "live"]).default("sandbox"),
    secretKey: z
      .string()
      .regex(/^\S{16,200}$/, "must be 16 to 200 characters without spaces")
      .optional(),
    webhookSecret: z
      .string()
      .regex(/^\S{16,200}$/, "must be 16 to 200 characters without spaces")
      .optional(),
  })
  .refine((body) => (body.secretKey === undefined) === (body.webhookSecret === undefined), {
    path: ["webhookSecret"],
    message: "secretKey and webhookSecret go together",
  });

/** `POST /_sim/faults/repeat-transaction-id`: the id the next transaction gets again. */
export const repeatTransactionIdSchema = z.object({ id: z.number().int().positive() });

/** `PUT /_sim/accounts/{secretKey}/webhook`; `null` stops the account's webhooks. */
export const webhookTargetSchema = z.object({ url: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).nullable() });

/** A zod failure as the provider's `errors` object (field path → messages). */
export function fieldErrors(error: z.ZodError): Record<string, string[]> {
  const errors: Record<string, string[]> = {};
  for (const issue of error.issues) {
    // `currency.iso` problems are reported on `currency`, where the provider names the field.
    const path = issue.path[0] === "currency" ? "currency" : issue.path.map(String).join(".") || "body";
    (errors[path] ??= []).push(issue.message);
  }
  return errors;
}
