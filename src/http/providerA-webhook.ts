/**
 * `POST /providerA/webhook/{environment}` and `POST /providerA/webhook/{environment}/{tenant_id}`
 * (contract §4): provider A's signed webhooks, read as raw bytes (the signature covers them exactly).
 * No bearer token: provider A cannot send one; the signature is the authentication.
 */
import { z } from "zod";
import type { ZodOpenApiPathItemObject } from "zod-openapi";
import { receiveProviderAWebhook } from "../services/direct-payments/mod.ts";
import { errorBodySchema } from "./error-body.ts";
import type { RawBodyRoute } from "./raw-body-routes.ts";
import { MAX_BODY_BYTES } from "./rest-bridge.ts";
import { PayloadTooLargeError } from "../errors.ts";

async function readRaw(request: Request): Promise<Uint8Array> {
  if (Number(request.headers.get("content-length") ?? "0") > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.byteLength > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
  return bytes;
}

function describe(withTenant: boolean): ZodOpenApiPathItemObject {
  return {
    post: {
      operationId: withTenant ? "providerA-webhook-tenant" : "providerA-webhook",
      tags: ["providerA"],
      summary: withTenant ? "Provider A webhook for a tenant's own account" : "Provider A webhook for the service's account",
      description:
        "Sent by provider A on every status change, signed with `X-FEDAPAY-SIGNATURE: t=<unix>,s=<hex HMAC-SHA256>` over the raw body with that account's webhook secret (300 s tolerance). The transaction is then read again from provider A. Unknown transactions are acknowledged with 200.",
      requestParams: {
        path: z.object({
          environment: z.enum(["sandbox", "live"]),
          ...(withTenant ? { tenant_id: z.string().meta({ description: "The tenant whose own provider A account sends it" }) } : {}),
        }),
        header: z.object({ "x-fedapay-signature": z.string().meta({ description: "t=<unix>,s=<hex>[,s=<hex>]" }) }),
      },
      requestBody: { content: { "application/json": { schema: z.looseObject({ name: z.string(), entity: z.looseObject({ id: z.number().int() }) }) } } },
      responses: {
        200: { description: "Received", content: { "application/json": { schema: z.object({ received: z.literal(true) }) } } },
        401: { description: "Bad, old or foreign signature", content: { "application/json": { schema: errorBodySchema } } },
      },
    },
  };
}

const handle: RawBodyRoute["handle"] = async (deps, request, params) => {
  const result = await receiveProviderAWebhook(deps, {
    environment: params.environment ?? "",
    tenantId: params.tenant_id,
    rawBody: await readRaw(request),
    signature: request.headers.get("x-fedapay-signature"),
  });
  return Response.json(result);
};

/** Provider A's two webhook routes. */
export const PROVIDER_A_WEBHOOK_ROUTES: RawBodyRoute[] = [
  { method: "POST", path: "/providerA/webhook/{environment}", handle, openapi: describe(false) },
  { method: "POST", path: "/providerA/webhook/{environment}/{tenant_id}", handle, openapi: describe(true) },
];
