/**
 * Money out (issue 15): `/payouts` and refunds (`/payments/{payment_id}/refunds`, `/refunds/{refund_id}`), in
 * the caller's environment. Creating either is idempotent with `Idempotency-Key`, answers `pending`, and is
 * settled from the provider (contract decisions in docs/money-out.md).
 */
import { z } from "zod";
import { pageOf, pageQuery } from "../services/paging.ts";
import { ID_BOUNDS } from "./documented-id-bounds.ts";
import { createPayout, payoutRequest } from "../services/payouts/create-payout.ts";
import { createRefund, refundRequest } from "../services/payouts/create-refund.ts";
import { PAYOUT_STATES, payoutSchema, REFUND_STATES, refundSchema } from "../services/payouts/payout-view.ts";
import { getPayout, getRefund, listAllRefunds, listPayouts, listRefunds } from "../services/payouts/read-payouts.ts";
import { CSV_NOTE, csvListOf } from "../services/reports/csv-list.ts";
import { idempotencyKeyHeader, idempotent } from "./idempotency.ts";
import { assertMayActIn, router, tenantProcedure } from "./trpc.ts";

const moneyRuleErrors =
  "400 validation_failed above MAX_AMOUNT; 422 payout_limit_exceeded (a limit the provider documents: the message names it); " +
  "422 insufficient_balance from the service's pooled account at the provider that sends it, beyond what the tenant holds on that " +
  "pooled account (money collected on the tenant's own account, or on another provider's, is not there: GET /balance shows each " +
  "holding account); 424 when the provider has no account for the tenant there.";

/** A list's creation-time window (`from` inclusive, `to` exclusive). */
const createdWindow = {
  from: z.iso.datetime({ offset: true }).optional().meta({ description: "Created at or after (RFC 3339)" }),
  to: z.iso.datetime({ offset: true }).optional().meta({ description: "Created before (RFC 3339)" }),
};

const refundListSchema = pageOf(refundSchema).meta({ id: "RefundList" });

const paymentIdField = z.string().meta({ description: "Our payment id (pay_…)", ...ID_BOUNDS });

export const payoutsRouter = router({
  create: tenantProcedure
    .use(idempotent())
    .meta({
      openapi: {
        method: "POST",
        path: "/payouts",
        tags: ["payouts"],
        summary: "Send money to a mobile-money wallet",
        description:
          "Records the payout (po_…), answers it pending, and sends it through the first provider that pays out to the recipient's " +
          "operator in its country (or the one named). The payout's id is the provider's idempotency key: a crash or a lost answer is " +
          "settled by reading the provider, never by sending again. Events payout.sent and payout.failed. " +
          moneyRuleErrors,
        requestHeaders: idempotencyKeyHeader,
      },
      tenantHeader: "accepted",
      errors: [422, 424],
    })
    .input(payoutRequest)
    .output(payoutSchema)
    .mutation(({ ctx, input }) => {
      assertMayActIn(ctx.principal, ctx.tenant, ctx.environment);
      // The key is the payout row's own: a retry finds the payout whatever became of the key's stored answer.
      return createPayout(ctx.deps, {
        tenantId: ctx.tenant.id,
        environment: ctx.environment,
        input,
        idempotencyKey: ctx.headers.get("idempotency-key") ?? undefined,
      });
    }),

  list: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/payouts",
        tags: ["payouts"],
        summary: "List payouts",
        description: `The tenant's payouts in the token's environment, newest first; filter by state and creation time (from inclusive, to exclusive).${CSV_NOTE}`,
      },
      tenantHeader: "accepted",
      csvList: csvListOf(payoutSchema),
    })
    .input(
      z.object({
        ...pageQuery,
        state: z.enum(PAYOUT_STATES).optional(),
        ...createdWindow,
      }),
    )
    .output(pageOf(payoutSchema).meta({ id: "PayoutList" }))
    .query(({ ctx, input }) =>
      listPayouts(ctx.deps, {
        tenantId: ctx.tenant.id,
        environment: ctx.environment,
        limit: input.limit,
        ...(input.cursor !== undefined && { cursor: input.cursor }),
        ...(input.state !== undefined && { state: input.state }),
        ...(input.from !== undefined && { from: new Date(input.from) }),
        ...(input.to !== undefined && { to: new Date(input.to) }),
      }),
    ),

  get: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/payouts/{payout_id}",
        tags: ["payouts"],
        summary: "Read a payout",
        description: "One payout of the tenant, in the token's environment. Another tenant's or environment's payout is 404.",
      },
      tenantHeader: "accepted",
    })
    .input(z.object({ payout_id: z.string().meta({ description: "Our payout id (po_…)", ...ID_BOUNDS }) }))
    .output(payoutSchema)
    .query(({ ctx, input }) => getPayout(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment, payoutId: input.payout_id })),

  refund: tenantProcedure
    .use(idempotent())
    .meta({
      openapi: {
        method: "POST",
        path: "/payments/{payment_id}/refunds",
        tags: ["refunds"],
        summary: "Refund a payment, fully or in part",
        description:
          "A payout of `amount` (by default all that is left) to the wallet that paid, through a provider that pays out to its operator " +
          "(the payment's own first). The refunds of a payment that have not failed never add up to more than it collected. " +
          "Answers the refund (rf_…), pending; events refund.succeeded or refund.failed, and payment.refunded once all of it is back. " +
          "409 payment_not_refundable when the payment is not succeeded (or refunded in full, or its wallet is unknown), " +
          "422 amount_exceeds_refundable above what is left; " +
          moneyRuleErrors,
        requestHeaders: idempotencyKeyHeader,
      },
      tenantHeader: "accepted",
      errors: [409, 422, 424],
    })
    .input(refundRequest.extend({ payment_id: paymentIdField }))
    .output(refundSchema)
    .mutation(({ ctx, input }) => {
      assertMayActIn(ctx.principal, ctx.tenant, ctx.environment);
      const { payment_id, ...body } = input;
      return createRefund(ctx.deps, {
        tenantId: ctx.tenant.id,
        environment: ctx.environment,
        paymentId: payment_id,
        input: body,
        idempotencyKey: ctx.headers.get("idempotency-key") ?? undefined,
      });
    }),

  refunds: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/payments/{payment_id}/refunds",
        tags: ["refunds"],
        summary: "List a payment's refunds",
        description: "Newest first. Another tenant's payment is 404.",
      },
      tenantHeader: "accepted",
    })
    .input(z.object({ payment_id: paymentIdField, ...pageQuery, state: z.enum(REFUND_STATES).optional() }))
    .output(refundListSchema)
    .query(({ ctx, input }) =>
      listRefunds(ctx.deps, {
        tenantId: ctx.tenant.id,
        environment: ctx.environment,
        paymentId: input.payment_id,
        limit: input.limit,
        ...(input.cursor !== undefined && { cursor: input.cursor }),
        ...(input.state !== undefined && { state: input.state }),
      }),
    ),

  allRefunds: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/refunds",
        tags: ["refunds"],
        summary: "List refunds",
        description: `The tenant's refunds of every payment in the token's environment, newest first; filter by state and creation time (from inclusive, to exclusive).${CSV_NOTE}`,
      },
      tenantHeader: "accepted",
      csvList: csvListOf(refundSchema),
    })
    .input(
      z.object({
        ...pageQuery,
        state: z.enum(REFUND_STATES).optional(),
        ...createdWindow,
      }),
    )
    .output(refundListSchema)
    .query(({ ctx, input }) =>
      listAllRefunds(ctx.deps, {
        tenantId: ctx.tenant.id,
        environment: ctx.environment,
        limit: input.limit,
        ...(input.cursor !== undefined && { cursor: input.cursor }),
        ...(input.state !== undefined && { state: input.state }),
        ...(input.from !== undefined && { from: new Date(input.from) }),
        ...(input.to !== undefined && { to: new Date(input.to) }),
      }),
    ),

  getRefund: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/refunds/{refund_id}",
        tags: ["refunds"],
        summary: "Read a refund",
        description: "One refund of the tenant, in the token's environment. Another tenant's or environment's refund is 404.",
      },
      tenantHeader: "accepted",
    })
    .input(z.object({ refund_id: z.string().meta({ description: "Our refund id (rf_…)", ...ID_BOUNDS }) }))
    .output(refundSchema)
    .query(({ ctx, input }) => getRefund(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment, refundId: input.refund_id })),
});
