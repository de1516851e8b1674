/**
 * The IETF `RateLimit-Policy` / `RateLimit` headers (draft-ietf-httpapi-ratelimit-headers-10) on every
 * answer to a tenant token that the rate limit counted, on REST and on `/trpc`, a 429 included
 * (issue 18, point 2). Run against both bucket stores: memory always, Redis when REDIS_URL is set.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

const REDIS_URL = process.env.REDIS_URL;

/** 5 requests at once, 1 per second sustained: an empty bucket is full again after 5 s. */
const LIMIT_ENV = { RATE_LIMIT_RPS: "1", RATE_LIMIT_BURST: "5" };
const POLICY = '"default";q=5;w=5';

function describeHeaders(store: "memory" | "redis", skip: boolean): void {
  describe.skipIf(skip)(`RateLimit headers with the ${store} buckets`, () => {
    let tg: TestGateway;

    beforeAll(async () => {
      tg = await startTestGateway(store === "redis" ? { ...LIMIT_ENV, REDIS_URL: REDIS_URL! } : LIMIT_ENV);
      expect(tg.gateway.deps.rateLimiter.store).toBe(store);
      // One call of another tenant first: the first call of a process (its code paths, and the suite's OpenAPI check of
      // the answer) can take over a second on a busy machine, long enough for a token to come back mid-countdown.
      await tenantGet("/webhooks", await tg.tenantToken(await tg.insertTenant()));
    }, 60_000);
    afterAll(() => tg?.close(), 30_000);

    async function tenantGet(path: string, token: string): Promise<Response> {
      return tg.request(path, { headers: { authorization: `Bearer ${token}` } });
    }

    it("counts down on REST, and a 429 carries them beside Retry-After", async () => {
      const token = await tg.tenantToken(await tg.insertTenant());
      const seen: [number, string | null, string | null][] = [];
      for (let i = 0; i < 6; i++) {
        const response = await tenantGet("/webhooks", token);
        seen.push([response.status, response.headers.get("ratelimit-policy"), response.headers.get("ratelimit")]);
        if (response.status === 429) expect(response.headers.get("retry-after")).toBe("1");
      }
      // t: the seconds until the bucket is full again, 1 s a missing token at 1 per second.
      expect(seen).toEqual([
        [200, POLICY, '"default";r=4;t=1'],
        [200, POLICY, '"default";r=3;t=2'],
        [200, POLICY, '"default";r=2;t=3'],
        [200, POLICY, '"default";r=1;t=4'],
        [200, POLICY, '"default";r=0;t=5'],
        [429, POLICY, '"default";r=0;t=5'],
      ]);
    });

    it("are on /trpc answers too, success and error alike, a 429 TOO_MANY_REQUESTS included", async () => {
      const token = await tg.tenantToken(await tg.insertTenant());
      const ok = await tenantGet("/trpc/webhooks.list", token);
      expect(ok.status).toBe(200);
      expect([ok.headers.get("ratelimit-policy"), ok.headers.get("ratelimit")]).toEqual([POLICY, '"default";r=4;t=1']);
      const notFound = await tenantGet(`/trpc/webhooks.get?input=${encodeURIComponent(JSON.stringify({ webhook_id: "whe_none" }))}`, token);
      expect(notFound.status).toBe(404);
      expect(notFound.headers.get("ratelimit")).toBe('"default";r=3;t=2');
      for (let i = 0; i < 3; i++) expect((await tenantGet("/trpc/webhooks.list", token)).status).toBe(200);
      const limited = await tenantGet("/trpc/webhooks.list", token);
      expect(limited.status).toBe(429);
      expect([limited.headers.get("ratelimit"), limited.headers.get("retry-after")]).toEqual(['"default";r=0;t=5', "1"]);
      const body = (await limited.json()) as { error: { code: number; data: { code: string; httpBody: { code: string } } } };
      expect([body.error.code, body.error.data.code, body.error.data.httpBody.code]).toEqual([-32029, "TOO_MANY_REQUESTS", "rate_limited"]);
    });

    it("follow a tenant's own limit", async () => {
      const tenantId = await tg.insertTenant();
      const admin = await tg.adminToken();
      const patched = await tg.request(`/tenants/${tenantId}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
        body: JSON.stringify({ rateLimit: { rps: 10, burst: 50 } }),
      });
      expect(patched.status).toBe(200);
      const response = await tenantGet("/webhooks", await tg.tenantToken(tenantId));
      expect([response.headers.get("ratelimit-policy"), response.headers.get("ratelimit")]).toEqual(['"default";q=50;w=5', '"default";r=49;t=1']);
    });

    it("are absent where nothing was counted: admin tokens, calls without a token", async () => {
      const tenantId = await tg.insertTenant();
      const admin = await tg.request("/webhooks", { headers: { authorization: `Bearer ${await tg.adminToken()}`, "x-tenant-id": tenantId } });
      expect(admin.status).toBe(200);
      const anonymous = await tg.request("/webhooks");
      expect(anonymous.status).toBe(401);
      for (const response of [admin, anonymous]) {
        expect(response.headers.get("ratelimit")).toBeNull();
        expect(response.headers.get("ratelimit-policy")).toBeNull();
      }
    });
  });
}

describeHeaders("memory", false);
describeHeaders("redis", !REDIS_URL);
