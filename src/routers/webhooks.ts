/**
 * `/webhooks` (contract §6): a tenant's webhook endpoints, their secrets, test events, delivery log,
 * retries and replays. An endpoint belongs to the environment of the token that made it.
 */
import { z } from "zod";
import { EVENT_TYPES } from "../services/events/event-types.ts";
import {
  createEndpoint,
  deleteEndpoint,
  endpointViews,
  findEndpoint,
  listEndpoints,
  rotateEndpointSecret,
  updateEndpoint,
} from "../services/webhooks/endpoints.ts";
import { validateTargetUrl } from "../services/webhooks/url-safety.ts";
import { recoverEndpoint, replayEndpoint, retryDelivery, sendTestEvent } from "../services/webhooks/delivery-actions.ts";
import { HEALTH_WINDOW } from "../services/webhooks/endpoint-health.ts";
import { listDeliveries } from "../services/webhooks/delivery-log.ts";
import { pageOf, pageQuery } from "../services/paging.ts";
import { idempotencyKeyHeader, idempotent } from "./idempotency.ts";
import { router, tenantProcedure } from "./trpc.ts";
import type { Context } from "./trpc.ts";
import type { Environment } from "../config.ts";

const webhookId = z.string().min(1).max(64);
const url = z.string().min(1).max(2048).meta({ example: "https://merchant.example/passerelle/webhooks" });
const events = z.array(z.enum(EVENT_TYPES)).max(EVENT_TYPES.length).meta({ description: "Event types to receive; absent or empty: all" });

const healthSchema = z
  .object({
    status: z.enum(["healthy", "failing", "disabled", "idle"]).meta({
      description:
        "disabled: switched off (disabledReason says why); failing: its attempts have failed without a success since failingSince; " +
        "idle: nothing delivered to it yet; healthy: otherwise",
    }),
    successRate: z
      .number()
      .min(0)
      .max(1)
      .nullable()
      .meta({ description: `Succeeded over finished among its last ${HEALTH_WINDOW} deliveries; null when none finished`, example: 0.97 }),
    recent: z
      .object({ succeeded: z.number().int(), failed: z.number().int(), pending: z.number().int() })
      .meta({ description: `Its last ${HEALTH_WINDOW} deliveries by state` }),
    lastDeliveredAt: z.string().meta({ format: "date-time" }).nullable(),
    lastError: z.string().nullable().meta({ description: "The error of its latest delivery that has one" }),
    lastErrorAt: z.string().meta({ format: "date-time" }).nullable(),
    failingSince: z.string().meta({ format: "date-time" }).nullable(),
  })
  .meta({ id: "WebhookEndpointHealth" });

export const endpointSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    description: z.string().nullable(),
    events: z.array(z.enum(EVENT_TYPES)).nullable().meta({ description: "null: every event type" }),
    enabled: z.boolean(),
    disabledReason: z.string().nullable(),
    environment: z.enum(["sandbox", "live"]),
    createdAt: z.string().meta({ format: "date-time" }),
    updatedAt: z.string().meta({ format: "date-time" }),
    health: healthSchema,
  })
  .meta({ id: "WebhookEndpoint" });

const attemptSchema = z.object({
  attempt: z.number().int(),
  attemptedAt: z.string().meta({ format: "date-time" }),
  url: z.string(),
  status: z.number().int().nullable().meta({ description: "null when no answer came" }),
  durationMs: z.number().int(),
  error: z.string().nullable(),
  responseBody: z.string().nullable().meta({ description: "The first 2 KiB of the answer" }),
});

export const deliverySchema = z
  .object({
    id: z.string(),
    eventId: z.string(),
    eventType: z.enum(EVENT_TYPES),
    endpointId: z.string().nullable(),
    targetUrl: z.string().nullable().meta({ description: "A direct payment's callback_url; null for an endpoint" }),
    state: z.enum(["pending", "succeeded", "failed"]),
    attemptCount: z.number().int(),
    nextAttemptAt: z.string().meta({ format: "date-time" }).nullable(),
    lastStatus: z.number().int().nullable(),
    lastError: z.string().nullable(),
    deliveredAt: z.string().meta({ format: "date-time" }).nullable(),
    createdAt: z.string().meta({ format: "date-time" }),
    updatedAt: z.string().meta({ format: "date-time" }),
    attempts: z.array(attemptSchema),
  })
  .meta({ id: "Delivery" });

type Scoped = { ctx: Context & { tenant: { id: string }; environment: Environment } };

function scopeOf({ ctx }: Scoped) {
  return { tenantId: ctx.tenant.id, environment: ctx.environment };
}

function checkedUrl(ctx: Scoped["ctx"], value: string): string {
  return validateTargetUrl(value, { field: "url", environment: ctx.environment, allowPrivateTargets: ctx.deps.config.allowPrivateTargets });
}

export const webhooksRouter = router({
  create: tenantProcedure
    .use(idempotent({ sealResponse: true }))
    .meta({
      openapi: {
        method: "POST",
        path: "/webhooks",
        tags: ["webhooks"],
        summary: "Create a webhook endpoint",
        description: "The signing secret (whsec_…) is in this response only. At most 20 endpoints per tenant.",
        requestHeaders: idempotencyKeyHeader,
      },
    })
    .input(z.object({ url, events: events.optional(), description: z.string().max(500).optional().meta({ example: "Order service" }) }))
    .output(endpointSchema.extend({ secret: z.string().meta({ description: "Shown this once" }) }).meta({ id: "CreatedWebhookEndpoint" }))
    .mutation(({ ctx, input }) =>
      createEndpoint(ctx.deps, { ...scopeOf({ ctx }), url: checkedUrl(ctx, input.url), events: input.events ?? null, description: input.description ?? null }),
    ),
  list: tenantProcedure
    .meta({ openapi: { method: "GET", path: "/webhooks", tags: ["webhooks"], summary: "List webhook endpoints" } })
    .output(z.object({ data: z.array(endpointSchema) }))
    .query(async ({ ctx }) => ({ data: await listEndpoints(ctx.deps, scopeOf({ ctx })) })),
  get: tenantProcedure
    .meta({ openapi: { method: "GET", path: "/webhooks/{webhook_id}", tags: ["webhooks"], summary: "Read a webhook endpoint" } })
    .input(z.object({ webhook_id: webhookId }))
    .output(endpointSchema)
    .query(async ({ ctx, input }) => {
      const [view] = await endpointViews(ctx.deps, [await findEndpoint(ctx.deps, scopeOf({ ctx }), input.webhook_id)]);
      return view!;
    }),
  update: tenantProcedure
    .meta({ openapi: { method: "PATCH", path: "/webhooks/{webhook_id}", tags: ["webhooks"], summary: "Change url, events, description or enabled" } })
    .input(
      z.object({
        webhook_id: webhookId,
        url: url.optional(),
        events: events.nullable().optional(),
        description: z.string().max(500).nullable().optional(),
        enabled: z.boolean().optional(),
      }),
    )
    .output(endpointSchema)
    .mutation(({ ctx, input }) => {
      const { webhook_id, ...changes } = input;
      return updateEndpoint(ctx.deps, scopeOf({ ctx }), webhook_id, { ...changes, url: changes.url === undefined ? undefined : checkedUrl(ctx, changes.url) });
    }),
  delete: tenantProcedure
    .meta({ openapi: { method: "DELETE", path: "/webhooks/{webhook_id}", tags: ["webhooks"], summary: "Delete a webhook endpoint" } })
    .input(z.object({ webhook_id: webhookId }))
    .output(z.object({ id: z.string(), deleted: z.literal(true) }))
    .mutation(({ ctx, input }) => deleteEndpoint(ctx.deps, scopeOf({ ctx }), input.webhook_id)),
  rotateSecret: tenantProcedure
    .use(idempotent({ sealResponse: true }))
    .meta({
      openapi: {
        method: "POST",
        path: "/webhooks/{webhook_id}/rotate-secret",
        tags: ["webhooks"],
        summary: "Rotate the signing secret",
        description: "The old secret keeps signing beside the new one for 24 hours. The new secret is in this response only.",
        requestHeaders: idempotencyKeyHeader,
      },
    })
    .input(z.object({ webhook_id: webhookId }))
    .output(z.object({ secret: z.string(), previousExpiresAt: z.string().meta({ format: "date-time" }) }))
    .mutation(({ ctx, input }) => rotateEndpointSecret(ctx.deps, scopeOf({ ctx }), input.webhook_id)),
  test: tenantProcedure
    .use(idempotent())
    .meta({
      openapi: {
        method: "POST",
        path: "/webhooks/{webhook_id}/test",
        tags: ["webhooks"],
        summary: "Send a webhook.test event to this endpoint",
        requestHeaders: idempotencyKeyHeader,
      },
    })
    .input(z.object({ webhook_id: webhookId }))
    .output(z.object({ eventId: z.string(), deliveryId: z.string() }))
    .mutation(({ ctx, input }) => sendTestEvent(ctx.deps, scopeOf({ ctx }), input.webhook_id)),
  deliveries: tenantProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/webhooks/{webhook_id}/deliveries",
        tags: ["webhooks"],
        summary: "The delivery log of an endpoint",
        description: "Each delivery with every attempt: time, status code, duration, error and the first 2 KiB of the answer; `state` keeps one state only.",
      },
    })
    .input(z.object({ webhook_id: webhookId, state: z.enum(["pending", "succeeded", "failed"]).optional(), ...pageQuery }))
    .output(pageOf(deliverySchema))
    .query(({ ctx, input }) =>
      listDeliveries(ctx.deps, scopeOf({ ctx }), { endpointId: input.webhook_id, state: input.state, limit: input.limit, cursor: input.cursor }),
    ),
  retry: tenantProcedure
    .meta({ openapi: { method: "POST", path: "/webhooks/deliveries/{delivery_id}/retry", tags: ["webhooks"], summary: "Deliver again now" }, errors: [409] })
    .input(z.object({ delivery_id: z.string().min(1).max(64) }))
    .output(deliverySchema)
    .mutation(({ ctx, input }) => retryDelivery(ctx.deps, scopeOf({ ctx }), input.delivery_id)),
  replay: tenantProcedure
    .use(idempotent())
    .meta({
      openapi: {
        method: "POST",
        path: "/webhooks/{webhook_id}/replay",
        tags: ["webhooks"],
        summary: "Re-deliver every event of a window (at most 14 days)",
        requestHeaders: idempotencyKeyHeader,
      },
    })
    .input(
      z.object({
        webhook_id: webhookId,
        since: z.iso.datetime({ offset: true }).meta({ example: "2026-01-05T00:00:00Z" }),
        until: z.iso.datetime({ offset: true }).optional().meta({ example: "2026-01-06T00:00:00Z" }),
      }),
    )
    .output(z.object({ endpointId: z.string(), since: z.string(), until: z.string(), replayed: z.number().int() }))
    .mutation(({ ctx, input }) => replayEndpoint(ctx.deps, scopeOf({ ctx }), input.webhook_id, { since: input.since, until: input.until })),
  recover: tenantProcedure
    .use(idempotent())
    .meta({
      openapi: {
        method: "POST",
        path: "/webhooks/{webhook_id}/recover",
        tags: ["webhooks"],
        summary: "Deliver again the failed deliveries of a window (at most 14 days)",
        description:
          "Only deliveries that failed (used up their attempts, or were refused for good) and were made in the window; " +
          "those that succeeded or are still being tried are left alone. Each gets one more attempt, then the rest of the retry schedule.",
        requestHeaders: idempotencyKeyHeader,
      },
      errors: [409],
    })
    .input(
      z.object({
        webhook_id: webhookId,
        since: z.iso.datetime({ offset: true }).meta({ example: "2026-01-05T00:00:00Z" }),
        until: z.iso.datetime({ offset: true }).optional().meta({ example: "2026-01-06T00:00:00Z" }),
      }),
    )
    .output(z.object({ endpointId: z.string(), since: z.string(), until: z.string(), recovered: z.number().int() }))
    .mutation(({ ctx, input }) => recoverEndpoint(ctx.deps, scopeOf({ ctx }), input.webhook_id, { since: input.since, until: input.until })),
});
