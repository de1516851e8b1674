/**
 * `/payments` (contract §6): the tenant's payments of every kind, in the caller's environment.
 */
import { z } from "zod";
import { CSV_NOTE, csvListOf } from "../services/reports/csv-list.ts";
import {
  createPayment,
  getPayment,
  listPayments,
  MIN_PHONE_DIGITS,
  PAYMENT_KINDS,
  PAYMENT_STATES,
  paymentRequest,
  paymentSchema,
  providerNameSchema,
  quotePayment,
  quoteSchema,
} from "../services/payments/mod.ts";
import { paymentDetailSchema } from "../services/payments/payment-view.ts";
import { pageOf, pageQuery } from "../services/paging.ts";
import { ID_BOUNDS } from "./documented-id-bounds.ts";
import { listDeliveries } from "../services/webhooks/delivery-log.ts";
import { deliverySchema } from "./webhooks.ts";
import { idempotencyKeyHeader, idempotent, requestKey } from "./idempotency.ts";
import { assertMayActIn, router, tenantProcedure } from "./trpc.ts";

const listPaymentsInput = z.object({
  ...pageQuery,
  provider: providerNameSchema.optional(),
  kind: z.enum(PAYMENT_KINDS).optional(),
  state: z.enum(PAYMENT_STATES).optional(),
  providerTransactionId: z.string().min(1).max(255).meta({ description: "Provider A's integer transaction id, or provider B's invoice token" }).optional(),
  reference: z.string().min(1).max(255).meta({ description: "Provider A's reference" }).optional(),
  operator: z
    .string()
    .regex(/^[a-z][a-z0-9-]{0,31}$/, { error: "must be an operator's code in lower case, like mtn" })
    .optional()
    .meta({ description: "The wallet's operator a POST /payments payment was made to (mtn, moov, orange, wave…)", example: "mtn" }),
  merchantReference: z.string().min(1).max(255).meta({ description: "Your own reference, as given at creation", example: "order-1042" }).optional(),
  q: z
    .string()
    .trim()
    .min(2)
    .max(100)
    .optional()
    .meta({ description: "Text in the description or the customer's name, any case (at least 2 characters)", example: "awa" }),
  from: z.iso.datetime({ offset: true }).optional().meta({ description: "Created at or after (RFC 3339)", example: "2026-11-01T00:00:00Z" }),
  to: z.iso.datetime({ offset: true }).optional().meta({ description: "Created before (RFC 3339)", example: "2026-12-01T00:00:00Z" }),
  amountMin: z.int().min(1).optional().meta({ description: "At least this amount (whole units)", example: 1000 }),
  amountMax: z.int().min(1).optional().meta({ description: "At most this amount (whole units)", example: 50000 }),
  phone: z
    .string()
    .max(32)
    .regex(/^\+?[0-9 ().-]+$/, { error: "must be a phone number: digits, with an optional leading + and spaces, dots, dashes or brackets" })
    .optional()
    .meta({
      description: `The customer's phone, with or without its country code: matches when one number's digits end with the other's (at least ${MIN_PHONE_DIGITS} digits)`,
      example: "+229 97 00 00 00",
    }),
});

const paymentListSchema = z
  .object({
    data: z.array(paymentSchema),
    nextCursor: z.string().nullable().meta({ description: "Pass as cursor for the next page; null on the last page" }),
  })
  .meta({ id: "PaymentList" });

export const paymentsRouter = router({
  create: tenantProcedure
    .use(idempotent())
    .meta({
      openapi: {
        method: "POST",
        path: "/payments",
        tags: ["payments"],
        summary: "Take a mobile-money payment from any operator",
        description:
          "Names the operator and the customer's phone (and, for an operator whose flow is otp, the code the customer got). The gateway " +
          "tries the tenant's routes for that operator in that country (GET /routing), ranked by their live success rates, records the " +
          "payment and asks the provider to start it; answers the payment, pending, with nextAction (none: approve the prompt; open_url: " +
          "send the customer to the wallet's page) and its attempts. When a provider provably did not act (a refusal before any push, " +
          "connection refused, its circuit open) the same payment is tried on the next route; never after an unknown outcome. " +
          "Failures of the last route as POST /providerA/direct-payment: a refusal → 422 (failed), unreachable → 502 (failed), 5xx or " +
          "timeout after sending → 502/504 naming the payment, left pending and settled from the provider; the same Idempotency-Key " +
          "answers it again. With an Idempotency-Key the payment keeps the key for good: a retry with it answers that payment as it stands " +
          "(never a second push), even when the first answer was lost; another body under the key is 422 idempotency_mismatch.",
        requestHeaders: idempotencyKeyHeader,
      },
      tenantHeader: "accepted",
      errors: [424, 502, 504],
    })
    .input(paymentRequest)
    .output(paymentDetailSchema)
    .mutation(({ ctx, input }) => {
      assertMayActIn(ctx.principal, ctx.tenant, ctx.environment);
      // The key is the payment's own: a retry finds the payment whatever became of the key's stored answer.
      return createPayment(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment, input, idempotency: requestKey(ctx, "/payments") });
    }),

  quote: tenantProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/payments/quote",
        tags: ["payments"],
        summary: "What POST /payments would do with this body, without doing it",
        description:
          "The same body as POST /payments; no payment, no provider call. Answers whether it would be taken and the validation errors the " +
          "real call would answer, the flow the customer follows, and the routes in the order they would be tried (the exploration " +
          "share aside), each with its limits and fees where the provider publishes them.",
      },
      tenantHeader: "accepted",
    })
    .input(paymentRequest)
    .output(quoteSchema)
    .mutation(({ ctx, input }) => quotePayment(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment, input })),

  list: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/payments",
        tags: ["payments"],
        summary: "List payments",
        description:
          "The tenant's payments of every kind in the token's environment, newest first. " +
          "Filter by provider, kind, state, operator, providerTransactionId, reference (provider A's), merchantReference (yours), text in the description " +
          `or the customer's name (q), dates, amounts and phone; page with limit and cursor.${CSV_NOTE}`,
      },
      tenantHeader: "accepted",
      csvList: csvListOf(paymentSchema),
    })
    .input(listPaymentsInput)
    .output(paymentListSchema)
    .query(({ ctx, input }) =>
      listPayments(ctx.deps, {
        tenantId: ctx.tenant.id,
        environment: ctx.environment,
        ...input,
        from: input.from === undefined ? undefined : new Date(input.from),
        to: input.to === undefined ? undefined : new Date(input.to),
      }),
    ),

  get: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/payments/{payment_id}",
        tags: ["payments"],
        summary: "Read a payment",
        description: "One payment of the tenant, in the token's environment. Another tenant's or environment's payment is 404.",
      },
      tenantHeader: "accepted",
    })
    .input(z.object({ payment_id: z.string().meta({ description: "Our payment id (pay_…)", ...ID_BOUNDS }) }))
    .output(paymentDetailSchema)
    .query(({ ctx, input }) => getPayment(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment, paymentId: input.payment_id })),
  deliveries: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/payments/{payment_id}/deliveries",
        tags: ["payments"],
        summary: "The deliveries of a payment's events",
        description: "To the tenant's webhook endpoints and to the payment's callback_url, each with every attempt.",
      },
    })
    .input(z.object({ payment_id: z.string().meta({ description: "Our payment id (pay_…)", ...ID_BOUNDS }), ...pageQuery }))
    .output(pageOf(deliverySchema))
    .query(({ ctx, input }) =>
      listDeliveries(
        ctx.deps,
        { tenantId: ctx.tenant.id, environment: ctx.environment },
        { paymentId: input.payment_id, limit: input.limit, cursor: input.cursor },
      ),
    ),
});
