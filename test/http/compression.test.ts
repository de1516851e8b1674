/**
 * Responses compressed and cached (issue 27 point 4): brotli or gzip by `Accept-Encoding` for the
 * dashboard's files, `/openapi.json`, `/docs` and JSON answers of 1 KiB or more, `Vary: Accept-Encoding`
 * on what may be compressed and on nothing else, ETags with 304 on `If-None-Match`, and `immutable` on the
 * dashboard's hashed assets only.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { brotliDecompressSync } from "node:zlib";
import { COMPRESSION_THRESHOLD_BYTES, preferredCoding } from "../../src/http/compression.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

let tg: TestGateway;
let admin: string;

beforeAll(async () => {
  tg = await startTestGateway();
  admin = await tg.adminToken();
  // Enough tenants for GET /tenants to pass the threshold.
  for (let i = 0; i < 12; i++) await tg.insertTenant();
}, 30_000);

afterAll(async () => {
  await tg?.close();
});

/** `gateway.fetch` in the process: the body is as the gateway encoded it (a `fetch` over HTTP would decode it). */
const get = (path: string, headers: Record<string, string> = {}) => tg.gateway.fetch(new Request(`http://localhost${path}`, { headers }));

function decode(bytes: Uint8Array<ArrayBuffer>, coding: string | null): string {
  if (coding === "br") return new TextDecoder().decode(brotliDecompressSync(bytes));
  if (coding === "gzip") return new TextDecoder().decode(Bun.gunzipSync(bytes));
  return new TextDecoder().decode(bytes);
}

const bytesOf = async (response: Response) => new Uint8Array(await response.arrayBuffer());

describe("Accept-Encoding negotiation", () => {
  it("prefers brotli, honours weights and refusals, and falls back to the body as it is", () => {
    expect(preferredCoding("gzip, deflate, br, zstd")).toBe("br");
    expect(preferredCoding("gzip")).toBe("gzip");
    expect(preferredCoding("x-gzip")).toBe("gzip");
    expect(preferredCoding("br;q=0.5, gzip;q=0.8")).toBe("gzip");
    expect(preferredCoding("br;q=0, gzip")).toBe("gzip");
    expect(preferredCoding("*")).toBe("br");
    expect(preferredCoding("*;q=0.5, br;q=0")).toBe("gzip");
    expect(preferredCoding("*;q=0, identity")).toBeUndefined();
    expect(preferredCoding("identity")).toBeUndefined();
    expect(preferredCoding("deflate")).toBeUndefined();
    expect(preferredCoding("")).toBeUndefined();
    expect(preferredCoding(null)).toBeUndefined();
  });
});

describe("JSON answers of the REST surface", () => {
  it("compresses a list over the threshold in the coding asked for, still valid JSON, with Vary", async () => {
    const plain = await get("/tenants", { authorization: `Bearer ${admin}` });
    expect(plain.status).toBe(200);
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(plain.headers.get("vary")).toBe("Accept-Encoding");
    const text = await plain.text();
    expect(text.length).toBeGreaterThanOrEqual(COMPRESSION_THRESHOLD_BYTES);
    const list = JSON.parse(text) as { data: { id: string }[] };
    expect(list.data.length).toBeGreaterThanOrEqual(12);

    for (const [accept, coding] of [
      ["gzip, deflate, br", "br"],
      ["gzip", "gzip"],
    ] as const) {
      const response = await get("/tenants", { authorization: `Bearer ${admin}`, "accept-encoding": accept });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-encoding")).toBe(coding);
      expect(response.headers.get("vary")).toBe("Accept-Encoding");
      expect(response.headers.get("content-type")).toBe("application/json");
      expect(response.headers.get("x-request-id")).toBeTruthy();
      const bytes = await bytesOf(response);
      expect(bytes.byteLength).toBeLessThan(text.length);
      expect(JSON.parse(decode(bytes, coding))).toEqual(list);
    }
  });

  it("leaves a small hot answer as it is: no Content-Encoding, no Vary", async () => {
    const response = await get("/auth/whoami", { authorization: `Bearer ${admin}`, "accept-encoding": "gzip, deflate, br" });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-encoding")).toBeNull();
    expect(response.headers.get("vary")).toBeNull();
    expect(await response.json()).toMatchObject({ role: "admin" });
  });

  it("passes the document's response check over HTTP, where fetch decodes the body", async () => {
    const base = (await tg.gateway.start()).url!;
    try {
      const response = await fetch(`${base}/tenants`, { headers: { authorization: `Bearer ${admin}` } });
      expect(response.status).toBe(200);
      expect(response.headers.get("content-encoding")).toBe("br");
      expect(((await response.json()) as { data: unknown[] }).data.length).toBeGreaterThanOrEqual(12);
    } finally {
      await tg.gateway.stop();
    }
  });
});

describe("/openapi.json and /docs", () => {
  it("serves the document compressed once, with an ETag and 304 on If-None-Match", async () => {
    const plain = await get("/openapi.json");
    expect(plain.status).toBe(200);
    const etag = plain.headers.get("etag");
    expect(etag).toMatch(/^"[\w-]{22}"$/);
    expect(plain.headers.get("vary")).toBe("Accept-Encoding");
    expect(plain.headers.get("cache-control")).toBe("no-cache");
    const document = JSON.parse(await plain.text()) as { openapi: string };
    expect(document.openapi).toMatch(/^3\./);

    const br = await get("/openapi.json", { "accept-encoding": "br" });
    expect(br.headers.get("content-encoding")).toBe("br");
    expect(br.headers.get("etag")).toBe(`"${etag!.slice(1, -1)}-br"`);
    expect(JSON.parse(decode(await bytesOf(br), "br"))).toEqual(document);
    const gz = await get("/openapi.json", { "accept-encoding": "gzip" });
    expect(gz.headers.get("content-encoding")).toBe("gzip");
    expect(JSON.parse(decode(await bytesOf(gz), "gzip"))).toEqual(document);

    for (const tag of [etag!, br.headers.get("etag")!, `W/${etag}`, `"other", ${etag}`]) {
      const again = await get("/openapi.json", { "accept-encoding": "br", "if-none-match": tag });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe("");
      expect(again.headers.get("etag")).toBe(br.headers.get("etag"));
      expect(again.headers.get("vary")).toBe("Accept-Encoding");
    }
    expect((await get("/openapi.json", { "if-none-match": '"stale"' })).status).toBe(200);
  });

  it("serves Scalar's bundle compressed with an ETag, cached a day, and the small docs page as it is", async () => {
    const bundle = await get("/docs/scalar.js", { "accept-encoding": "br" });
    expect(bundle.status).toBe(200);
    expect(bundle.headers.get("content-encoding")).toBe("br");
    expect(bundle.headers.get("cache-control")).toBe("public, max-age=86400");
    expect(decode(await bytesOf(bundle), "br")).toContain("createApiReference");
    expect((await get("/docs/scalar.js", { "if-none-match": bundle.headers.get("etag")! })).status).toBe(304);

    const page = await get("/docs", { "accept-encoding": "br" });
    expect(page.status).toBe(200);
    expect(page.headers.get("content-encoding")).toBeNull();
    expect(page.headers.get("vary")).toBeNull();
    expect(page.headers.get("etag")).toMatch(/^"[\w-]{22}"$/);
    expect(await page.text()).toContain("/docs/scalar.js");
  }, 30_000);
});

describe("the dashboard's files", () => {
  it("revalidates the page (no-cache, ETag, 304) and caches only its hashed assets for good, each compressed", async () => {
    const page = await get("/dashboard", { "accept-encoding": "gzip" });
    expect(page.status).toBe(200);
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expect(page.headers.get("content-encoding")).toBeNull(); // the page is under the threshold
    const pageTag = page.headers.get("etag")!;
    expect(pageTag).toMatch(/^"[\w-]{22}"$/);
    const html = await page.text();
    const again = await get("/dashboard", { "if-none-match": pageTag });
    expect(again.status).toBe(304);
    expect(again.headers.get("cache-control")).toBe("no-cache");

    // The files the page loads (its icon is a data URL).
    const paths = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!).filter((path) => !path.startsWith("data:"));
    expect(paths.length).toBe(2);
    for (const path of paths) {
      const plain = await get(path);
      const identity = await plain.text();
      expect(plain.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      for (const coding of ["br", "gzip"] as const) {
        const response = await get(path, { "accept-encoding": coding });
        expect(response.status).toBe(200);
        expect(response.headers.get("content-encoding")).toBe(coding);
        expect(response.headers.get("vary")).toBe("Accept-Encoding");
        expect(response.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
        expect(response.headers.get("content-security-policy")).toBeTruthy();
        expect(decode(await bytesOf(response), coding)).toBe(identity);
        const cached = await get(path, { "accept-encoding": coding, "if-none-match": response.headers.get("etag")! });
        expect(cached.status).toBe(304);
        expect(cached.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
      }
    }
  }, 30_000);
});
