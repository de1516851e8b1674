/**
 * `/routing` and `/payment-methods` (issue 16): a tenant's route lists per operator and country, the live
 * window their choice follows, and the operators a tenant can take in a country.
 */
import { z } from "zod";
import { breakerStates } from "../services/routing/breakers.ts";
import { paymentMethodsSchema, listPaymentMethods } from "../services/routing/payment-methods.ts";
import { getRouting, putRouting, routingRuleSchema, routingViewSchema } from "../services/routing/routes.ts";
import { routeStats } from "../services/routing/window.ts";
import { assertMayActIn, router, tenantProcedure } from "./trpc.ts";

const statsSchema = z
  .object({
    windowMinutes: z.number().int(),
    since: z.string().meta({ format: "date-time" }),
    routes: z.array(
      z.object({
        provider: z.string(),
        operator: z.string(),
        country: z.string(),
        succeeded: z.number().int(),
        failed: z.number().int().meta({ description: "Payments that failed, and attempts the provider refused or could not take" }),
        successRate: z.number().nullable().meta({
          description:
            "succeeded / (succeeded + failed), each minute weighed by its age: one ROUTING_HALF_LIFE_MINUTES old counts half as much as the current one",
        }),
      }),
    ),
    circuits: z
      .array(z.object({ provider: z.string(), operator: z.string(), country: z.string(), circuit: z.enum(["closed", "open", "halfopen", "isolated"]) }))
      .meta({ description: "The circuit breakers of the process that answers (each process keeps its own)" }),
  })
  .meta({ id: "RoutingStats" });

export const routingRouter = router({
  get: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/routing",
        tags: ["routing"],
        summary: "The tenant's route lists",
        description:
          "For every operator and country the gateway reaches directly, the providers a POST /payments payment tries, in order: the " +
          "tenant's own list (configured) or, by default, every provider that serves it (provider A first where it does).",
      },
      tenantHeader: "accepted",
    })
    .input(z.object({}))
    .output(routingViewSchema)
    .query(({ ctx }) => getRouting(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment })),

  put: tenantProcedure
    .meta({
      openapi: {
        method: "PUT",
        path: "/routing",
        tags: ["routing"],
        summary: "Set route lists",
        description:
          "Sets the route list of each operator and country named (the others are left as they are); every provider must serve the " +
          "operator there; an empty list goes back to the default. Answers every route list, as GET /routing.",
      },
      tenantHeader: "accepted",
    })
    .input(z.object({ rules: z.array(routingRuleSchema).min(1).max(100) }))
    .output(routingViewSchema)
    .mutation(({ ctx, input }) => {
      assertMayActIn(ctx.principal, ctx.tenant, ctx.environment);
      return putRouting(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, input.rules);
    }),

  stats: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/routing/stats",
        tags: ["routing"],
        summary: "The live window routes are chosen by",
        description:
          "In the token's environment, per provider, operator and country, over the last ROUTING_WINDOW_MINUTES: the payments that ended " +
          "paid and failed (every tenant's: a route's health is the provider's), their success rate, and the circuits of this process.",
      },
      tenantHeader: "accepted",
    })
    .input(z.object({}))
    .output(statsSchema)
    .query(async ({ ctx }) => {
      const stats = await routeStats(ctx.deps, ctx.environment);
      return {
        windowMinutes: stats.windowMinutes,
        since: stats.since.toISOString(),
        routes: stats.routes,
        circuits: breakerStates(ctx.deps, ctx.environment) as never,
      };
    }),

  paymentMethods: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/payment-methods",
        tags: ["routing"],
        summary: "The operators a tenant can take in a country",
        description:
          "For each operator of the country: its route(s) in the order POST /payments tries them (those the tenant has an account on), " +
          "the flow the customer follows (push, otp with how to get the code, redirect), the currency and the limits.",
      },
      tenantHeader: "accepted",
    })
    .input(z.object({ country: z.string().regex(/^[a-z]{2}$/, { error: "must be a lower-case two-letter country code, like bj" }) }))
    .output(paymentMethodsSchema)
    .query(({ ctx, input }) => listPaymentMethods(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, input.country)),
});
