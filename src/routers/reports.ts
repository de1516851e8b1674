/**
 * `/reports/overview` (issue 29): the dashboard's home screen — a tenant's payments, success rates per wallet
 * and provider, refunds and payouts over today, 7 or 30 days, and what needs its attention. A tenant reads its
 * own; an operator names a tenant with `x-tenant-id`. The reconciliation is `balance.ts`'s.
 */
import { z } from "zod";
import { onboarding, onboardingSchema } from "../services/reports/onboarding.ts";
import { overviewQuery, overviewReport, overviewSchema } from "../services/reports/overview.ts";
import { router, tenantProcedure } from "./trpc.ts";

export const reportsRouter = router({
  overview: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/reports/overview",
        tags: ["reports"],
        summary: "The tenant's overview: activity and what needs attention",
        description:
          "Over today (per hour), the last 7 or 30 days (per day), counted in timeZone, in the token's environment: the payments created, " +
          "collected, failed, cancelled and pending, their amounts and success rate (succeeded / (succeeded + failed + cancelled)) in total, per " +
          "step, per wallet (operator × country) and per provider; the refunds and payouts created. And, whatever the window: payments stuck " +
          "pending past the 24 h sync window, failing or disabled webhook endpoints, payouts and refunds still pending, and the providers whose " +
          "keys are missing. The balance is GET /balance.",
      },
      tenantHeader: "accepted",
    })
    .input(z.object(overviewQuery))
    .output(overviewSchema)
    .query(({ ctx, input }) => overviewReport(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment, ...input })),
  onboarding: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/reports/onboarding",
        tags: ["reports"],
        summary: "The tenant's way to live: keys, a test payment, a webhook endpoint, live",
        description:
          "Whether the tenant stored a provider's keys, collected a sandbox payment, added a webhook endpoint and was let go live, in that " +
          "order, read from its data (whatever the token's environment). The dashboard's Home shows it as a checklist until done.",
      },
      tenantHeader: "accepted",
    })
    .input(z.object({}))
    .output(onboardingSchema)
    .query(({ ctx }) => onboarding(ctx.deps, ctx.tenant.id)),
});
