/**
 * OpenAPI descriptions of the routes that are not tRPC procedures (`/`, health; the provider webhooks,
 * which need the raw body, add themselves here), so `/docs` shows every path.
 */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import type { PaymentProvider } from "../providers/provider.ts";
import { DEFAULT_PROVIDERS } from "../providers/registry.ts";
import { RAW_BODY_ROUTES } from "./raw-body-routes.ts";
import { rootPath } from "./root-route.ts";

const healthBody = z.object({
  status: z.enum(["ok", "unavailable"]),
  checks: z.record(z.string(), z.enum(["ok", "down"])).optional(),
});

const healthPaths: ZodOpenApiPathsObject = {
  "/health/live": {
    get: {
      operationId: "health-live",
      tags: ["operations"],
      summary: "The process is up",
      responses: { 200: { description: "Up", content: { "application/json": { schema: healthBody } } } },
    },
  },
  "/health/ready": {
    get: {
      operationId: "health-ready",
      tags: ["operations"],
      summary: "The database and the job queue are reachable",
      responses: {
        200: { description: "Ready", content: { "application/json": { schema: healthBody } } },
        503: { description: "A dependency is down", content: { "application/json": { schema: healthBody } } },
      },
    },
  },
};

/** Every plain route's OpenAPI description of a gateway running `providers`: `/`, health, and the raw-body routes, each provider's inbound ones among them. */
export function plainRoutePathsFor(providers: readonly PaymentProvider[]): ZodOpenApiPathsObject {
  return {
    ...rootPath,
    ...healthPaths,
    ...Object.fromEntries([...RAW_BODY_ROUTES, ...providers.flatMap((provider) => provider.inbound)].map((route) => [route.path, route.openapi])),
  };
}

/** The plain routes of a gateway running {@link DEFAULT_PROVIDERS}. */
export const plainRoutePaths: ZodOpenApiPathsObject = plainRoutePathsFor(DEFAULT_PROVIDERS);
