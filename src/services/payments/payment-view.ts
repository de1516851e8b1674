/**
 * A payment as the API shows it: the one schema (reused for the response validation, the TypeScript type
 * and the OpenAPI document) and the mapping from a `payments` row to it. Every endpoint and event that
 * shows a payment goes through {@link toPaymentView}.
 */
import { z } from "zod";
import type { Currency, Environment, Payment, PaymentKind, PaymentState } from "../../db/schema.ts";
import { ValidationError } from "../../errors.ts";
import type { Deps } from "../deps.ts";

/** Every payment kind, in the contract's order. */
export const PAYMENT_KINDS = ["direct_payment", "checkout", "permit_charge"] as const satisfies readonly PaymentKind[];

/** Every payment state, in the contract's order. */
export const PAYMENT_STATES = ["pending", "succeeded", "failed", "cancelled", "refunded"] as const satisfies readonly PaymentState[];

/**
 * A provider's name as a filter takes it; which names exist is the registry's to say
 * ({@link assertKnownProvider}), so a gateway running a third provider filters by it too.
 */
export const providerNameSchema = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, { error: "must be a provider name, like providerA" })
  .meta({ description: "A provider the gateway runs: providerA, providerB, or another registered provider", example: "providerA" });

/**
 * Refuses a provider the gateway does not run, as a filter's 400.
 *
 * @throws {ValidationError} naming the providers it runs.
 */
export function assertKnownProvider(deps: Pick<Deps, "providers">, provider: string | undefined): void {
  if (provider === undefined || deps.providers.find(provider)) return;
  const names = deps.providers.all.map((known) => known.name).sort();
  throw new ValidationError([`provider must be one of the following values: ${names.join(", ")}`]);
}

export const CURRENCIES = ["XOF", "GNF"] as const satisfies readonly Currency[];

const ENVIRONMENTS = ["sandbox", "live"] as const satisfies readonly Environment[];

const timestamp = z.string().meta({ format: "date-time" });

const nextActionSchema = z
  .discriminatedUnion("type", [
    z.object({ type: z.literal("none"), instructions: z.string() }),
    z.object({ type: z.literal("enter_code"), instructions: z.string() }),
    z.object({ type: z.literal("open_url"), url: z.string(), instructions: z.string() }),
  ])
  .meta({ id: "NextAction", description: "What the customer must do to complete the payment: nothing but approve the prompt, enter a code, or open a URL" });

export const paymentCustomerSchema = z
  .object({
    name: z.string().optional(),
    firstname: z.string().optional(),
    lastname: z.string().optional(),
    email: z.string().optional(),
    phone: z.string().optional().meta({ description: "International format with a leading +" }),
    country: z.string().optional().meta({ description: "Lower-case two-letter country code" }),
  })
  .meta({ id: "PaymentCustomer", description: "The customer as the payment was made; only the fields sent are present" });

export const paymentSchema = z
  .object({
    id: z.string().meta({ description: "Our payment id", example: "pay_01JD3Z6Q5W8B8Y4G1M7T2N9XKC" }),
    provider: z
      .string()
      .meta({ description: "The provider that carries it: providerA, providerB, or another provider the gateway runs", example: "providerA" }),
    kind: z.enum(PAYMENT_KINDS),
    state: z.enum(PAYMENT_STATES).meta({ description: "Our normalised state" }),
    providerStatus: z.string().nullable().meta({ description: "The provider's own status word, as last seen" }),
    providerTransactionId: z
      .string()
      .nullable()
      .meta({ description: "Provider A's integer transaction id (as a string) or provider B's invoice token; null until the provider answered" }),
    reference: z.string().nullable().meta({ description: "Provider A's reference, when it gave one" }),
    merchantReference: z
      .string()
      .nullable()
      .meta({ description: "Your own reference of the payment (your order number), as given at creation", example: "order-1042" }),
    amount: z.number().int().meta({ description: "Whole units of the currency (no minor unit)", example: 5000 }),
    amountRefunded: z.number().int().meta({ description: "The sum of its refunds that succeeded (whole units)", example: 0 }),
    refundStatus: z
      .enum(["none", "partially_refunded", "refunded"])
      .meta({ description: "none, partially_refunded (some of it is back), or refunded (all of it; the state is then refunded)" }),
    currency: z.enum(CURRENCIES),
    description: z.string(),
    customer: paymentCustomerSchema.nullable(),
    customData: z
      .record(z.string(), z.union([z.string(), z.number(), z.boolean()]))
      .nullable()
      .meta({ description: "The customData sent at creation, with its original types" }),
    paymentMethod: z.string().nullable().meta({ description: "Provider A's payment_method, or the channel provider B reports" }),
    callbackUrl: z.string().nullable().meta({ description: "A direct payment's callback_url" }),
    outcomeUnknown: z.boolean().meta({ description: "True while the provider may have acted on a request whose answer never came; the sync job settles it" }),
    failureCode: z.string().nullable(),
    receiptUrl: z.string().nullable().meta({ description: "Provider B: the receipt's URL, as confirmed; null otherwise" }),
    receiptIdentifier: z.string().nullable().meta({ description: "Provider B: the receipt's identifier, as confirmed; null otherwise" }),
    providerReference: z.string().nullable().meta({ description: "Provider B: its own reference of the payment, as confirmed; null otherwise" }),
    operator: z.string().nullable().meta({ description: "The operator a POST /payments payment was made to (mtn, orange, wave…); null otherwise" }),
    credentialVersion: z.number().int().nullable().meta({
      description:
        "The version of the tenant's own credentials at its provider that the payment was made with (GET /credentials lists the versions); null when it went through the gateway's account",
      example: 1,
    }),
    nextAction: nextActionSchema.nullable(),
    paymentLinkId: z.string().nullable().meta({ description: "The payment link it was paid through (pl_…); null otherwise", example: null }),
    environment: z.enum(ENVIRONMENTS),
    createdAt: timestamp,
    updatedAt: timestamp,
    completedAt: timestamp.nullable().meta({ description: "When the payment reached a final state" }),
  })
  .meta({ id: "Payment" });

export const paymentAttemptSchema = z
  .object({
    attempt: z.number().int().meta({ description: "1 for the first provider tried, 2 for the next…" }),
    provider: z.string(),
    outcome: z.enum(["started", "refused", "unreachable", "circuit_open", "unknown", "failed"]).meta({
      description:
        "started: the provider took it; refused / unreachable / circuit_open: it provably did not act (the next route was tried); unknown: no answer after sending",
    }),
    reason: z.string().meta({ description: "Why this provider was tried: the route list, the success rates, the exploration share" }),
    providerTransactionId: z.string().nullable(),
    error: z.string().nullable(),
    createdAt: timestamp,
    rescue: z.boolean().optional().meta({ description: "A try the customer made on the payment's rescue URL (payment.rescue_available)" }),
    operator: z.string().nullable().optional().meta({ description: "The wallet the attempt was made with, when known (a rescue try may use another)" }),
  })
  .meta({ id: "PaymentAttempt" });

export type PaymentAttemptView = z.infer<typeof paymentAttemptSchema>;

/** A payment with the providers it was tried on (`GET /payments/{id}`, `POST /payments`). */
export const paymentDetailSchema = paymentSchema
  .extend({
    attempts: z
      .array(paymentAttemptSchema)
      .meta({ description: "Each provider the payment was tried on, in order; empty for a payment made on one provider's own endpoint" }),
  })
  .meta({ id: "PaymentDetail" });

export type PaymentDetailView = z.infer<typeof paymentDetailSchema>;

/** How much of a payment has been given back. */
function refundStatusOf(row: Payment): "none" | "partially_refunded" | "refunded" {
  const refunded = Number(row.amount_refunded ?? 0);
  if (refunded <= 0) return "none";
  return refunded >= Number(row.amount) ? "refunded" : "partially_refunded";
}

/** A payment as the API shows it. */
export type PaymentView = z.infer<typeof paymentSchema>;

/**
 * Maps a `payments` row to the API shape (camelCase, RFC 3339 times, nulls kept).
 *
 * @example
 * ```ts
 * const row = await db.selectFrom("payments").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
 * toPaymentView(row).providerTransactionId; // "412"
 * ```
 */
export function toPaymentView(row: Payment): PaymentView {
  return {
    id: row.id,
    provider: row.provider,
    kind: row.kind,
    state: row.state,
    providerStatus: row.provider_status,
    providerTransactionId: row.provider_transaction_id,
    reference: row.reference,
    merchantReference: row.merchant_reference ?? null,
    // postgres.js and PGlite both read int8 as a number (see db/connect.ts); Number() keeps the type honest.
    amount: Number(row.amount),
    amountRefunded: Number(row.amount_refunded ?? 0),
    refundStatus: refundStatusOf(row),
    currency: row.currency,
    description: row.description,
    customer: row.customer,
    customData: row.custom_data,
    paymentMethod: row.payment_method,
    callbackUrl: row.callback_url,
    outcomeUnknown: row.outcome_unknown,
    failureCode: row.failure_code,
    operator: row.operator ?? null,
    credentialVersion: row.credential_version,
    nextAction: row.next_action ?? null,
    paymentLinkId: row.payment_link_id ?? null,
    receiptUrl: row.receipt_url ?? null,
    receiptIdentifier: row.receipt_identifier ?? null,
    providerReference: row.provider_reference ?? null,
    environment: row.environment,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}
