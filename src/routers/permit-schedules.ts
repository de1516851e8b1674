/**
 * A permit's renewal schedule (contract §5): `PUT`, `GET` and `DELETE /providerB/permits/{permit_id}/schedule`.
 * The rules (one schedule per permit, replacement, positions) live in `services/permits/schedules.ts`; the
 * renewals themselves in `services/permits/renewals.ts`.
 */
import { z } from "zod";
import { cancelSchedule, getSchedule, putSchedule } from "../services/permits/schedules.ts";
import { canonicalTimeZone } from "../services/permits/schedule-time-zone.ts";
import type { Context } from "./trpc.ts";
import { assertMayActIn, router, tenantProcedure } from "./trpc.ts";
import type { Environment } from "../config.ts";
import type { Principal } from "../services/auth/tokens.ts";
import type { TenantSummary } from "../services/tenants/find-tenant.ts";

const permitId = z.string().min(1).max(64).meta({ description: "The permit (prm_…)" });
const tenantHeader = z.object({ "x-tenant-id": z.string().meta({ description: "The calling tenant" }) });
const dateTime = z.string().meta({ format: "date-time" });

const scheduleInput = z
  .object({
    permit_id: permitId,
    amount: z
      .number()
      .int()
      .min(1)
      .meta({ description: "Charged every period, in whole units of the permit's currency; at most the permit's maxAmount", example: 5000 }),
    interval: z.enum(["day", "week", "month"]).meta({ description: "The unit of the period" }),
    intervalCount: z.number().int().min(1).max(365).optional().meta({ description: "Periods are this many intervals long (default 1)" }),
    startAt: z.iso.datetime({ offset: true }).optional().meta({
      description:
        "RFC 3339; the anchor every due date is computed from (default: now). In the past: the period in progress is charged first, never the earlier ones.",
      example: "2026-01-05T09:00:00+01:00",
    }),
    timeZone: z
      .string()
      .refine((value) => canonicalTimeZone(value) !== undefined, { message: "must be an IANA time zone name, like Africa/Porto-Novo" })
      .optional()
      .meta({
        description:
          "The IANA time zone whose calendar the periods follow: months, days and the due time of day are local. " +
          "Default: the schedule's current one, else the payer's country's (from the permit customer's phone: +229 Africa/Porto-Novo, +227 Africa/Niamey, " +
          "+228 Africa/Lome, +225 Africa/Abidjan, +221 Africa/Dakar, +223 Africa/Bamako, +224 Africa/Conakry), else Africa/Abidjan.",
        example: "Africa/Porto-Novo",
      }),
    description: z.string().trim().min(1).max(255).meta({ description: "Label of every renewal charge", example: "Monthly box" }),
  })
  .meta({ id: "PermitScheduleRequest" });

export const scheduleSchema = z
  .object({
    id: z.string().meta({ description: "sch_…" }),
    permitId: z.string(),
    status: z.enum(["active", "past_due", "cancelled"]),
    amount: z.number().int(),
    currency: z.enum(["XOF", "GNF"]),
    interval: z.enum(["day", "week", "month"]),
    intervalCount: z.number().int(),
    description: z.string(),
    startAt: dateTime,
    timeZone: z.string().meta({ description: "The IANA time zone whose calendar the periods follow", example: "Africa/Porto-Novo" }),
    period: z.string().meta({ description: "The period being collected: its due day in the schedule's time zone, YYYY-MM-DD" }),
    attempt: z.number().int().meta({ description: "0 at the due date, then 1, 2, 3… for the dunning retries" }),
    nextChargeAt: dateTime.nullable().meta({ description: "When the next charge or retry is due; null unless active" }),
    paused: z.boolean().meta({ description: "The tenant is disabled: nothing is charged until it is enabled again" }),
    pastDueAt: dateTime.nullable(),
    cancelledAt: dateTime.nullable(),
    createdAt: dateTime,
    updatedAt: dateTime,
  })
  .meta({ id: "PermitSchedule" });

type Scoped = Context & { principal: Principal; tenant: TenantSummary; environment: Environment };

function scopeOf(ctx: Scoped) {
  assertMayActIn(ctx.principal, ctx.tenant, ctx.environment);
  return { tenantId: ctx.tenant.id, environment: ctx.environment };
}

export const permitSchedulesRouter = router({
  put: tenantProcedure
    .meta({
      openapi: {
        method: "PUT",
        path: "/providerB/permits/{permit_id}/schedule",
        tags: ["permits"],
        summary: "Create or replace the permit's renewal schedule",
        description:
          "One schedule per permit, kept under one id. Same cadence, startAt and timeZone: only the amount and description of the charges to come change. " +
          "A new cadence, startAt or timeZone, or a past_due or cancelled schedule: it starts again from the period in progress, never one already charged. " +
          "Periods follow the calendar of timeZone. 409 permit_not_active unless the permit is active; " +
          "400 when amount exceeds the permit's maxAmount or timeZone is not an IANA time zone.",
        requestHeaders: tenantHeader,
      },
      tenantHeader: "required",
      errors: [409],
    })
    .input(scheduleInput)
    .output(scheduleSchema)
    .mutation(({ ctx, input }) => {
      const { permit_id, ...schedule } = input;
      return putSchedule(ctx.deps, scopeOf(ctx), permit_id, schedule);
    }),
  get: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/providerB/permits/{permit_id}/schedule",
        tags: ["permits"],
        summary: "Read the permit's renewal schedule",
        requestHeaders: tenantHeader,
      },
      tenantHeader: "required",
    })
    .input(z.object({ permit_id: permitId }))
    .output(scheduleSchema)
    .query(({ ctx, input }) => getSchedule(ctx.deps, scopeOf(ctx), input.permit_id)),
  cancel: tenantProcedure
    .meta({
      openapi: {
        method: "DELETE",
        path: "/providerB/permits/{permit_id}/schedule",
        tags: ["permits"],
        summary: "Cancel the permit's renewal schedule",
        description: "No further renewal is charged; a charge already made stays as it is. The permit stays active.",
        requestHeaders: tenantHeader,
      },
      tenantHeader: "required",
    })
    .input(z.object({ permit_id: permitId }))
    .output(scheduleSchema)
    .mutation(({ ctx, input }) => cancelSchedule(ctx.deps, scopeOf(ctx), input.permit_id)),
});
