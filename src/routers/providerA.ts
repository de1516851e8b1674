/**
 * Provider A (spec endpoints 1–3, contract §4): direct USSD payments, their detailed status, and the
 * quick approved check. Thin: validate, resolve the caller, call `services/direct-payments`.
 */
import { z } from "zod";
import {
  createDirectPayment,
  getTransactionStatus,
  isApprovedSchema,
  isTransactionApproved,
  transactionStatusSchema,
} from "../services/direct-payments/mod.ts";
import { directPaymentRequest } from "../services/direct-payments/direct-payment-request.ts";
import { idempotencyKeyHeader, idempotent, requestKey } from "./idempotency.ts";
import { assertMayActIn, router, tenantProcedure } from "./trpc.ts";

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
          "Records the payment and asks provider A to push the USSD prompt to the phone; answers pending. " +
          "Provider refusal → 422 (payment failed); provider unreachable before sending → 502 (failed); " +
          "provider 5xx or timeout after sending → 502/504 naming the payment (paymentId, and transactionId when known), " +
          "left pending and settled later from the provider; the same Idempotency-Key answers it again. " +
          "With an Idempotency-Key the payment keeps the key for good: a retry with it answers that payment (never a second push), even " +
          "when the first answer was lost — before provider A named its transaction, as a 502 naming the payment. " +
          "In sandbox: below 1000 approved after a few seconds, 1000–5000 pending until the sandbox console settles it, above 5000 declined.",
        requestHeaders: idempotencyKeyHeader,
      },
      tenantHeader: "accepted",
      errors: [424, 502, 504],
    })
    .input(directPaymentRequest)
    .output(directPaymentOutput)
    .mutation(({ ctx, input }) => {
      assertMayActIn(ctx.principal, ctx.tenant, ctx.environment);
      // The key is the payment's own: a retry finds the payment whatever became of the key's stored answer.
      return createDirectPayment(ctx.deps, {
        tenantId: ctx.tenant.id,
        environment: ctx.environment,
        input,
        idempotency: requestKey(ctx, "/providerA/direct-payment"),
      });
    }),

  transactionStatus: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/providerA/transaction/{transaction_id}/status",
        tags: ["providerA"],
        summary: "Detailed status of a provider A transaction",
        description:
          "A pending transaction is read again from provider A (at most once a second); a final one is served as stored. " +
          "Another tenant's or environment's transaction is 404.",
      },
      tenantHeader: "accepted",
      directRead: true,
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
      directRead: true,
    })
    .input(transactionIdInput)
    .output(isApprovedSchema)
    .query(({ ctx, input }) => isTransactionApproved(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment, transactionId: input.transaction_id })),
});
