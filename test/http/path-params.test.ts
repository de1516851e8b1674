/**
 * Path parameters that cannot be text (src/http/path-params.ts): over real HTTP, every route with a path
 * parameter — the REST routes generated from the router, the providers' raw-body webhooks, the dashboard's
 * assets — answers a malformed escape, a lone surrogate's bytes and a NUL with 400 `validation_failed` in
 * the contract's shape naming the parameter, with and without a token: never a 500.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { DASHBOARD_ROUTES } from "../../src/http/dashboard-routes.ts";
import { createPathParamCheck } from "../../src/http/path-params.ts";
import { RAW_BODY_ROUTES } from "../../src/http/raw-body-routes.ts";
import { expectError } from "../support/errors.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";
import { routesWithInputs, takesBody } from "../support/route-inputs.ts";

/** A malformed escape, a lone surrogate (U+D800) in the WTF-8 form a URL can carry, and U+0000. */
const UNREADABLE = [
  { value: "%ZZ", rule: "is not valid percent-encoded UTF-8" },
  { value: "%ED%A0%80", rule: "is not valid percent-encoded UTF-8" },
  { value: "%00", rule: "must not contain a NUL character or an unpaired surrogate" },
  { value: "abc%", rule: "is not valid percent-encoded UTF-8" },
  { value: "pay_%F0%9F%98%80%00", rule: "must not contain a NUL character or an unpaired surrogate" },
];

interface PathRoute {
  method: string;
  path: string;
  /** A well-formed value per parameter. */
  values: Record<string, string>;
  body?: string;
}

let tg: TestGateway;
let base: string;
let tenantId: string;
let token: string;
let routes: PathRoute[];

beforeAll(async () => {
  tg = await startTestGateway();
  base = (await tg.gateway.start({ workers: false })).url!;
  tenantId = await tg.insertTenant();
  token = await tg.tenantToken(tenantId);
  const rest: PathRoute[] = routesWithInputs(tenantId)
    .filter((route) => route.pathParams.length > 0)
    .map((route) => {
      const values = Object.fromEntries(route.pathParams.map((name) => [name, String(route.input[name])]));
      const rest = Object.fromEntries(Object.entries(route.input).filter(([key]) => !route.pathParams.includes(key)));
      return { method: route.method, path: route.path, values, ...(takesBody(route) ? { body: JSON.stringify(rest) } : {}) };
    });
  const plainValue = (name: string) => (name === "environment" ? "sandbox" : name === "tenant_id" ? tenantId : "x1");
  const plain: PathRoute[] = [...RAW_BODY_ROUTES, ...tg.gateway.deps.providers.inbound, ...DASHBOARD_ROUTES]
    .filter((route) => route.path.includes("{"))
    .map((route) => ({
      method: route.method,
      path: route.path,
      values: Object.fromEntries([...route.path.matchAll(/\{(\w+)\}/g)].map((match) => [match[1]!, plainValue(match[1]!)])),
      ...(route.method === "POST" ? { body: "{}" } : {}),
    }));
  routes = [...rest, ...plain];
}, 60_000);

afterAll(() => tg?.close(), 30_000);

function urlFor(route: PathRoute, param: string, value: string): string {
  return base + route.path.replace(/\{(\w+)\}/g, (_, name: string) => (name === param ? value : encodeURIComponent(route.values[name]!)));
}

describe("a path parameter that cannot be text", () => {
  it("covers every route with a path parameter, REST and plain alike", () => {
    const paths = routes.map((route) => `${route.method} ${route.path}`);
    for (const known of [
      "GET /providerA/transaction/{transaction_id}/status",
      "GET /providerA/transaction/{transaction_id}/is-approved",
      "POST /providerA/webhook/{environment}",
      "POST /providerA/webhook/{environment}/{tenant_id}",
      "GET /payments/{payment_id}",
      "DELETE /tenants/{tenant_id}/credentials/providerB/{environment}",
      "GET /dashboard/assets/{name}",
    ])
      expect(paths).toContain(known);
    expect(routes.length).toBeGreaterThan(40);
  });

  it("is a 400 validation_failed naming the parameter on every route, with and without a token", async () => {
    const failures: string[] = [];
    let sent = 0;
    for (const route of routes)
      for (const param of Object.keys(route.values))
        for (const { value, rule } of UNREADABLE)
          for (const auth of [undefined, `Bearer ${token}`]) {
            const url = urlFor(route, param, value);
            const headers: Record<string, string> = { ...(auth ? { authorization: auth } : {}), ...(route.body ? { "content-type": "application/json" } : {}) };
            const response = await fetch(url, { method: route.method, headers, ...(route.body ? { body: route.body } : {}) });
            sent++;
            const text = await response.text();
            let body: Record<string, unknown> = {};
            try {
              body = JSON.parse(text) as Record<string, unknown>;
            } catch {}
            const ok =
              response.status === 400 &&
              response.headers.get("content-type")?.startsWith("application/json") &&
              body.statusCode === 400 &&
              body.code === "validation_failed" &&
              body.error === "Bad Request" &&
              body.requestId === response.headers.get("x-request-id") &&
              Array.isArray(body.message) &&
              body.message.includes(`${param} ${rule}`);
            if (!ok) failures.push(`${route.method} ${url.slice(base.length)} (${auth ? "token" : "no token"}): ${response.status} ${text.slice(0, 160)}`);
          }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(400);
    expect(tg.logs.filter((line) => Number(line.level) >= 50)).toEqual([]); // nothing reached the 500 path
  }, 60_000);

  it("leaves a well-encoded parameter to the route: escapes that are text still reach it", async () => {
    // `%5F` is `_`: the route runs (401 without a token, 404 for an unknown payment with one).
    await expectError(await fetch(`${base}/payments/pay%5Fnope`), 401, "unauthorized");
    await expectError(await fetch(`${base}/payments/pay%5Fnope`, { headers: { authorization: `Bearer ${token}` } }), 404, "not_found");
    // An escape in a path no route has is still the router's 404.
    await expectError(await fetch(`${base}/nowhere/%ZZ`), 404, "not_found");
  });
});

describe("the check itself", () => {
  const check = createPathParamCheck([
    { method: "GET", path: "/payments/{payment_id}" },
    { method: "GET", path: "/payments/export" },
    { method: "POST", path: "/providerA/webhook/{environment}/{tenant_id}" },
  ]);

  it("names each unreadable parameter, and only on a route of the request's method", () => {
    expect(check("GET", "http://h/payments/%ZZ?x=%ZZ")).toEqual(["payment_id is not valid percent-encoded UTF-8"]);
    expect(check("HEAD", "http://h/payments/%00")).toEqual(["payment_id must not contain a NUL character or an unpaired surrogate"]);
    expect(check("POST", "http://h/providerA/webhook/%ZZ/%00")).toEqual([
      "environment is not valid percent-encoded UTF-8",
      "tenant_id must not contain a NUL character or an unpaired surrogate",
    ]);
    expect(check("DELETE", "http://h/payments/%ZZ")).toBeUndefined();
    expect(check("GET", "http://h/payments/%C3%A9t%C3%A9")).toBeUndefined(); // é: text
    expect(check("GET", "http://h/payments/pay_1?q=%ZZ")).toBeUndefined(); // the query is not the path
    expect(check("GET", "http://h/pay%ZZments/p1")).toBeUndefined(); // no route: the router's 404
  });
});
