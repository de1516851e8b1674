/**
 * JSON responses, built the same way everywhere (the REST bridge, Elysia's error hook, plain routes).
 */
import type { MappedError } from "./error-body.ts";

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
