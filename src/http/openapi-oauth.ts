/**
 * The OpenAPI description of the OAuth2 token endpoint (the procedures with `meta.oauthErrors`): its
 * errors are the `OAuthError` schema (RFC 6749 §5.2, `src/error-body.ts`), every answer says `no-store`, a 401 carries the Basic
 * challenge, and the client authenticates with HTTP Basic (`clientBasic`) or with its credentials in the
 * body — hence `security: [{ clientBasic: [] }, {}]`.
 */
import type { AnyTRPCRouter } from "@trpc/server";
import type { OpenAPIObject } from "trpc-to-openapi";
import { createDocument } from "zod-openapi";
import type { Meta } from "../routers/trpc.ts";
import { BASIC_CHALLENGE, oauthErrorBodySchema } from "../error-body.ts";

const OAUTH_ERROR_REF = { $ref: "#/components/schemas/OAuthError" };

const NO_STORE = {
  "cache-control": { description: "Always `no-store` (RFC 6749 §5.1)", schema: { type: "string", enum: ["no-store"] } },
  pragma: { description: "Always `no-cache` (RFC 6749 §5.1)", schema: { type: "string", enum: ["no-cache"] } },
};

interface ResponseObject {
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: unknown }>;
}

/** Rewrites the token endpoint's operations of `document` (built from `router`) as described above. */
export function describeOAuthTokenEndpoints(document: OpenAPIObject, router: AnyTRPCRouter): void {
  const procedures = router._def.procedures as Record<string, { _def: { meta?: Meta } }>;
  const endpoints = Object.values(procedures)
    .map((procedure) => procedure._def.meta)
    .filter((meta) => meta?.oauthErrors && meta.openapi);
  if (endpoints.length === 0) return;
  const rendered = createDocument({ openapi: "3.1.0", info: { title: "", version: "" }, components: { schemas: { OAuthError: oauthErrorBodySchema } } });
  document.components ??= {};
  document.components.schemas = { ...document.components.schemas, OAuthError: rendered.components!.schemas!.OAuthError! };
  document.components.securitySchemes = {
    ...document.components.securitySchemes,
    clientBasic: {
      type: "http",
      scheme: "basic",
      description: "An API key as an OAuth2 client (RFC 6749 §2.3.1): its id as the user name and its secret as the password, each form-urlencoded",
    },
  };
  for (const meta of endpoints) {
    const operation = (
      document.paths?.[meta!.openapi!.path] as Record<string, { security?: unknown[]; responses?: Record<string, ResponseObject> }> | undefined
    )?.[meta!.openapi!.method.toLowerCase()];
    if (!operation?.responses) continue;
    operation.security = [{ clientBasic: [] }, {}];
    for (const [status, response] of Object.entries(operation.responses)) {
      // RFC 6749 §5.1: a token answer is never cached.
      if (status !== "431") response.headers = { ...response.headers, ...NO_STORE };
      if (Number(status) < 400) continue;
      response.content = { "application/json": { schema: OAUTH_ERROR_REF } };
      if (status === "401")
        response.headers = { ...response.headers, "www-authenticate": { description: `Always \`${BASIC_CHALLENGE}\``, schema: { type: "string" } } };
    }
  }
}
