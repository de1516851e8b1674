/**
 * The request id: the caller's `x-request-id` when it is sane, a fresh one otherwise. Every response
 * carries it, every error body names it, every log line of the request has it.
 */
const SANE = /^[A-Za-z0-9._:-]{1,128}$/;

/** The id for this request. */
export function requestIdFor(request: Request): string {
  const given = request.headers.get("x-request-id");
  return given && SANE.test(given) ? given : crypto.randomUUID();
}
