/**
 * `GET /`, the gateway's bare address: a browser lands on the merchant's dashboard, an API client gets a small
 * JSON index of where to go next.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import packageJson from "../../package.json" with { type: "json" };
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

let tg: TestGateway;

beforeAll(async () => {
  tg = await startTestGateway();
});

afterAll(async () => {
  await tg?.close();
});

/** What Chromium sends when its address bar opens a page. */
const BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8";

describe("GET /", () => {
  it("sends a browser to the dashboard with a 302", async () => {
    const response = await tg.request("/", { headers: { accept: BROWSER_ACCEPT }, redirect: "manual" });
    expect(response.status).toBe(302);
    expect(response.headers.get("location")).toBe("/dashboard");
    const docs = await tg.request(response.headers.get("location")!, { headers: { accept: BROWSER_ACCEPT } });
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toContain("text/html");
  });

  it("answers an API client with the index: name, version and links that each answer, the dashboard's first", async () => {
    for (const accept of [undefined, "*/*", "application/json"]) {
      const response = await tg.request("/", accept ? { headers: { accept } } : {});
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("application/json");
      expect(response.headers.get("x-request-id")).toBeTruthy();
      const index = (await response.json()) as { name: string; version: string; links: Record<string, string> };
      expect(index).toEqual({
        name: "passerelle",
        version: packageJson.version,
        links: { dashboard: "/dashboard", docs: "/docs", openapi: "/openapi.json", health: "/health/ready" },
      });
      for (const link of Object.values(index.links)) {
        const status = (await tg.request(link)).status;
        // On a failure, the gateway's error lines say why (CI once saw a 500 here that no rerun showed).
        const errors = status === 200 ? [] : tg.logs.filter((line) => Number(line.level) >= 50);
        expect({ link, status, errors }).toEqual({ link, status: 200, errors: [] });
      }
    }
  });

  it("is in the OpenAPI document", async () => {
    const document = (await (await tg.request("/openapi.json")).json()) as { paths: Record<string, { get?: { responses: object } }> };
    expect(Object.keys(document.paths["/"]?.get?.responses ?? {}).sort()).toEqual(["200", "302", "431"]);
  });
});
