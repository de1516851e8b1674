/**
 * OpenAPI descriptions of the routes that are not tRPC procedures (`/`, health; the provider webhooks,
 * which need the raw body, add themselves here), so `/docs` shows every path.
 */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
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

/** Every plain route's OpenAPI description: `/`, health, and the raw-body provider webhooks. */
export const plainRoutePaths: ZodOpenApiPathsObject = {
  ...rootPath,
  ...healthPaths,
  ...Object.fromEntries([...RAW_BODY_ROUTES, ...DEFAULT_PROVIDERS.flatMap((provider) => provider.inbound)].map((route) => [route.path, route.openapi])),
};
