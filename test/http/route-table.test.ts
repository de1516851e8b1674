/**
 * The REST lookup ahead of Elysia (src/http/route-table.ts): it must pick the route Elysia would pick, or
 * step aside. Unit rules first, then the whole gateway answering the same requests with and without it.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHttpApp, type HttpApp } from "../../src/http/app.ts";
import { createMetrics } from "../../src/http/metrics.ts";
import { createRouteTable, MATCH_MEMO_MAX_PATH, MATCH_MEMO_SIZE, type RouteHandler } from "../../src/http/route-table.ts";
import { appRouter } from "../../src/routers/app.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

const named = (name: string): RouteHandler => Object.assign(async () => new Response(name), { routeName: name });
const nameOf = (found: { handler: RouteHandler } | undefined) => (found ? (found.handler as unknown as { routeName: string }).routeName : undefined);
const url = (path: string) => `http://localhost:3000${path}`;

describe("the route table", () => {
  const table = createRouteTable();
  table.add("GET", "/webhooks/{webhook_id}", named("webhook"));
  table.add("POST", "/webhooks/{webhook_id}/replay", named("replay"));
  table.add("POST", "/webhooks/deliveries/{delivery_id}/retry", named("retry"));
  table.add("GET", "/payments/{payment_id}", named("payment"));
  table.add("GET", "/payments/{payment_id}/deliveries", named("deliveries"));
  table.add("GET", "/payments/export", null); // a route only Elysia answers
  table.add("POST", "/providerA/webhook/{environment}", null);
  table.reservePrefix("/trpc/");

  it("matches static segments before parameters, backtracking like Elysia, per method", () => {
    expect(nameOf(table.match("POST", url("/webhooks/deliveries/d1/retry")))).toBe("retry");
    expect(nameOf(table.match("POST", url("/webhooks/deliveries/replay")))).toBe("replay"); // `deliveries` as a webhook id
    expect(nameOf(table.match("GET", url("/webhooks/deliveries")))).toBe("webhook");
    expect(table.match("GET", url("/payments/p1?expand=1"))).toEqual({
      handler: expect.any(Function),
      params: { payment_id: "p1" },
      route: "/payments/{payment_id}",
    });
    expect(table.match("GET", url("/payments/p1/deliveries"))?.params).toEqual({ payment_id: "p1" });
    expect(table.match("DELETE", url("/payments/p1"))).toBeUndefined();
    expect(table.match("GET", url("/Payments/p1"))).toBeUndefined(); // case-sensitive, as Elysia
  });

  it("leaves to Elysia what another route answers, and every path that is not plain", () => {
    expect(table.match("GET", url("/payments/export"))).toBeUndefined();
    expect(table.match("POST", url("/providerA/webhook/sandbox"))).toBeUndefined();
    expect(table.match("GET", url("/trpc/payments.get"))).toBeUndefined();
    for (const path of ["/payments/p%31", "/payments/p1/", "/payments//p1", "/payments/./p1", "/payments/../payments/p1", "/payments/"])
      expect(table.match("GET", url(path))).toBeUndefined();
  });

  it("answers a route without parameters exactly, and a static route wins over a parameter at its level", () => {
    const mixed = createRouteTable();
    mixed.add("GET", "/auth/whoami", named("whoami"));
    mixed.add("GET", "/auth/{thing}", named("thing"));
    mixed.add("GET", "/reports/summary", named("summary"));
    mixed.add("GET", "/reports/summary", named("again")); // the same route twice: Elysia decides
    expect(mixed.match("GET", url("/auth/whoami"))).toEqual({ handler: expect.any(Function), params: {}, route: "/auth/whoami" });
    expect(nameOf(mixed.match("GET", url("/auth/whoami")))).toBe("whoami");
    expect(mixed.match("GET", url("/auth/other"))?.params).toEqual({ thing: "other" });
    expect(mixed.match("POST", url("/auth/whoami"))).toBeUndefined();
    expect(mixed.match("GET", url("/reports/summary"))).toBeUndefined();
    const onlyStatic = createRouteTable();
    onlyStatic.add("GET", "/auth/whoami", named("whoami"));
    expect(onlyStatic.match("GET", url("/auth/who"))).toBeUndefined();
    expect(nameOf(onlyStatic.match("GET", url("/auth/whoami?x=1")))).toBe("whoami");
  });

  it("answers a path with parameters it matched before from memory, the same match, and long paths still by the tree", () => {
    const first = table.match("GET", url("/payments/p7/deliveries"));
    expect(first?.params).toEqual({ payment_id: "p7" });
    expect(table.match("GET", url("/payments/p7/deliveries?cursor=x"))).toBe(first!);
    expect(table.match("POST", url("/payments/p7/deliveries"))).toBeUndefined();
    const long = `p${"x".repeat(MATCH_MEMO_MAX_PATH)}`;
    expect(table.match("GET", url(`/payments/${long}`))?.params).toEqual({ payment_id: long });
    for (let i = 0; i <= MATCH_MEMO_SIZE; i++) expect(table.match("GET", url(`/payments/p${i}`))?.params).toEqual({ payment_id: `p${i}` });
    expect(nameOf(table.match("GET", url("/payments/p7/deliveries")))).toBe("deliveries");
  });

  it("steps aside where two routes name one parameter level differently", () => {
    const ambiguous = createRouteTable();
    ambiguous.add("GET", "/a/{x}", named("x"));
    ambiguous.add("GET", "/a/{y}/b", named("y"));
    expect(ambiguous.match("GET", url("/a/1"))).toBeUndefined();
    expect(ambiguous.match("GET", url("/a/1/b"))).toBeUndefined();
  });
});

describe("the gateway with and without the lookup", () => {
  let tg: TestGateway;
  let fast: HttpApp;
  let viaElysia: HttpApp;
  let admin: string;
  let tenant: string;

  beforeAll(async () => {
    tg = await startTestGateway();
    const options = { deps: tg.gateway.deps, router: appRouter, openapi: {} as never, readiness: {} };
    fast = createHttpApp({ ...options, metrics: createMetrics() });
    viaElysia = createHttpApp({ ...options, metrics: createMetrics(), fastRestRoutes: false });
    admin = await tg.adminToken();
    tenant = await tg.tenantToken(await tg.insertTenant());
  }, 60_000);
  afterAll(() => tg.close(), 30_000);

  it("answers every request the same", async () => {
    const requests: [string, string, string | undefined, string?][] = [
      ["GET", "/auth/whoami", admin],
      ["GET", "/auth/whoami", undefined],
      ["GET", "/payments?limit=2", tenant],
      ["GET", "/payments/pay_01JD3Z6Q5W8B8Y4G1M7T2N9XKC", tenant],
      ["GET", "/payments/pay_01JD3Z6Q5W8B8Y4G1M7T2N9XKC/", tenant],
      ["GET", "/payments/pay%5Fnope", tenant],
      ["GET", "/providerA/transaction/412/is-approved", tenant],
      ["GET", "/providerA/transaction/abc/status", tenant],
      ["POST", "/webhooks/deliveries/del_1/retry", tenant],
      ["GET", "/webhooks/deliveries", tenant],
      ["POST", "/providerA/direct-payment", tenant, "{"],
      ["DELETE", "/auth/whoami", admin],
      ["GET", "/nowhere", admin],
      ["GET", "/health/live", undefined],
    ];
    for (const [method, path, token, body] of requests) {
      const init = (): RequestInit => ({
        method,
        headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), "x-request-id": "same-id", ...(body ? { "content-type": "application/json" } : {}) },
        ...(body ? { body } : {}),
      });
      const [a, b] = [await fast.fetch(new Request(`http://localhost${path}`, init())), await viaElysia.fetch(new Request(`http://localhost${path}`, init()))];
      expect({ path, method, status: a.status, body: await a.text() }).toEqual({ path, method, status: b.status, body: await b.text() });
      expect(a.headers.get("content-type")).toBe(b.headers.get("content-type"));
    }
  });
});
