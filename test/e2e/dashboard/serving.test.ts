/**
 * How the gateway serves the merchant's dashboard (issue 17 points 1 and 6): `/dashboard` and its hashed
 * assets, bundled on the first request, each answer under a strict Content-Security-Policy; nothing on
 * the page is inline or loaded from another origin; `/` sends a browser there and still answers an API
 * client with the JSON index.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { DASHBOARD_CSP } from "../../../src/http/dashboard-routes.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";

let tg: TestGateway;

beforeAll(async () => {
  tg = await startTestGateway();
}, 30_000);

afterAll(async () => {
  await tg?.close();
});

const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";

/** The script and stylesheet addresses the page names. */
/** The files the page loads (its icon is a data URL, within the policy's `img-src 'self' data:`). */
function assetPaths(html: string): string[] {
  return [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!).filter((path) => !path.startsWith("data:"));
}

describe("GET /dashboard", () => {
  it("answers the page under a strict Content-Security-Policy, with no inline script or style", async () => {
    const response = await tg.request("/dashboard", { headers: { accept: BROWSER_ACCEPT } });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = response.headers.get("content-security-policy");
    expect(csp).toBe(DASHBOARD_CSP);
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(response.headers.get("x-content-type-options")).toBe("nosniff");
    expect(response.headers.get("cache-control")).toBe("no-cache");
    const html = await response.text();
    // Every script has a src; no style attribute or element; nothing from another origin.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|style="/);
    const paths = assetPaths(html);
    expect(paths.length).toBe(2);
    for (const path of paths) expect(path).toMatch(/^\/dashboard\/assets\/main-[a-z0-9]+\.(js|css)$/);
  });

  it("serves each asset the page names, cached for good, under the same policy", async () => {
    const html = await (await tg.request("/dashboard")).text();
    for (const path of assetPaths(html)) {
      const response = await tg.request(path);
      expect(response.status).toBe(200);
      expect(response.headers.get("content-security-policy")).toBe(DASHBOARD_CSP);
      expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      expect(response.headers.get("content-type")).toMatch(path.endsWith(".js") ? /^text\/javascript/ : /^text\/css/);
      const body = await response.text();
      expect(body.length).toBeGreaterThan(1_000);
      // Offline: the bundle names no other origin to load from.
      expect(body).not.toMatch(/https?:\/\/(?!www\.w3\.org)[a-z0-9.-]+\.[a-z]{2,}\/[^"'\s]*\.(js|css|woff2?)\b/);
    }
  });

  it("answers an unknown asset with the API's 404 body", async () => {
    const response = await tg.request("/dashboard/assets/main-nothere.js");
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ statusCode: 404, message: "Route not found" });
  });
});

describe("GET / for a browser and for an API client", () => {
  it("sends a browser to /dashboard", async () => {
    const response = await tg.request("/", { headers: { accept: BROWSER_ACCEPT }, redirect: "manual" });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/dashboard");
  });

  it("still answers an API client with the JSON index", async () => {
    const response = await tg.request("/", { headers: { accept: "application/json" } });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ name: "passerelle", links: { docs: "/docs" } });
  });
});
