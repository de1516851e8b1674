/**
 * JSON responses, built the same way everywhere (the REST bridge, Elysia's error hook, plain routes).
 */
import { negotiatedBody } from "./compression.ts";
import type { MappedError } from "../map-error.ts";

const JSON_TYPE = "application/json";

/** A JSON response with the given status. */
export function jsonResponse(status: number, body: unknown, headers?: Record<string, string>): Response {
  const response = new Response(JSON.stringify(body), { status, headers: { "content-type": JSON_TYPE } });
  if (headers) for (const [name, value] of Object.entries(headers)) response.headers.set(name, value);
  return response;
}

/** The contract's error response for a mapped error. */
export function errorResponse(mapped: MappedError): Response {
  return jsonResponse(mapped.status, mapped.body, mapped.headers);
}

/**
 * A JSON response carrying the request's id and the headers a procedure added, built in one go (the
 * REST bridge's answers): the same headers, in the same order, as {@link jsonResponse} followed by the
 * `fetch` wrapper's `x-request-id` and `responseHeaders`, without re-opening the response's headers.
 * With `request`, a body of 1 KiB or more is compressed as its `Accept-Encoding` asks (`compression.ts`).
 */
export function stampedJsonResponse(
  status: number,
  body: unknown,
  requestId: string,
  responseHeaders: Record<string, string> | undefined,
  headers?: Record<string, string>,
  request?: Request,
): Response {
  return stampedJsonText(status, JSON.stringify(body), requestId, responseHeaders, headers, request);
}

/** {@link stampedJsonResponse} of a body already serialized (a direct read's cached JSON, `direct-call.ts`). */
export function stampedJsonText(
  status: number,
  text: string,
  requestId: string,
  responseHeaders: Record<string, string> | undefined,
  headers?: Record<string, string>,
  request?: Request,
): Response {
  const all: Record<string, string> = { "content-type": JSON_TYPE };
  if (headers) for (const name in headers) all[name.toLowerCase()] = headers[name]!;
  all["x-request-id"] = requestId;
  if (responseHeaders) for (const name in responseHeaders) all[name.toLowerCase()] = responseHeaders[name]!;
  return new Response(request ? negotiatedBody(request, text, all) : text, { status, headers: all });
}
