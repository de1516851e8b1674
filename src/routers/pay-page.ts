/**
 * The pay page's calls (`/pay/{id}`, issue 31 point 2): public — no token — and limited per address, each
 * scoped to one link's id: its public face, a payment through it, and that payment's progress. Nothing of
 * the tenant but its name and the link is ever answered.
 */
import { z } from "zod";
import { RateLimitedError } from "../errors.ts";
import { setRateLimitHeaders } from "../http/ratelimit-headers.ts";
import { linkPaymentRequest, publicLinkSchema, publicPaymentSchema } from "../services/payment-links/mod.ts";
import { payPageFace, payPageOwner, payPagePay, payPagePayment } from "../services/rescue/mod.ts";
import { ID_BOUNDS } from "./documented-id-bounds.ts";
import { idempotencyKeyHeader, idempotent, requestKey } from "./idempotency.ts";
import { middleware, publicProcedure, router } from "./trpc.ts";

/** Public, counted against the caller's address (`http/client-address.ts`). */
const payPageProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const address = ctx.request.clientAddress ?? "unknown";
  const limit = ctx.deps.config.payPageRateLimit;
  const decision = await ctx.deps.rateLimiter.consume(`pay-page:${address}`, limit);
  if (!decision.failedOpen) setRateLimitHeaders((ctx.request.responseHeaders ??= {}), limit, decision);
  if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds);
  return next();
});

/** The `Idempotency-Key`s of a pay page's call are its link's (or rescue's) tenant's, under the call's own path. */
const ownedByTheLinksTenant = middleware(async ({ ctx, getRawInput, next }) => {
  // Without a key there is nothing to scope: the call goes on as before (its input checked first).
  if (ctx.headers.get("idempotency-key") === null) return next();
  const { link_id } = (await getRawInput()) as { link_id?: unknown };
  const idempotencyOwner = await payPageOwner(ctx.deps, typeof link_id === "string" ? link_id : "");
  return next({ ctx: { idempotencyOwner } });
});

const linkId = z
  .string()
  .min(1)
  .max(64)
  .meta({ description: "The link's id (pl_…), or a rescue's (rs_…: a payment's rescue URL)", example: "pl_01KBB4W5Z0M3Q9XC" });

export const payPageRouter = router({
  link: payPageProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/pay/{link_id}/link",
        tags: ["pay page"],
        summary: "A payment link as its pay page shows it",
        description:
          "The shop's name, what is paid, the link's status (active, expired, deactivated, used) and, while active, the wallets it takes in " +
          "each country with their flows. Limited per address (429).",
      },
      errors: [404, 429],
      limitedPerAddress: true,
    })
    .input(z.object({ link_id: linkId }))
    .output(publicLinkSchema)
    .query(({ ctx, input }) => payPageFace(ctx.deps, input.link_id)),

  pay: payPageProcedure
    .use(ownedByTheLinksTenant)
    .use(idempotent())
    .meta({
      openapi: {
        method: "POST",
        path: "/pay/{link_id}/payments",
        tags: ["pay page"],
        summary: "Pay through a payment link",
        description:
          "The customer's wallet and number (and the amount, when the link leaves it to the customer; the code for an otp wallet). Made as " +
          "POST /payments makes a payment (routing, failover), as the link's tenant's payment. A link expired, deactivated or used: 409. " +
          "On a rescue URL (rs_…), a try of its payment: another attempt of the same payment (no amount), 409 while one is under way. " +
          "The page sends an Idempotency-Key per try. Limited per address (429).",
        requestHeaders: idempotencyKeyHeader,
      },
      errors: [404, 409, 422, 424, 429, 502, 504],
      limitedPerAddress: true,
    })
    .input(linkPaymentRequest.extend({ link_id: linkId }))
    .output(publicPaymentSchema)
    .mutation(({ ctx, input }) => {
      const { link_id, ...body } = input;
      // A payment through a link keeps the page's key (its own, as POST /payments' does); a rescue try is an attempt of its payment.
      return payPagePay(ctx.deps, link_id, body, requestKey(ctx, `/pay/${encodeURIComponent(link_id)}/payments`));
    }),

  payment: payPageProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/pay/{link_id}/payments/{payment_id}",
        tags: ["pay page"],
        summary: "A payment made through a payment link",
        description: "Its state and what the customer does next; 404 for a payment not made through this link. Limited per address (429).",
      },
      errors: [404, 429],
      limitedPerAddress: true,
    })
    .input(z.object({ link_id: linkId, payment_id: z.string().meta({ description: "The payment's id (pay_…)", ...ID_BOUNDS }) }))
    .output(publicPaymentSchema)
    .query(({ ctx, input }) => payPagePayment(ctx.deps, input.link_id, input.payment_id)),
});
