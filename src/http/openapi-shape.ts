/**
 * Finishing passes over the generated OpenAPI document that are about the document as a whole rather than
 * one procedure: the plain routes' common answers, URL formats, and the tag list.
 *
 * @module
 */
import type { OpenAPIObject } from "trpc-to-openapi";
import type { ZodOpenApiPathsObject } from "zod-openapi";
import { reasonPhrase } from "../map-error.ts";
import { headerRef } from "./openapi-headers.ts";
import { TAGS } from "./openapi-tags.ts";

interface ResponseObject {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, unknown>;
}

interface OperationObject {
  tags?: string[];
  description?: string;
  summary?: string;
  requestBody?: unknown;
  parameters?: { in?: string }[];
  responses?: Record<string, ResponseObject>;
}

/** `PUBLIC_BASE_URL`'s documented default (`http://localhost:$PORT`, `PORT` 3000): the committed document's server. */
export const DOCUMENTED_BASE_URL = "http://localhost:3000";

/** A status's reason phrase, for a response's description (431 is answered by the HTTP server, not mapped). */
export function statusDescription(status: number): string {
  return status === 431 ? "Request Header Fields Too Large" : reasonPhrase(status);
}

const ERROR_CONTENT = { "application/json": { schema: { $ref: "#/components/schemas/Error" } } };

/**
 * The plain routes (`/`, health, the providers' inbound routes): every answer carries `x-request-id` but a
 * 431 (request headers over the server's limit, answered before the gateway reads the request); an
 * inbound route (it takes a body) can also answer an unreadable body (400), a body over the limit (413),
 * an unknown environment or tenant in its path (404), a bug (500) and the database down (503).
 */
export function describePlainRoutes(document: OpenAPIObject, plainPaths: ZodOpenApiPathsObject): void {
  for (const path of Object.keys(plainPaths)) {
    const item = document.paths?.[path] as Record<string, OperationObject> | undefined;
    for (const operation of Object.values(item ?? {})) {
      if (!operation?.responses) continue;
      operation.description ??= operation.summary;
      const responses = operation.responses;
      responses["431"] ??= { description: statusDescription(431), content: ERROR_CONTENT };
      if (operation.requestBody) {
        const statuses = [400, 413, 500, 503];
        if (path.includes("{")) statuses.push(404);
        for (const status of statuses) responses[String(status)] ??= { description: statusDescription(status), content: ERROR_CONTENT };
      }
      for (const status of ["429", "503"])
        if (responses[status]) responses[status].headers = { "retry-after": headerRef("retry-after"), ...responses[status].headers };
      // A 401 goes through the one error mapping, which always sends the Bearer challenge.
      if (responses["401"]) responses["401"].headers = { "www-authenticate": headerRef("www-authenticate"), ...responses["401"].headers };
      for (const [status, response] of Object.entries(responses))
        if (status !== "431") response.headers = { "x-request-id": headerRef("x-request-id"), ...response.headers };
      operation.responses = Object.fromEntries(Object.entries(responses).sort(([a], [b]) => Number(a) - Number(b)));
    }
  }
}

/**
 * A string property named `url` or `…Url` / `…_url` is an absolute URL: `format: uri` (every one the
 * gateway takes is checked with `URL.canParse` and must be http(s); every one it answers was one of those,
 * or a provider's page).
 */
export function describeUrlFormats(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) describeUrlFormats(item);
    return;
  }
  if (!node || typeof node !== "object") return;
  const schema = node as Record<string, unknown>;
  const properties = schema.properties as Record<string, Record<string, unknown>> | undefined;
  if (properties && typeof properties === "object")
    for (const [name, property] of Object.entries(properties)) {
      const isString = property.type === "string" || (Array.isArray(property.type) && property.type.includes("string"));
      if (/(^url|Url|_url)$/.test(name) && isString && property.format === undefined) property.format = "uri";
    }
  for (const value of Object.values(schema)) describeUrlFormats(value);
}

/**
 * The document's tag list: every tag its operations use, in {@link TAGS}' order with its description; a tag
 * missing from TAGS comes last, undescribed (the linters then flag it).
 */
export function documentTags(document: OpenAPIObject): { name: string; description?: string }[] {
  const used = new Set<string>();
  for (const item of Object.values(document.paths ?? {}))
    for (const operation of Object.values(item as Record<string, OperationObject>)) for (const tag of operation?.tags ?? []) used.add(tag);
  const described = Object.entries(TAGS)
    .filter(([name]) => used.has(name))
    .map(([name, description]) => ({ name, description }));
  return [...described, ...[...used].filter((name) => !(name in TAGS)).map((name) => ({ name }))];
}

/**
 * The document's one server, the gateway's public address (`PUBLIC_BASE_URL`), with its scheme and host as
 * server variables whose defaults are that address: a generated client gets an absolute base URL, and
 * whoever runs another gateway sets its host without editing the document.
 *
 * @example
 * ```ts
 * serverOf("https://pay.acme.bj");
 * // { url: "{scheme}://{host}", variables: { scheme: { default: "https", … }, host: { default: "pay.acme.bj", … } }, … }
 * ```
 */
export function serverOf(baseUrl: string) {
  const url = new URL(baseUrl);
  const path = url.pathname.replace(/\/+$/, "");
  return {
    url: `{scheme}://{host}${path}`,
    description: "The gateway (its PUBLIC_BASE_URL)",
    variables: {
      scheme: { default: url.protocol.slice(0, -1), enum: ["https", "http"], description: "https in production" },
      host: { default: url.host, description: "The gateway's host name and port" },
    },
  };
}
