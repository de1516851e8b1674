/**
 * Tenant and environment isolation, asserted the same way for every endpoint that addresses one object
 * (contract §2: "an object of another tenant addressed by id is 404"; §1: never reveal that it exists).
 *
 * @example
 * ```ts
 * await expectIsolated(tg, {
 *   owner: tenantA,
 *   other: tenantB,
 *   environment: "sandbox",
 *   requests: [
 *     { path: `/payments/${paymentId}` },
 *     { method: "PATCH", path: `/webhooks/${webhookId}`, body: { enabled: false } },
 *     { method: "DELETE", path: `/webhooks/${webhookId}` },
 *   ],
 *   object: paymentAsSeenByA,           // none of its values may appear in a refusal
 *   readBack: `/payments/${paymentId}`, // read as A before and after: nothing changed
 * });
 * ```
 */
import { expect } from "bun:test";
import type { TestGateway } from "./gateway.ts";

type Environment = "sandbox" | "live";

/** One way of addressing the owner's object. */
export interface IsolationRequest {
  /** Default GET. */
  method?: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Path and query, e.g. `/payments/pay_…`. */
  path: string;
  /** A JSON body, sent as `application/json` (for POST, PUT, PATCH). */
  body?: unknown;
  /** Extra headers (e.g. `idempotency-key`); the helper's own auth and tenant headers win. */
  headers?: Record<string, string>;
}

export interface IsolationCase {
  /** Tenant A: the object's owner. Make it `liveEnabled` so a live token of A is a valid caller. */
  owner: string;
  /** Tenant B: another tenant, which must not see or touch A's object. */
  other: string;
  /** The environment A made the object in; the other one is tried too. */
  environment: Environment;
  /** Every URL (and method) that addresses the object. */
  requests: IsolationRequest[];
  /**
   * A's object as the API shows it to A: no refusal may carry one of its string values (other than what
   * the request path itself holds) or one of its field names.
   */
  object?: Record<string, unknown>;
  /** A GET path read with A's token before and after the attempts: its answer must not change. */
  readBack?: string;
}

/** Keys of the contract's error body (§1); a refusal carries nothing else. */
const ERROR_KEYS = new Set(["statusCode", "message", "error", "code", "requestId", "providerErrors", "providerResponseCode"]);

/**
 * Asserts, for every request of `isolation`:
 * 1. tenant B's token → 404 `not_found`, with nothing of A's object in the body;
 * 2. tenant B's token with `x-tenant-id: A` → 403 `tenant_mismatch`;
 * 3. A's token in the other environment → 404;
 * 4. an admin token with `x-tenant-id: B` (in A's environment) → 404;
 * 5. an admin token with `x-tenant-id: A` and `x-environment` the other one → 404;
 * and, with `readBack`, that A still reads the object unchanged afterwards.
 */
export async function expectIsolated(tg: TestGateway, isolation: IsolationCase): Promise<void> {
  const { owner, other, environment } = isolation;
  const otherEnvironment: Environment = environment === "sandbox" ? "live" : "sandbox";
  const [ownerToken, otherToken, ownerOtherEnvToken, adminToken] = await Promise.all([
    tg.tenantToken(owner, environment),
    tg.tenantToken(other, environment),
    tg.tenantToken(owner, otherEnvironment),
    tg.adminToken(environment),
  ]);
  const readBack = async () => {
    const response = await tg.request(isolation.readBack!, { headers: { authorization: `Bearer ${ownerToken}` } });
    expect(response.status, `A reads ${isolation.readBack}`).toBe(200);
    return response.json();
  };
  const before = isolation.readBack ? await readBack() : undefined;

  const attempts: { who: string; token: string; headers: Record<string, string>; status: number; code: string }[] = [
    { who: "tenant B", token: otherToken, headers: {}, status: 404, code: "not_found" },
    { who: "tenant B naming A in x-tenant-id", token: otherToken, headers: { "x-tenant-id": owner }, status: 403, code: "tenant_mismatch" },
    { who: `tenant A in ${otherEnvironment}`, token: ownerOtherEnvToken, headers: {}, status: 404, code: "not_found" },
    { who: "an admin acting for B", token: adminToken, headers: { "x-tenant-id": other }, status: 404, code: "not_found" },
    {
      who: `an admin acting for A in ${otherEnvironment}`,
      token: adminToken,
      headers: { "x-tenant-id": owner, "x-environment": otherEnvironment },
      status: 404,
      code: "not_found",
    },
  ];

  for (const request of isolation.requests) {
    const method = request.method ?? "GET";
    for (const attempt of attempts) {
      const headers: Record<string, string> = { ...request.headers, ...attempt.headers, authorization: `Bearer ${attempt.token}` };
      const init: RequestInit = { method, headers };
      if (request.body !== undefined) {
        headers["content-type"] = "application/json";
        init.body = JSON.stringify(request.body);
      }
      const response = await tg.request(request.path, init);
      const label = `${method} ${request.path} as ${attempt.who}`;
      const text = await response.text();
      expect(response.status, `${label}: ${text}`).toBe(attempt.status);
      const body = JSON.parse(text) as Record<string, unknown>;
      expect(body.code, label).toBe(attempt.code);
      expectNothingOf(isolation.object, body, request.path, label);
    }
  }

  if (isolation.readBack) expect(await readBack(), `A's ${isolation.readBack} after the attempts`).toEqual(before);
}

/** The body is an error body and carries no field name or distinctive value of the object. */
function expectNothingOf(object: Record<string, unknown> | undefined, body: Record<string, unknown>, path: string, label: string): void {
  for (const key of Object.keys(body)) expect(ERROR_KEYS.has(key), `${label}: unexpected field ${key}`).toBe(true);
  if (!object) return;
  const text = JSON.stringify(body);
  const decodedPath = decodeURIComponent(path);
  for (const value of leafValues(object)) {
    // Short values ("XOF", 500) could appear by chance; what the caller already sent is no leak.
    if (value.length < 6 || decodedPath.includes(value)) continue;
    expect(text.includes(value), `${label}: the body reveals ${JSON.stringify(value)}`).toBe(false);
  }
}

function leafValues(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (typeof value === "number") return [String(value)];
  if (Array.isArray(value)) return value.flatMap(leafValues);
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(leafValues);
  return [];
}
