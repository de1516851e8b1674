/**
 * Provider A (spec endpoints 1–3, contract §4): direct USSD payments, their detailed status, and the
 * quick approved check. Thin: validate, resolve the caller, call `services/direct-payments`.
 */
import { z } from "zod";
import { PAYMENT_METHODS } from "../services/direct-payments/payment-methods.ts";
import {
  createDirectPayment,
  getTransactionStatus,
  isApprovedSchema,
  isTransactionApproved,
  transactionStatusSchema,
} from "../services/direct-payments/mod.ts";
import { DOCUMENTED_MAX_AMOUNT } from "./documented-max-amount.ts";
import { idempotencyKeyHeader, idempotent } from "./idempotency.ts";
import { assertMayActIn, router, tenantProcedure } from "./trpc.ts";

const directPaymentInput = z
  .object({
    description: z.string().trim().min(1).max(255).meta({ description: "Free text label of the payment", example: "Order 1042" }),
    amount: z.number().int().min(1).meta({
      description: "Whole units: FCFA (XOF), or GNF for gn; at most MAX_AMOUNT (the maximum shown is its default)",
      example: 500,
      maximum: DOCUMENTED_MAX_AMOUNT,
    }),
    payment_method: z.enum(PAYMENT_METHODS).meta({ description: "The operator; it must serve the phone's country" }),
    phone_number: z.object({
      number: z
        .string()
        .regex(/^\+\d{8,15}$/, { error: "must be in international format, like +22997000000" })
        .meta({ example: "+22997000000" }),
      country: z
        .string()
        .regex(/^[a-z]{2}$/, { error: "must be a lower-case two-letter country code, like bj" })
        .meta({ example: "bj" }),
    }),
    firstname: z.string().max(255).optional().meta({ example: "Awa" }),
    lastname: z.string().max(255).optional().meta({ example: "Diallo" }),
    email: z.email().max(255).optional().meta({ example: "awa.diallo@example.com" }),
    callback_url: z
      .string()
      .max(2048)
      .optional()
      .meta({
        example: "https://merchant.example/passerelle/callback",
        description: "Where we send this payment's events (signed with the tenant's callback secret); never sent to provider A",
      }),
  })
  .meta({ id: "DirectPaymentRequest" });

const directPaymentOutput = z
  .object({
    ok: z.literal(true),
    transactionId: z.number().int().meta({ description: "Provider A's integer transaction id", example: 412 }),
    status: z.literal("pending"),
    description: z.string(),
    amount: z.number().int(),
    paymentId: z.string().meta({ description: "Our payment id (for /payments/{payment_id})" }),
  })
  .meta({ id: "DirectPaymentResponse" });

const transactionIdInput = z.object({
  transaction_id: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).meta({ description: "Provider A's integer transaction id" }),
});

export const providerARouter = router({
  directPayment: tenantProcedure
    .use(idempotent())
    .meta({
      openapi: {
        method: "POST",
        path: "/providerA/direct-payment",
        tags: ["providerA"],
        summary: "Initiate a direct USSD payment",
        description:
          "Records the payment and asks provider A to push the USSD prompt to the phone; answers pending. Provider refusal → 422 (payment failed); provider unreachable before sending → 502 (failed); provider 5xx or timeout after sending → 502/504 naming the payment (paymentId, and transactionId when known), left pending and settled later from the provider; the same Idempotency-Key answers it again. In sandbox: below 1000 approved after a few seconds, 1000–5000 pending until the sandbox console settles it, above 5000 declined.",
        requestHeaders: idempotencyKeyHeader,
      },
      tenantHeader: "accepted",
      errors: [424, 502, 504],
    })
    .input(directPaymentInput)
    .output(directPaymentOutput)
    .mutation(({ ctx, input }) => {
      assertMayActIn(ctx.principal, ctx.tenant, ctx.environment);
      return createDirectPayment(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment, input });
    }),

  transactionStatus: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/providerA/transaction/{transaction_id}/status",
        tags: ["providerA"],
        summary: "Detailed status of a provider A transaction",
        description:
          "A pending transaction is read again from provider A (at most once a second); a final one is served as stored. Another tenant's or environment's transaction is 404.",
      },
      tenantHeader: "accepted",
    })
    .input(transactionIdInput)
    .output(transactionStatusSchema)
    .query(({ ctx, input }) => getTransactionStatus(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment, transactionId: input.transaction_id })),

  transactionIsApproved: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/providerA/transaction/{transaction_id}/is-approved",
        tags: ["providerA"],
        summary: "Whether a provider A transaction is approved",
        description: "True for approved, transferred and partially refunded; false otherwise (refunded included).",
      },
      tenantHeader: "accepted",
    })
    .input(transactionIdInput)
    .output(isApprovedSchema)
    .query(({ ctx, input }) => isTransactionApproved(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment, transactionId: input.transaction_id })),
});
