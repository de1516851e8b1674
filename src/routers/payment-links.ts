/**
 * `/payment-links` (issue 31 point 1): a tenant's payment links — create one (its URL, QR code and share
 * texts come back), list them, read one with its payments, deactivate it. In the caller's environment;
 * another tenant's link is 404.
 */
import { z } from "zod";
import {
  createPaymentLink,
  deactivatePaymentLink,
  getPaymentLink,
  listPaymentLinks,
  paymentLinkDetailSchema,
  paymentLinkRequest,
  paymentLinkSchema,
} from "../services/payment-links/mod.ts";
import { pageQuery } from "../services/paging.ts";
import { assertMayActIn, router, tenantProcedure } from "./trpc.ts";

const linkId = z.string().min(1).max(64).meta({ description: "The link's id (pl_…)", example: "pl_01KBB4W5Z0M3Q9XC" });

const paymentLinkListSchema = z
  .object({
    data: z.array(paymentLinkSchema),
    nextCursor: z.string().nullable().meta({ description: "Pass as cursor for the next page; null on the last page" }),
  })
  .meta({ id: "PaymentLinkList" });

export const paymentLinksRouter = router({
  create: tenantProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/payment-links",
        tags: ["payment links"],
        summary: "Create a payment link",
        description:
          "A link any customer pays from a phone on the gateway's pay page: a fixed amount or { min, max } for the customer to choose " +
          "amountMax; single-use (the first payment that succeeds uses it up) or reusable; an optional expiry; the wallets and countries it " +
          "takes. Answers its URL, its QR code (SVG, and PNG as a data URL) and texts ready to send by SMS or WhatsApp (a wa.me URL), in " +
          "French and English. Each payment through it is a payment of the tenant (GET /payments), with paymentLinkId; each that succeeds " +
          "also sends payment_link.paid.",
      },
      tenantHeader: "accepted",
    })
    .input(paymentLinkRequest)
    .output(paymentLinkDetailSchema)
    .mutation(({ ctx, input }) => {
      assertMayActIn(ctx.principal, ctx.tenant, ctx.environment);
      return createPaymentLink(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, input);
    }),

  list: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/payment-links",
        tags: ["payment links"],
        summary: "List payment links",
        description: "The tenant's links in the token's environment, newest first; active=true or false keeps those not deactivated, or deactivated.",
      },
      tenantHeader: "accepted",
    })
    .input(z.object({ ...pageQuery, active: z.stringbool().optional().meta({ description: "true: not deactivated; false: deactivated" }) }))
    .output(paymentLinkListSchema)
    .query(({ ctx, input }) => listPaymentLinks(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, input)),

  get: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/payment-links/{link_id}",
        tags: ["payment links"],
        summary: "Read a payment link, with its payments",
        description: "With its QR code, its share texts and its latest 100 payments. Another tenant's or environment's link is 404.",
      },
      tenantHeader: "accepted",
      errors: [404],
    })
    .input(z.object({ link_id: linkId }))
    .output(paymentLinkDetailSchema)
    .query(({ ctx, input }) => getPaymentLink(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, input.link_id)),

  update: tenantProcedure
    .meta({
      openapi: {
        method: "PATCH",
        path: "/payment-links/{link_id}",
        tags: ["payment links"],
        summary: "Deactivate a payment link",
        description:
          '{ "active": false }: its pay page says it was deactivated and takes no payment from then on; its payments are kept. Deactivating it again changes nothing.',
      },
      tenantHeader: "accepted",
      errors: [404],
    })
    .input(z.object({ link_id: linkId, active: z.literal(false).meta({ description: "false: deactivate (a deactivated link cannot be activated again)" }) }))
    .output(paymentLinkDetailSchema)
    .mutation(({ ctx, input }) => {
      assertMayActIn(ctx.principal, ctx.tenant, ctx.environment);
      return deactivatePaymentLink(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, input.link_id);
    }),
});
