/**
 * The OpenAPI document, generated from the router by trpc-to-openapi (the document only — the REST
 * surface is served by `rest-bridge.ts`), then corrected to describe what the gateway really answers:
 * every error response is the contract's error body, and the plain routes (health, provider webhooks) are
 * added so `/docs` shows every path.
 */
import type { AnyTRPCRouter } from "@trpc/server";
import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";
import { errorBodySchema, reasonPhrase } from "./error-body.ts";
import { createDocument, type ZodOpenApiPathsObject } from "zod-openapi";

const ERROR_REF = { $ref: "#/components/schemas/Error" };

/** Statuses every authenticated route may answer besides its own. */
const COMMON_ERRORS = [400, 401, 403, 404, 413, 415, 429, 500, 503];

interface ResponseObject {
  description?: string;
  content?: Record<string, { schema?: unknown }>;
}

function errorResponse(status: number): ResponseObject {
  return { description: reasonPhrase(status), content: { "application/json": { schema: ERROR_REF } } };
}

/** Generates the document for `router` plus the given plain-route paths. */
export function buildOpenApiDocument(router: AnyTRPCRouter, plainPaths: ZodOpenApiPathsObject, version: string): OpenAPIObject {
  const document = generateOpenApiDocument(router, {
    title: "Passerelle",
    description:
      "A multi-tenant payment gateway proxy for West-African mobile money and cards. Every error has the shape of the `Error` schema; every response carries `x-request-id`.",
    version,
    baseUrl: "/",
    securitySchemes: { bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" } },
    paths: plainPaths,
  });
  // The error body schema, rendered by zod-openapi the same way as the rest of the document.
  const errorComponent = createDocument({
    openapi: "3.1.0",
    info: { title: "", version: "" },
    components: { schemas: { Error: errorBodySchema } },
  }).components?.schemas?.Error;
  document.components ??= {};
  document.components.schemas = { ...document.components.schemas, Error: errorComponent as NonNullable<typeof errorComponent> };

  // Plain routes describe their own responses; the procedures' are trpc-to-openapi's and get corrected.
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    if (path in plainPaths) continue;
    for (const operation of Object.values(item as Record<string, { responses?: Record<string, ResponseObject> }>)) {
      if (!operation?.responses) continue;
      for (const status of Object.keys(operation.responses)) {
        if (Number(status) >= 400) operation.responses[status] = errorResponse(Number(status));
      }
      for (const status of COMMON_ERRORS) operation.responses[String(status)] ??= errorResponse(status);
      // Idempotency-Key: 409 while the first request runs, 422 when reused with another body.
      const takesKey = JSON.stringify((operation as { parameters?: unknown }).parameters ?? []).toLowerCase().includes('"idempotency-key"');
      if (takesKey) for (const status of [409, 422]) operation.responses[String(status)] ??= errorResponse(status);
      const ok = operation.responses["200"];
      if (ok) (ok as Record<string, unknown>).headers = { "x-request-id": { schema: { type: "string" } } };
    }
  }
  return document;
}
