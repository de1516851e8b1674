/**
 * CORS for browsers on the origins the operator lists in `CORS_ORIGINS` (none by default): the answer to a
 * preflight `OPTIONS`, and the headers an actual response to an allowed origin carries (Fetch standard,
 * "CORS protocol"). An origin not listed gets no CORS header at all, so its browser keeps the response
 * from the page; a call without a browser (curl, a server) is not affected either way.
 *
 * Credentials mode is never allowed (no `Access-Control-Allow-Credentials`): the API authenticates with a
 * bearer token the page sends itself, never with a cookie.
 *
 * @module
 */
import { RATE_LIMIT_HEADERS } from "./ratelimit-headers.ts";

/** Request headers a page may send: the API's own (contract §2, §9) and tRPC's. */
export const CORS_ALLOWED_HEADERS = ["authorization", "content-type", "idempotency-key", "x-tenant-id", "x-environment", "x-request-id", "trpc-accept"];

/** Response headers a page may read beyond the CORS-safelisted ones. */
export const CORS_EXPOSED_HEADERS = ["x-request-id", "idempotent-replayed", ...RATE_LIMIT_HEADERS, "retry-after"];

/** How long a browser may keep a preflight's answer, in seconds: a changed `CORS_ORIGINS` reaches pages within it. */
export const CORS_MAX_AGE_SECONDS = 600;

/** The methods of a route, by path pattern (`/webhooks/{webhook_id}`, `/trpc/*`). */
export interface RouteMethods {
  method: string;
  path: string;
}

/** See {@link createCors}. */
export interface Cors {
  /**
   * The answer to an `OPTIONS` request: 204 with `Allow` (and, for an allowed origin asking a preflight,
   * the `Access-Control-Allow-*` headers), or undefined when no route has that path (the caller answers 404).
   */
  preflight(request: Request): Response | undefined;
  /** Adds the CORS headers of an actual response (`Vary: Origin` when any origin is configured). */
  decorate(request: Request, response: Response): void;
}

type Matcher = (segments: string[]) => boolean;

function matcherFor(pattern: string): Matcher {
  const parts = pattern.split("/").slice(1);
  const rest = parts[parts.length - 1] === "*";
  if (rest) parts.pop();
  return (segments) => {
    if (rest ? segments.length <= parts.length : segments.length !== parts.length) return false;
    return parts.every((part, i) => (part.startsWith("{") || part.startsWith(":") ? segments[i]!.length > 0 : part === segments[i]));
  };
}

/**
 * Builds the CORS answers for `origins` (already normalised by `config.ts`: `scheme://host[:port]`, lower
 * case) over the gateway's `routes`.
 *
 * @example
 * ```ts
 * const cors = createCors(["https://dashboard.example.com"], [{ method: "GET", path: "/webhooks" }]);
 * cors.preflight(new Request("http://api/webhooks", { method: "OPTIONS" })); // 204, Allow: GET, OPTIONS
 * ```
 */
export function createCors(origins: readonly string[], routes: readonly RouteMethods[]): Cors {
  const allowed = new Set(origins);
  const matchers = routes.map((route) => ({ method: route.method.toUpperCase(), matches: matcherFor(route.path) }));

  function methodsOf(url: string): string[] {
    const segments = new URL(url).pathname.split("/").slice(1);
    const methods = new Set<string>();
    for (const route of matchers) if (route.matches(segments)) methods.add(route.method);
    if (methods.size === 0) return [];
    return [...methods, "OPTIONS"];
  }

  const allowedOrigin = (request: Request): string | undefined => {
    if (allowed.size === 0) return undefined;
    const origin = request.headers.get("origin");
    return origin !== null && allowed.has(origin) ? origin : undefined;
  };

  return {
    preflight(request) {
      const methods = methodsOf(request.url);
      if (methods.length === 0) return undefined;
      const headers = new Headers({ allow: methods.join(", ") });
      if (allowed.size > 0) headers.set("vary", "Origin");
      const origin = allowedOrigin(request);
      if (origin !== undefined && request.headers.has("access-control-request-method")) {
        headers.set("access-control-allow-origin", origin);
        headers.set("access-control-allow-methods", methods.join(", "));
        headers.set("access-control-allow-headers", CORS_ALLOWED_HEADERS.join(", "));
        headers.set("access-control-max-age", String(CORS_MAX_AGE_SECONDS));
      }
      return new Response(null, { status: 204, headers });
    },

    decorate(request, response) {
      if (allowed.size === 0) return;
      response.headers.append("vary", "Origin");
      const origin = allowedOrigin(request);
      if (origin === undefined) return;
      response.headers.set("access-control-allow-origin", origin);
      response.headers.set("access-control-expose-headers", CORS_EXPOSED_HEADERS.join(", "));
    },
  };
}
