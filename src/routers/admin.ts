/**
 * `/admin/…`: operators' views across tenants. `GET /admin/payments/stuck` is the admin list of contract
 * §8: payments still pending after the 24 h sync window (the `passerelle_payments_stuck_pending` gauge
 * counts the same rows).
 */
import { z } from "zod";
import { listStuckPayments, paymentSchema, providerNameSchema } from "../services/payments/mod.ts";
import { pageQuery } from "../services/paging.ts";
import { adminProcedure, router } from "./trpc.ts";

const stuckPaymentSchema = paymentSchema
  .extend({
    tenantId: z.string().meta({ description: "The tenant the payment belongs to" }),
    pendingSeconds: z.number().int().meta({ description: "Seconds since the payment was created" }),
  })
  .meta({ id: "StuckPayment" });

const stuckListSchema = z
  .object({
    data: z.array(stuckPaymentSchema),
    nextCursor: z.string().nullable().meta({ description: "Pass as cursor for the next page; null on the last page" }),
  })
  .meta({ id: "StuckPaymentList" });

export const adminRouter = router({
  stuckPayments: adminProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/admin/payments/stuck",
        tags: ["admin"],
        summary: "Payments still pending after the 24 h sync window",
        description:
          "Every tenant's payments (both providers, both environments unless filtered) still pending more than 24 h after creation: " +
          "the sync jobs have stopped and the payment was never assumed failed; an operator settles it. Oldest first. Admin token only.",
      },
    })
    .input(
      z.object({
        ...pageQuery,
        provider: providerNameSchema.optional(),
        environment: z.enum(["sandbox", "live"]).optional(),
        tenantId: z.string().min(1).max(64).optional().meta({ description: "Only this tenant's (ten_…)" }),
      }),
    )
    .output(stuckListSchema)
    .query(({ ctx, input }) => listStuckPayments(ctx.deps, input)),
});
