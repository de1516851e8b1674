/**
 * Provider B's procedures (spec endpoint 4, contract §5): `POST /providerB/checkout`. The IPN (spec
 * endpoint 5) is provider B's inbound route, `providers/providerB/inbound.ts`. The request's schema lives
 * with the service (`services/checkout/checkout-request.ts`), which infers its input type from it.
 */
import { z } from "zod";
import { checkoutRequest } from "../services/checkout/checkout-request.ts";
import { createCheckout } from "../services/checkout/create-checkout.ts";
import { idempotencyKeyHeader, idempotent, requestKey } from "./idempotency.ts";
import { assertMayActIn, router, tenantProcedure } from "./trpc.ts";

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
          "Creates the invoice at provider B with the tenant's credentials of the token's environment (424 when there are none) and records a pending " +
          "checkout payment. A provider refusal is 422 with providerResponseCode. With an Idempotency-Key the payment keeps the key for " +
          "good: a retry with it answers that checkout (its token and invoice page; never a second invoice), even when the first answer was lost.",
        requestHeaders: idempotencyKeyHeader.extend({ "x-tenant-id": z.string().meta({ description: "The calling tenant (spec rule 1)" }) }),
      },
      tenantHeader: "required",
      errors: [424, 502, 504],
    })
    .input(checkoutRequest)
    .output(checkoutAnswer)
    .mutation(({ ctx, input }) => {
      assertMayActIn(ctx.principal, ctx.tenant, ctx.environment);
      // The key is the checkout payment's own: a retry finds it (and its invoice) whatever became of the key's stored answer.
      return createCheckout(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, input, requestKey(ctx, "/providerB/checkout"));
    }),
});
