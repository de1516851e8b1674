/**
 * CORS (issue 18, point 2): browsers on the origins of `CORS_ORIGINS` get a correct preflight and can read
 * the answers; any other origin, or any origin when none is configured, gets no CORS header — and an
 * `OPTIONS` is never a 415.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { startTestGateway, TEST_ENV, type TestGateway } from "../support/gateway.ts";

const DASHBOARD = "https://dashboard.example.com";
const OTHER = "https://evil.example.net";

function preflight(origin: string, method = "POST", headers = "authorization, content-type, idempotency-key"): RequestInit {
  return { method: "OPTIONS", headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers } };
}

const corsHeadersOf = (response: Response) => [...response.headers.keys()].filter((name) => name.startsWith("access-control-"));

describe("CORS with CORS_ORIGINS set", () => {
  let tg: TestGateway;
  beforeAll(async () => {
    tg = await startTestGateway({ CORS_ORIGINS: `${DASHBOARD}, http://localhost:5173/` });
  }, 60_000);
  afterAll(() => tg.close(), 30_000);

  it("answers a preflight from an allowed origin with 204 and the path's methods", async () => {
    const response = await tg.request("/webhooks", preflight(DASHBOARD));
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect(response.headers.get("access-control-allow-origin")).toBe(DASHBOARD);
    expect(response.headers.get("access-control-allow-methods")).toBe("POST, GET, OPTIONS");
    expect(response.headers.get("access-control-allow-headers")).toBe(
      "authorization, content-type, idempotency-key, x-tenant-id, x-environment, x-request-id, trpc-accept",
    );
    expect(response.headers.get("access-control-max-age")).toBe("600");
    expect(response.headers.get("vary")).toBe("Origin");
    expect(response.headers.get("access-control-allow-credentials")).toBeNull();

    const item = await tg.request("/webhooks/whe_01JD3M8Q4ZK2T9XG7B6V5N4C3A", preflight("http://localhost:5173", "DELETE"));
    expect(item.status).toBe(204);
    expect(item.headers.get("access-control-allow-origin")).toBe("http://localhost:5173");
    expect(item.headers.get("access-control-allow-methods")).toBe("GET, PATCH, DELETE, OPTIONS");

    const trpc = await tg.request("/trpc/webhooks.list", preflight(DASHBOARD, "GET", "authorization, trpc-accept"));
    expect(trpc.status).toBe(204);
    expect(trpc.headers.get("access-control-allow-methods")).toBe("GET, POST, OPTIONS");
  });

  it("lets the allowed origin read an actual answer and its headers, errors included", async () => {
    const tenantId = await tg.insertTenant();
    const token = await tg.tenantToken(tenantId);
    const ok = await tg.request("/webhooks", { headers: { origin: DASHBOARD, authorization: `Bearer ${token}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("access-control-allow-origin")).toBe(DASHBOARD);
    expect(ok.headers.get("access-control-expose-headers")).toBe("x-request-id, idempotent-replayed, ratelimit-policy, ratelimit, retry-after");
    expect(ok.headers.get("vary")).toBe("Origin");

    const unauthorized = await tg.request("/trpc/auth.whoami", { headers: { origin: DASHBOARD } });
    expect(unauthorized.status).toBe(401);
    expect(unauthorized.headers.get("access-control-allow-origin")).toBe(DASHBOARD);
  });

  it("gives another origin no CORS header, on a preflight or an answer", async () => {
    const refused = await tg.request("/webhooks", preflight(OTHER));
    expect(refused.status).toBe(204);
    expect(corsHeadersOf(refused)).toEqual([]);
    const answer = await tg.request("/health/live", { headers: { origin: OTHER } });
    expect(answer.status).toBe(200);
    expect(corsHeadersOf(answer)).toEqual([]);
    // Caches must not hand an allowed origin's answer to another one, or the reverse.
    expect(answer.headers.get("vary")).toBe("Origin");
  });

  it("answers OPTIONS on a path no route has with 404 in the contract's shape", async () => {
    const response = await tg.request("/nowhere", preflight(DASHBOARD));
    expect(response.status).toBe(404);
    expect(response.headers.get("content-type")).toBe("application/json");
    expect(await response.json()).toMatchObject({ statusCode: 404, code: "not_found", requestId: response.headers.get("x-request-id")! });
  });
});

describe("CORS without CORS_ORIGINS", () => {
  let tg: TestGateway;
  beforeAll(async () => {
    tg = await startTestGateway();
  }, 60_000);
  afterAll(() => tg.close(), 30_000);

  it("answers a preflight 204 without CORS headers, never 415 text/plain", async () => {
    for (const path of ["/webhooks", "/trpc/webhooks.list", "/auth/token"]) {
      const response = await tg.request(path, preflight(DASHBOARD));
      expect(response.status).toBe(204);
      expect(corsHeadersOf(response)).toEqual([]);
      expect(response.headers.get("allow")).toContain("OPTIONS");
      expect(response.headers.get("x-request-id")).toBeTruthy();
    }
    const answer = await tg.request("/health/live", { headers: { origin: DASHBOARD } });
    expect(corsHeadersOf(answer)).toEqual([]);
    expect(answer.headers.get("vary")).toBeNull();
  });
});

describe("CORS_ORIGINS", () => {
  const load = (value: string) => loadConfig({ ...TEST_ENV, CORS_ORIGINS: value });

  it("takes bare http(s) origins, as browsers send them", () => {
    expect(load("https://Dashboard.Example.com, http://localhost:5173/").corsOrigins).toEqual(["https://dashboard.example.com", "http://localhost:5173"]);
    expect(loadConfig(TEST_ENV).corsOrigins).toEqual([]);
  });

  it("refuses *, paths and other schemes, naming the variable", () => {
    for (const value of ["*", "https://a.example/app", "ftp://a.example", "dashboard.example.com"]) {
      expect(() => load(value)).toThrow(ConfigError);
      expect(() => load(value)).toThrow(/CORS_ORIGINS/);
    }
  });
});
