/**
 * Routes that are not tRPC procedures because they need the request's raw bytes: the provider webhooks
 * (provider A signs the raw body; provider B posts PHP-style bracket form fields). Each is a plain
 * Elysia route (`parse: "none"`: the handler reads the body once itself) that calls the same services as
 * the procedures, and describes itself for the OpenAPI document so `/docs` shows every path.
 *
 * A provider adds its routes by appending to {@link RAW_BODY_ROUTES}; nothing else needs to change.
 */
import type { ZodOpenApiPathItemObject } from "zod-openapi";
import type { Deps } from "../services/deps.ts";
import { PROVIDER_A_WEBHOOK_ROUTES } from "./providerA-webhook.ts";
import { providerBWebhookRoute } from "./providerB-webhook.ts";

export interface RawBodyRoute {
  method: "POST";
  /** OpenAPI form (`/providerA/webhook/{environment}`); the Elysia path is derived from it. */
  path: string;
  /** Answers the request; errors it throws are mapped to the contract's error shape. */
  handle(deps: Deps, request: Request, params: Record<string, string>): Promise<Response>;
  /** Its OpenAPI description. */
  openapi: ZodOpenApiPathItemObject;
}

/** Every raw-body route of the gateway. */
export const RAW_BODY_ROUTES: RawBodyRoute[] = [];
RAW_BODY_ROUTES.push(providerBWebhookRoute);
RAW_BODY_ROUTES.push(...PROVIDER_A_WEBHOOK_ROUTES);
