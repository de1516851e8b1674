/**
 * `GET /`: where someone who opens the gateway's address lands. A browser (it asks for `text/html`) is sent
 * on to the merchant's dashboard (`/dashboard`); an API client gets a small JSON index of where to go next.
 */
import { z } from "zod";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import packageJson from "../../package.json" with { type: "json" };
import { jsonResponse } from "./responses.ts";

const rootIndex = z.object({
  name: z.literal("passerelle"),
  version: z.string(),
  links: z.object({
    dashboard: z.string().meta({ description: "The merchant's dashboard, for a person with a browser" }),
    docs: z.string(),
    openapi: z.string(),
    health: z.string(),
  }),
});

const INDEX: z.infer<typeof rootIndex> = {
  name: "passerelle",
  version: packageJson.version,
  links: { dashboard: "/dashboard", docs: "/docs", openapi: "/openapi.json", health: "/health/ready" },
};

/** The answer to `GET /`: a 302 to `/dashboard` for a browser, the JSON index otherwise. */
export function rootResponse(request: Request): Response {
  const accept = request.headers.get("accept") ?? "";
  if (/\btext\/html\b/i.test(accept)) return new Response(null, { status: 302, headers: { location: "/dashboard" } });
  return jsonResponse(200, INDEX);
}

/** `GET /` in the OpenAPI document. */
export const rootPath: ZodOpenApiPathsObject = {
  "/": {
    get: {
      operationId: "root-index",
      tags: ["operations"],
      summary: "Where to go next: a browser is redirected to /dashboard, an API client gets this index",
      responses: {
        200: { description: "The index (when `Accept` does not name text/html)", content: { "application/json": { schema: rootIndex } } },
        302: {
          description: "A browser (`Accept: text/html`) is sent to the merchant's dashboard",
          headers: { location: { schema: { type: "string" } } },
        },
      },
    },
  },
};
