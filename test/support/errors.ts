/**
 * Errors in tests: the gateway's HTTP error answer (contract: `{ statusCode, code, error, message,
 * requestId }`, JSON) and the error a promise rejects with.
 */
import { expect } from "bun:test";

/**
 * Asserts that `response` is the gateway's error answer with `status` and `code` (and `message`, when
 * given): JSON, the status repeated as `statusCode`, an `error` text, the `requestId` of the
 * `x-request-id` header. Returns the body.
 *
 * @example
 * ```ts
 * await expectError(await tg.request("/auth/whoami"), 401, "unauthorized");
 * ```
 */
export async function expectError(response: Response, status: number, code: string, message?: string): Promise<Record<string, unknown>> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toContain("application/json");
  const body = (await response.json()) as Record<string, unknown>;
  expect(body.statusCode).toBe(status);
  expect(body.code).toBe(code);
  expect(body.requestId).toBe(response.headers.get("x-request-id")!);
  expect(typeof body.error).toBe("string");
  if (message !== undefined) expect(body.message).toBe(message);
  return body;
}

/**
 * The error `promise` rejects with; throws if it resolves or is still pending after `ms`. Used instead
 * of `expect(promise).rejects`, which in Bun 1.4.5 hangs the whole run (no test timeout) when the
 * promise never settles.
 */
export async function rejectionOf(promise: Promise<unknown>, ms = 2000): Promise<unknown> {
  const pending = Symbol("pending");
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<typeof pending>((resolve) => {
    timer = setTimeout(() => resolve(pending), ms);
  });
  try {
    const outcome = await Promise.race([
      promise.then(
        () => "resolved" as const,
        (error: unknown) => ({ error }),
      ),
      timeout,
    ]);
    if (outcome === pending) throw new Error(`still pending after ${ms} ms; expected a rejection`);
    if (outcome === "resolved") throw new Error("resolved; expected a rejection");
    return outcome.error;
  } finally {
    clearTimeout(timer);
  }
}
