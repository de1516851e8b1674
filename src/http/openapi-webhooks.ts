/**
 * The OpenAPI document's `webhooks` section (OpenAPI 3.1): one operation per event type, the POST a
 * tenant's endpoint (and a direct payment's `callback_url`) receives — its envelope and `data` schema
 * (`services/events/event-payloads.ts`), the Standard Webhooks headers, and what the answer does.
 * What is signed and how to verify it: docs/verifying-webhooks.md.
 *
 * @module
 */
import type { OpenAPIObject } from "trpc-to-openapi";
import { createDocument } from "zod-openapi";
import { EVENT_PAYLOADS, eventEnvelopeSchema } from "../services/events/event-payloads.ts";
import { EVENT_TYPES } from "../services/events/event-types.ts";

/** The Standard Webhooks headers of every delivery (standardwebhooks.com; `crypto/sign-webhook.ts`). */
const DELIVERY_HEADERS = [
  {
    name: "webhook-id",
    description: "The event's id (`evt_…`): the same on every attempt and replay of that event, so a receiver can drop duplicates",
    schema: { type: "string", example: "evt_01JD3Z6Q5W8B8Y4G1M7T2N9XKC" },
  },
  {
    name: "webhook-timestamp",
    description: "When this attempt was signed, in Unix seconds; refuse one far from now (the libraries allow 5 minutes)",
    schema: { type: "string", pattern: "^\\d+$", example: "1764350000" },
  },
  {
    name: "webhook-signature",
    description:
      "`v1,<base64 HMAC-SHA256>` of `<webhook-id>.<webhook-timestamp>.<body>` with the key bytes of the endpoint's `whsec_` secret (a callback_url: the tenant's callback secret); " +
      "space-separated, one per secret, during the 24 hours an old secret still signs after a rotation. Any one valid signature is enough.",
    schema: { type: "string", pattern: "^v1,[A-Za-z0-9+/=]+( v1,[A-Za-z0-9+/=]+)*$", example: "v1,K5oZfzN95Z9UVu1EsfQmfVNQhnkZ2pj9o9NDN/H/pI4=" },
  },
  {
    name: "user-agent",
    description: "`Passerelle-Webhooks/<version>`",
    schema: { type: "string", pattern: "^Passerelle-Webhooks/", example: "Passerelle-Webhooks/0.1.0" },
  },
].map((header) => ({ in: "header", required: true, ...header }));

/**
 * Each event type's envelope as JSON Schema, rendered as what the gateway sends (zod-openapi's output
 * mode, as for a response: objects closed with `additionalProperties: false`), and the schemas it uses.
 */
function renderEnvelopes() {
  const rendered = createDocument({
    openapi: "3.1.0",
    info: { title: "", version: "" },
    paths: Object.fromEntries(
      EVENT_TYPES.map((type) => [
        `/${type}`,
        { post: { responses: { "200": { description: type, content: { "application/json": { schema: eventEnvelopeSchema(type) } } } } } },
      ]),
    ),
  });
  const envelopes = Object.fromEntries(
    EVENT_TYPES.map((type) => {
      const paths = rendered.paths as Record<string, { post: { responses: Record<string, { content: Record<string, { schema: unknown }> }> } }>;
      const operation = paths[`/${type}`]!.post;
      return [type, operation.responses["200"]!.content["application/json"]!.schema];
    }),
  );
  return { envelopes, schemas: rendered.components?.schemas ?? {} };
}

/** Adds the `webhooks` section, and the schemas it uses that the API does not, to `document`. */
export function describeWebhooks(document: OpenAPIObject): void {
  const { envelopes, schemas } = renderEnvelopes();
  const webhooks: Record<string, unknown> = {};
  for (const type of EVENT_TYPES)
    webhooks[type] = {
      post: {
        operationId: `webhook-${type.replaceAll(".", "-")}`,
        tags: ["webhooks"],
        summary: EVENT_PAYLOADS[type].summary,
        description:
          `Sent as \`POST\` to every enabled endpoint of the tenant and environment subscribed to \`${type}\`` +
          (type.startsWith("payment.") ? " and to the payment's `callback_url`" : "") +
          ", signed as Standard Webhooks (docs/verifying-webhooks.md). A 2xx answer within WEBHOOK_TIMEOUT_MS (15 s) delivers it; " +
          "anything else is retried on WEBHOOK_RETRY_SCHEDULE (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h), then failed; a 410 disables the endpoint.",
        security: [],
        parameters: DELIVERY_HEADERS,
        requestBody: { required: true, content: { "application/json": { schema: envelopes[type] } } },
        responses: {
          "200": { description: "Delivered (any 2xx does)" },
          "410": { description: "Gone: the endpoint is disabled at once and receives nothing more until re-enabled" },
        },
      },
    };
  document.webhooks = webhooks as OpenAPIObject["webhooks"];
  document.components ??= {};
  // A schema the API already documents (Payout, Refund, PaymentCustomer) keeps the API's rendering.
  const added = Object.entries(schemas).filter(([name]) => !(name in (document.components?.schemas ?? {})));
  document.components.schemas = { ...document.components.schemas, ...Object.fromEntries(added) };
}
