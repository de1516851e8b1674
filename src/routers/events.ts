/**
 * `/events` (contract §6): the tenant's event log of the last 30 days, in the caller's environment.
 */
import { z } from "zod";
import { EVENT_TYPES } from "../services/events/event-types.ts";
import { getEvent, listEvents } from "../services/events/read-events.ts";
import { pageOf, pageQuery } from "../services/paging.ts";
import { router, tenantProcedure } from "./trpc.ts";

export const eventSchema = z
  .object({
    id: z.string(),
    type: z.enum(EVENT_TYPES),
    createdAt: z.string().meta({ format: "date-time" }),
    tenantId: z.string(),
    environment: z.enum(["sandbox", "live"]),
    data: z.record(z.string(), z.unknown()),
  })
  .meta({ id: "Event", description: "The envelope every webhook delivery and callback carries" });

export const eventsRouter = router({
  list: tenantProcedure
    .meta({ openapi: { method: "GET", path: "/events", tags: ["events"], summary: "The event log of the last 30 days, newest first" } })
    .input(
      z.object({
        ...pageQuery,
        type: z.enum(EVENT_TYPES).optional(),
        paymentId: z.string().min(1).max(64).optional().meta({
          description: "Only the events about this payment (pay_…): its completion or failure, its refunds",
          example: "pay_01JD3Z6Q5W8B8Y4G1M7T2N9XKC",
        }),
      }),
    )
    .output(pageOf(eventSchema))
    .query(({ ctx, input }) => listEvents(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, input)),
  get: tenantProcedure
    .meta({ openapi: { method: "GET", path: "/events/{event_id}", tags: ["events"], summary: "Read an event" } })
    .input(z.object({ event_id: z.string().min(1).max(64) }))
    .output(eventSchema)
    .query(({ ctx, input }) => getEvent(ctx.deps, { tenantId: ctx.tenant.id, environment: ctx.environment }, input.event_id)),
});
