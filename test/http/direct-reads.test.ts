/**
 * The hot reads (`GET /auth/whoami`, `GET /providerA/transaction/{id}/is-approved` and `…/status`) are called
 * without tRPC's middleware chain (`meta.directRead`, src/routers/direct-call.ts). Two apps over one gateway's
 * dependencies answer the same requests, one directly and one through tRPC (`directReads: false`): every answer —
 * success and each error, by every way of authenticating — must have the same status, headers and body, the same
 * request log line and the same HTTP metrics, and the direct answers must match the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHttpApp, type HttpApp } from "../../src/http/app.ts";
import { createMetrics, type GatewayMetrics } from "../../src/http/metrics.ts";
import { mintToken } from "../../src/mod.ts";
import { DIRECT_PAYMENT } from "../../bench/scenarios.ts";
import { validateGatewayResponse } from "../support/openapi-validation.ts";
import { cookieOf, linkTokenTo } from "../support/people.ts";
import { startProviderARig, type ProviderARig } from "../support/provider-a-rig.ts";
import { startSmtpSink, type SmtpSink } from "../support/smtp-sink.ts";
import { waitUntil } from "../support/wait.ts";

let rig: ProviderARig;
let sink: SmtpSink;
let direct: HttpApp;
let viaTrpc: HttpApp;
let directMetrics: GatewayMetrics;
let trpcMetrics: GatewayMetrics;
let admin: string;
let tenantA: string;
let tokenA: string;
let secretA: string;
let approved: number;
let pending: number;
let cookie: string;
let sequence = 0;

type Headers = Record<string, string>;

/** The same request to both apps (one request id), the direct one first. */
async function both(path: string, headers: Headers = {}): Promise<[Response, Response]> {
  const requestId = `same-${++sequence}`;
  const init = () => ({ headers: { ...headers, "x-request-id": requestId } });
  const a = await direct.fetch(new Request(`http://localhost${path}`, init()));
  const b = await viaTrpc.fetch(new Request(`http://localhost${path}`, init()));
  return [a, b];
}

interface Compare {
  /** Compare RateLimit's counts too (else left out: the second call is counted after the first). */
  exactCounts?: boolean;
  /** An answer the OpenAPI document does not list (found here; the same both ways). */
  undocumented?: boolean;
  /** The body holds `expiresAt` of a token minted now (an API key as the bearer): compared without it. */
  mintedNow?: boolean;
}

/** Status, headers and body, as compared. */
async function answer(response: Response, compare: Compare) {
  const headers = [...response.headers]
    .map(([name, value]) => [name, name === "ratelimit" && !compare.exactCounts ? value.replace(/r=\d+;t=\d+/, "r=…;t=…") : value])
    .sort(([x], [y]) => x!.localeCompare(y!));
  const body = await response.text();
  return { status: response.status, headers, body: compare.mintedNow ? body.replace(/"expiresAt":"[^"]+"/, '"expiresAt":"…"') : body };
}

/** The request log lines of one request id, without their timings. */
const requestLines = (requestId: string) =>
  rig.tg.logs.filter((line) => line.msg === "request" && line.requestId === requestId).map(({ time, durationMs, ...line }) => line);

/** `passerelle_http_requests_total` by route and status. */
async function requestCounts(metrics: GatewayMetrics): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const line of (await metrics.registry.metrics()).split("\n")) {
    const match = /^passerelle_http_requests_total\{method="GET",route="([^"]+)",status="(\d+)"\} (\d+)$/.exec(line);
    if (match) counts.set(`${match[1]} ${match[2]}`, Number(match[3]));
  }
  return counts;
}

/** Calls both ways and expects one answer, one log line each and one count each; returns the direct answer. */
async function expectSame(path: string, headers: Headers = {}, compare: Compare = {}) {
  const before = [await requestCounts(directMetrics), await requestCounts(trpcMetrics)];
  const [a, b] = await both(path, headers);
  if (!compare.undocumented) await validateGatewayResponse("GET", `http://localhost${path}`, a);
  const [left, right] = [await answer(a, compare), await answer(b, compare)];
  expect({ path, ...left }).toEqual({ path, ...right });
  const lines = requestLines(`same-${sequence}`);
  expect(lines).toHaveLength(2);
  expect(lines[0]).toEqual(lines[1]!);
  const after = [await requestCounts(directMetrics), await requestCounts(trpcMetrics)];
  const last = path.split("?")[0]!.split("/").at(-1);
  const route = last === "whoami" ? "/auth/whoami" : `/providerA/transaction/{transaction_id}/${last}`;
  const key = `${route} ${left.status}`;
  expect([after[0]!.get(key)! - (before[0]!.get(key) ?? 0), after[1]!.get(key)! - (before[1]!.get(key) ?? 0)]).toEqual([1, 1]);
  return { ...left, json: JSON.parse(left.body) as Record<string, unknown> };
}

const bearer = (token: string): Headers => ({ authorization: `Bearer ${token}` });

async function call(method: string, path: string, token: string | undefined, body?: unknown): Promise<Record<string, unknown>> {
  const response = await rig.tg.request(path, {
    method,
    headers: { ...(token ? bearer(token) : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  expect(response.status === 200 ? "ok" : `${response.status} ${await response.text()}`).toBe("ok");
  return (await response.json()) as Record<string, unknown>;
}

async function newTenant(name: string): Promise<{ id: string; key: { id: string; secret: string }; token: string }> {
  const created = (await call("POST", "/tenants", admin, { name, storeName: `${name} store` })) as {
    tenant: { id: string };
    apiKey: { id: string; secret: string };
  };
  const token = (
    await call("POST", "/auth/token", undefined, { grant_type: "client_credentials", client_id: created.apiKey.id, client_secret: created.apiKey.secret })
  ).access_token as string;
  return { id: created.tenant.id, key: created.apiKey, token };
}

beforeAll(async () => {
  sink = await startSmtpSink();
  rig = await startProviderARig({ env: { SMTP_URL: sink.url, SIGN_IN_ADDRESS_LIMIT: "1000" } });
  const { tg } = rig;
  const options = { deps: tg.gateway.deps, router: tg.gateway.router, openapi: {} as never, readiness: {} };
  direct = createHttpApp({ ...options, metrics: (directMetrics = createMetrics()) });
  viaTrpc = createHttpApp({ ...options, metrics: (trpcMetrics = createMetrics()), directReads: false });
  admin = await tg.adminToken();
  const a = await newTenant("Boutique Awa");
  [tenantA, tokenA, secretA] = [a.id, a.token, a.key.secret];
  // 500 XOF is approved by the simulator within a moment; 2000 stays pending until its console settles it.
  approved = (await call("POST", "/providerA/direct-payment", tokenA, DIRECT_PAYMENT)).transactionId as number;
  pending = (await call("POST", "/providerA/direct-payment", tokenA, { ...DIRECT_PAYMENT, amount: 2000 })).transactionId as number;
  await waitUntil(async () => (await call("GET", `/providerA/transaction/${approved}/is-approved`, tokenA)).approved === true, {
    what: "the 500 XOF payment approved",
    timeoutMs: 20_000,
  });
  // A person of the shop, signed in: the dashboard's session cookie.
  await call("POST", `/tenants/${tenantA}/invitations`, admin, { email: "owner@awa.example", role: "owner" });
  const invitation = await linkTokenTo(sink, "owner@awa.example", "invitation");
  await call("POST", "/people/invitations/accept", undefined, { token: invitation, password: "baobab sous la pluie" });
  const signIn = await tg.request("/people/sign-in", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "owner@awa.example", password: "baobab sous la pluie" }),
  });
  expect(signIn.status).toBe(200);
  cookie = cookieOf(signIn);
}, 90_000);

afterAll(async () => {
  await rig?.close();
  await sink?.close();
}, 30_000);

describe("GET /auth/whoami, directly and through tRPC", () => {
  it("answers every way of authenticating alike", async () => {
    expect((await expectSame("/auth/whoami", bearer(admin))).json).toMatchObject({ role: "admin", sub: "operator" });
    expect((await expectSame("/auth/whoami", bearer(tokenA))).json).toMatchObject({ role: "tenant", tenantId: tenantA });
    // Twice: the second answer is the view validated and serialized the first time.
    await expectSame("/auth/whoami", bearer(tokenA));
    expect((await expectSame("/auth/whoami", bearer(secretA), { mintedNow: true })).json).toMatchObject({ role: "tenant", tenantId: tenantA });
    expect((await expectSame("/auth/whoami", { cookie })).json).toMatchObject({ role: "tenant", tenantId: tenantA });
    await expectSame("/auth/whoami?unused=1", bearer(admin));
  });

  it("refuses alike: no credentials, another scheme, a forged, expired or revoked token, an API key that is not one, hostile text", async () => {
    const config = rig.tg.config;
    const cases: [Headers, number, string?][] = [
      [{}, 401],
      [{ authorization: "Basic b3BlcmF0b3I6cGFzcw==" }, 401],
      [bearer("not.a.token"), 401],
      [bearer(await mintToken({ ...config.jwt, secret: "another-secret-another-secret-another-0123" }, { sub: "x", role: "admin" })), 401],
      [bearer(await mintToken(config.jwt, { sub: "x", role: "admin", now: new Date(Date.now() - 7_200_000), ttlSeconds: 60 })), 401],
      [bearer(`${secretA.slice(0, -4)}AAAA`), 401],
      [{ cookie: "passerelle_session=pss_none" }, 401],
    ];
    for (const [headers, status] of cases) expect({ headers, status: (await expectSame("/auth/whoami", headers)).status }).toEqual({ headers, status });
    // 400 is missing from the document's whoami (it has no input); the same answer both ways.
    expect((await expectSame("/auth/whoami?note=a%00b", bearer(admin), { undocumented: true })).status).toBe(400);
    const revoked = await newTenant("Revoked key");
    const keys = (await call("GET", `/tenants/${revoked.id}/api-keys`, admin)) as { data: { id: string }[] };
    const deleted = await rig.tg.request(`/tenants/${revoked.id}/api-keys/${keys.data[0]!.id}`, { method: "DELETE", headers: bearer(admin) });
    expect(deleted.status).toBeLessThan(300);
    expect((await expectSame("/auth/whoami", bearer(revoked.token))).json).toMatchObject({
      statusCode: 401,
      message: "The API key behind this token has been revoked",
    });
  });
});

for (const read of ["is-approved", "status"] as const) {
  describe(`GET /providerA/transaction/{id}/${read}, directly and through tRPC`, () => {
    const path = (id: number | string) => `/providerA/transaction/${id}/${read}`;

    it("answers a final and a pending transaction alike, with a token, an API key, an admin token or the session cookie", async () => {
      expect((await expectSame(path(approved), bearer(tokenA))).json).toMatchObject({ transactionId: approved, approved: true, status: "approved" });
      await expectSame(path(approved), bearer(tokenA)); // the cached view, validated once
      expect((await expectSame(path(pending), bearer(tokenA))).json).toMatchObject({ transactionId: pending, approved: false, status: "pending" });
      await expectSame(path(approved), bearer(secretA));
      await expectSame(path(approved), { ...bearer(admin), "x-tenant-id": tenantA });
      await expectSame(path(approved), { ...bearer(tokenA), "x-tenant-id": tenantA });
      const bySession = await expectSame(path(approved), { cookie });
      expect([bySession.status, bySession.headers.some(([name]) => name === "ratelimit")]).toEqual([200, true]);
    });

    it("refuses alike: 400, 401, 403, 404 and the wrong environment", async () => {
      const other = await newTenant("Chez Kofi");
      const disabled = await rig.tg.insertTenant({ disabled: true });
      const cases: [string, Headers, number][] = [
        [path(approved), {}, 401],
        [path(approved), bearer("not.a.token"), 401],
        [path(approved), { ...bearer(tokenA), "x-tenant-id": other.id }, 403],
        [path(approved), bearer(await rig.tg.tenantToken(disabled)), 403],
        [path(approved), bearer(other.token), 404],
        [path(987654), bearer(tokenA), 404],
        [path(approved), bearer(admin), 400],
        [path(approved), { ...bearer(admin), "x-tenant-id": tenantA, "x-environment": "live" }, 404],
        [path(approved), { ...bearer(admin), "x-tenant-id": tenantA, "x-environment": "prod" }, 400],
        [path(approved), bearer(await rig.tg.tenantToken(tenantA, "live")), 404],
        [path(approved), { cookie, "x-environment": "live" }, 404],
        [path("abc"), bearer(tokenA), 400],
        [path(0), bearer(tokenA), 400],
        [path("1.5"), bearer(tokenA), 400],
        [path("99999999999999999999"), bearer(tokenA), 400],
        [`${path(approved)}?note=%00`, bearer(tokenA), 400],
      ];
      for (const [where, headers, status] of cases) {
        const got = await expectSame(where, headers);
        expect({ where, headers, status: got.status }).toEqual({ where, headers, status });
      }
    });

    it("answers 429 alike once the tenant's budget is spent, RateLimit counts included", async () => {
      const limited = await newTenant(`Limited ${read}`);
      const patched = await rig.tg.request(`/tenants/${limited.id}`, {
        method: "PATCH",
        headers: { ...bearer(admin), "content-type": "application/json" },
        body: JSON.stringify({ rateLimit: { rps: 1, burst: 1 } }),
      });
      expect(patched.status).toBe(200);
      // The bucket holds one token and earns one a second: spent, both answers are 429 — unless the machine paused
      // for a second between the two calls, in which case the pair is made again.
      const pairs: number[][] = [];
      for (let attempt = 0; attempt < 5; attempt++) {
        const [a, b] = await both(path(987654), bearer(limited.token));
        pairs.push([a.status, b.status]);
        if (a.status !== 429 || b.status !== 429) continue;
        const [left, right] = [await answer(a, { exactCounts: true }), await answer(b, { exactCounts: true })];
        expect(left).toEqual(right);
        expect(left.headers).toContainEqual(["retry-after", "1"]);
        expect(JSON.parse(left.body)).toMatchObject({ statusCode: 429, code: "rate_limited" });
        return;
      }
      throw new Error(`never two 429s in a row: ${JSON.stringify(pairs)}`);
    });
  });
}
