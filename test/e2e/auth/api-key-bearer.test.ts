import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createApiKey } from "../../../src/services/api-keys/api-keys.ts";
import { KEY_STATUS_CACHE_MS } from "../../../src/services/api-keys/key-status.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { waitUntil } from "../../support/wait.ts";

let tg: TestGateway;

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

beforeAll(async () => {
  tg = await startTestGateway();
}, 60_000);
afterAll(() => tg.close(), 30_000);

async function newKey(environment: "sandbox" | "live" = "sandbox") {
  const tenantId = await tg.insertTenant({ liveEnabled: environment === "live" });
  return { tenantId, key: await createApiKey(tg.gateway.deps, { tenantId, environment }) };
}

describe("a secret API key as the bearer token", () => {
  it("acts exactly as a token minted for that key: same principal, its tenant, its environment", async () => {
    const { tenantId, key } = await newKey("live");
    const whoami = await tg.request("/auth/whoami", { headers: bearer(key.secret) });
    expect(whoami.status).toBe(200);
    const body = (await whoami.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ sub: `key:${key.id}`, role: "tenant", tenantId, environment: "live", keyId: key.id });
    // A tenant-scoped route, and again (now from the process's cache).
    for (let i = 0; i < 2; i++) {
      const tenant = await tg.request(`/tenants/${tenantId}`, { headers: bearer(key.secret) });
      expect(tenant.status).toBe(200);
    }
    // Another tenant's objects stay out of reach, as for the key's tokens.
    const other = await tg.insertTenant();
    expect((await tg.request(`/tenants/${other}`, { headers: bearer(key.secret) })).status).toBe(404);
  });

  it("refuses a secret no key has with 401 invalid_token", async () => {
    const { key } = await newKey();
    const wrong = `${key.secret.slice(0, -4)}AAAA`;
    const response = await tg.request("/auth/whoami", { headers: bearer(wrong) });
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: "unauthorized", message: "Invalid API key" });
    expect(response.headers.get("www-authenticate")).toBe('Bearer realm="passerelle", error="invalid_token", error_description="Invalid API key"');
  });

  it("stops working at once when revoked here, and within the key-status bound when another process revoked it", async () => {
    const { tenantId, key } = await newKey();
    expect((await tg.request("/auth/whoami", { headers: bearer(key.secret) })).status).toBe(200);
    // Revoked behind this process's back, as another server instance would.
    await tg.gateway.deps.db.updateTable("api_keys").set({ revoked_at: new Date() }).where("id", "=", key.id).execute();
    const started = Date.now();
    const status = await waitUntil(
      async () => {
        const { status } = await tg.request(`/tenants/${tenantId}`, { headers: bearer(key.secret) });
        return status !== 200 && status;
      },
      { what: "the revoked key to be refused", timeoutMs: KEY_STATUS_CACHE_MS + 3_000, intervalMs: 50 },
    );
    expect(status).toBe(401);
    expect(Date.now() - started).toBeLessThan(KEY_STATUS_CACHE_MS + 500);

    const second = await newKey();
    const admin = await tg.adminToken();
    expect((await tg.request("/auth/whoami", { headers: bearer(second.key.secret) })).status).toBe(200);
    const revoked = await tg.request(`/tenants/${second.tenantId}/api-keys/${second.key.id}`, { method: "DELETE", headers: bearer(admin) });
    expect(revoked.status).toBe(200);
    const refused = await tg.request("/auth/whoami", { headers: bearer(second.key.secret) });
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ message: "The API key behind this token has been revoked" });
  }, 15_000);
});
