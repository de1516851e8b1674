/**
 * Provider B's procedures (spec endpoint 4, contract §5): `POST /providerB/checkout`. The IPN (spec
 * endpoint 5) is a raw-body route, `http/providerB-webhook.ts`.
 */
import { z } from "zod";
import { createCheckout } from "../services/checkout/create-checkout.ts";
import { DOCUMENTED_MAX_AMOUNT } from "./documented-max-amount.ts";
import { idempotencyKeyHeader, idempotent } from "./idempotency.ts";
import { assertMayActIn, router, tenantProcedure } from "./trpc.ts";

const httpUrl = (field: string) =>
  z
    .string()
    .max(2048)
    .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), { message: `must be an absolute http(s) URL` })
    .meta({ description: field, example: "https://merchant.example/orders/1042" });

const checkoutInput = z
  .object({
    amount: z
      .number()
      .int()
      .min(1)
      .meta({
        description: "Amount to collect, in whole FCFA; at most MAX_AMOUNT (the maximum shown is its default)",
        example: 5000,
        maximum: DOCUMENTED_MAX_AMOUNT,
      }),
    description: z.string().trim().min(1).max(255).meta({ description: "Label of the invoice", example: "Order 1042" }),
    returnUrl: httpUrl("The customer is sent here after payment"),
    cancelUrl: httpUrl("The customer is sent here on cancel"),
    customer: z.object({
      name: z.string().trim().min(1).max(255).meta({ example: "Awa Diallo" }),
      email: z.email().max(255).optional().meta({ example: "awa.diallo@example.com" }),
      phone: z
        .string()
        .regex(/^\+\d{8,15}$/, { message: "must be in international format, like +221770000000" })
        .optional()
        .meta({ example: "+221770000000" }),
    }),
    customData: z
      .record(z.string().min(1).max(100), z.union([z.string().max(1000), z.number(), z.boolean()]))
      .refine((value) => Object.keys(value).length <= 50, { message: "must have at most 50 keys" })
      .optional()
      .meta({ description: "Flat key/value pairs of your choice (at most 50), sent back in every event with their types", example: { orderId: "1042" } }),
    channels: z
      .array(z.string().min(1).max(100))
      .max(30)
      .optional()
      .meta({ description: "Provider B channel slugs to offer", example: ["orange-money-senegal"] }),
  })
  .meta({ id: "CheckoutRequest" });

const checkoutAnswer = z
  .object({
    response_code: z.string().meta({ example: "00" }),
    response_text: z.string().meta({ description: "URL of the hosted invoice page (the sandbox page in sandbox)" }),
    token: z.string().meta({ description: "Provider B's invoice token" }),
    paymentId: z.string().meta({ description: "Our payment id (pay_…)" }),
  })
  .meta({ id: "CheckoutResponse" });

export const providerBRouter = router({
  checkout: tenantProcedure
    .use(idempotent())
    .meta({
      openapi: {
        method: "POST",
        path: "/providerB/checkout",
        tags: ["providerB"],
        summary: "Create a hosted checkout invoice",
        description:
          "Creates the invoice at provider B with the tenant's credentials of the token's environment (424 when there are none) and records a pending checkout payment. A provider refusal is 422 with providerResponseCode.",
        requestHeaders: idempotencyKeyHeader.extend({ "x-tenant-id": z.string().meta({ description: "The calling tenant (spec rule 1)" }) }),
      },
      tenantHeader: "required",
      errors: [424, 502, 504],
    })
    .input(checkoutInput)
    .output(checkoutAnswer)
    .mutation(({ ctx, input }) => {
      assertMayActIn(ctx.principal, ctx.tenant, ctx.environment);
      return createCheckout(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, input);
    }),
});
