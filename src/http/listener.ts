/**
 * How the gateway listens: `Bun.serve` options that let requests Bun's HTTP server would refuse on its own —
 * with a bare status line and no body — reach the gateway's `fetch`, which answers them in the contract's
 * shape:
 *
 * - a head over 16 KiB (431): Bun's parser limit, process-wide (`node:http`'s `maxHeaderSize`, the
 *   `--max-http-header-size` flag), is raised to {@link PARSER_MAX_HEADER_BYTES}; `header-limit.ts` holds
 *   the gateway's own;
 * - a body declared over 128 MiB (Bun's `maxRequestBodySize`, 413): the option is lifted, so every declared
 *   size reaches `body-limit.ts`, which refuses anything over 64 KiB before reading it, and reads a body of
 *   unknown length no further than that;
 * - an exception Bun would answer with its own `text/plain` 500 (`error`).
 *
 * What Bun's parser still answers itself: a head over {@link PARSER_MAX_HEADER_BYTES}, and a request it
 * cannot parse at all — a control character in a header, a malformed request line or `Content-Length` (400).
 * `Bun.serve` has no hook for those (Bun 1.4.5); only its `node:http` server emits them (`clientError`).
 *
 * @module
 */
import http from "node:http";
import type { Logger } from "pino";
import { mapError } from "../map-error.ts";
import { PARSER_MAX_HEADER_BYTES } from "./header-limit.ts";
import { type AddressSource, trustingSource, trustProxies } from "./client-address.ts";
import { errorResponse } from "./responses.ts";

/** What {@link listenerOptions} adds to the caller's `Bun.serve` options. */
export interface ListenerOptions {
  fetch: (request: Request, server: AddressSource) => Response | Promise<Response>;
  maxRequestBodySize: number;
  error: (error: Error) => Response;
}

/**
 * Raises Bun's header limit for the process (never lowers it: an embedding program may have raised it
 * further) and returns the options to serve `fetch` with.
 *
 * @example
 * ```ts
 * Bun.serve({ port: 3000, hostname: "0.0.0.0", ...listenerOptions(http.serve, logger) });
 * ```
 */
export function listenerOptions(
  fetch: (request: Request, server: AddressSource) => Response | Promise<Response>,
  logger: Pick<Logger, "error">,
  trustedProxies: readonly string[] = [],
): ListenerOptions {
  const settings = http as unknown as { maxHeaderSize: number };
  if (settings.maxHeaderSize < PARSER_MAX_HEADER_BYTES) settings.maxHeaderSize = PARSER_MAX_HEADER_BYTES;
  const trust = trustedProxies.length > 0 ? trustProxies(trustedProxies) : undefined;
  return {
    // With the server, which knows the socket's address, for what limits callers per address (`client-address.ts`);
    // behind the gateway's own balancer, the client it names in `X-Forwarded-For`.
    fetch: trust ? (request, server) => fetch(request, trustingSource(server, trust)) : fetch,
    maxRequestBodySize: Number.MAX_SAFE_INTEGER,
    error(error) {
      // The gateway's `fetch` answers every error itself; this is what escapes it (a response body that fails midway).
      const requestId = crypto.randomUUID();
      logger.error({ err: error, requestId }, "unexpected error");
      const response = errorResponse(mapError(error, requestId));
      response.headers.set("x-request-id", requestId);
      return response;
    },
  };
}
