import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { sql } from "kysely";
import { openCredentials } from "../../../src/services/credentials/provider-credentials.ts";
import { activeCallbackSecrets } from "../../../src/services/tenants/manage-tenants.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { waitUntil } from "../../support/wait.ts";

let tg: TestGateway;
let admin: string;

const auth = (token: string, extra: Record<string, string> = {}) => ({ authorization: `Bearer ${token}`, ...extra });
const post = (path: string, token: string, body: unknown, headers: Record<string, string> = {}) =>
  tg.request(path, { method: "POST", headers: { ...auth(token, headers), "content-type": "application/json" }, body: JSON.stringify(body) });
const send = (method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) =>
  tg.request(path, {
    method,
    headers: { ...auth(token, headers), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

interface CreatedTenant {
  tenant: { id: string; name: string; storeName: string; disabled: boolean; liveEnabled: boolean; createdAt: string };
  apiKey: { id: string; secret: string; environment: string };
  callbackSecret: string;
}

async function createTenant(name = "Boutique Dakar"): Promise<CreatedTenant> {
  const response = await post("/tenants", admin, { name });
  expect(response.status).toBe(200);
  return (await response.json()) as CreatedTenant;
}

async function exchange(clientId: string, clientSecret: string): Promise<string> {
  const response = await tg.request("/auth/token", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }),
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { access_token: string }).access_token;
}

beforeAll(async () => {
  tg = await startTestGateway();
  admin = await tg.adminToken();
}, 60_000);
afterAll(() => tg.close(), 30_000);

describe("POST /tenants", () => {
  it("creates a tenant and shows its first sandbox API key and callback secret once, exactly in the contract's shape", async () => {
    const created = await createTenant("Boutique Dakar");
    expect(Object.keys(created).sort()).toEqual(["apiKey", "callbackSecret", "tenant"]);
    expect(Object.keys(created.tenant).sort()).toEqual(["createdAt", "disabled", "id", "liveEnabled", "name", "storeName"]);
    expect(created.tenant).toMatchObject({ name: "Boutique Dakar", storeName: "Boutique Dakar", disabled: false, liveEnabled: false });
    expect(created.tenant.id).toMatch(/^ten_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(Object.keys(created.apiKey).sort()).toEqual(["environment", "id", "secret"]);
    expect(created.apiKey.id).toMatch(/^key_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(created.apiKey.secret).toMatch(/^psk_sandbox_[A-Za-z0-9_-]{43}$/);
    expect(created.apiKey.environment).toBe("sandbox");
    expect(Buffer.from(created.callbackSecret.slice("whsec_".length), "base64").length).toBe(32);

    // Stored only hashed and sealed: the raw rows never hold them.
    const raw =
      JSON.stringify((await sql`select * from api_keys`.execute(tg.gateway.deps.db)).rows) +
      JSON.stringify((await sql`select * from tenant_secrets`.execute(tg.gateway.deps.db)).rows);
    expect(raw).not.toContain(created.apiKey.secret);
    expect(raw).not.toContain(created.apiKey.secret.slice(12));
    expect(raw).not.toContain(created.callbackSecret.slice(6));
    // Reads never show them again.
    const read = await (await send("GET", `/tenants/${created.tenant.id}`, admin)).text();
    expect(read).not.toContain(created.apiKey.secret);
    const keys = await (await send("GET", `/tenants/${created.tenant.id}/api-keys`, admin)).text();
    expect(keys).not.toContain(created.apiKey.secret);
  });

  it("is idempotent with an Idempotency-Key, and stores the replayable answer sealed", async () => {
    const first = await post("/tenants", admin, { name: "Once Only" }, { "idempotency-key": "create-once-only" });
    const again = await post("/tenants", admin, { name: "Once Only" }, { "idempotency-key": "create-once-only" });
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    const [a, b] = (await Promise.all([first.json(), again.json()])) as CreatedTenant[];
    expect(b).toEqual(a!);
    const count = await tg.gateway.deps.db
      .selectFrom("tenants")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("name", "=", "Once Only")
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
    const raw = JSON.stringify((await sql`select * from idempotency_keys`.execute(tg.gateway.deps.db)).rows);
    expect(raw).not.toContain(a!.apiKey.secret);
    expect(raw).not.toContain(a!.callbackSecret);
    const other = await post("/tenants", admin, { name: "Something Else" }, { "idempotency-key": "create-once-only" });
    expect(other.status).toBe(422);
    expect(((await other.json()) as { code: string }).code).toBe("idempotency_mismatch");
  });

  it("takes a store name and validates the name", async () => {
    const response = await post("/tenants", admin, { name: "Shop", storeName: "Shop Store" });
    expect(((await response.json()) as CreatedTenant).tenant.storeName).toBe("Shop Store");
    const bad = await post("/tenants", admin, { name: "" });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string[] }).message).toEqual(["name should not be empty"]);
  });

  it("is for operators only", async () => {
    const { tenant } = await createTenant();
    const response = await post("/tenants", await tg.tenantToken(tenant.id), { name: "Mine" });
    expect(response.status).toBe(403);
  });
});

describe("reading and changing tenants", () => {
  it("lists tenants newest first with paging, for operators only", async () => {
    const a = await createTenant("Page A");
    const b = await createTenant("Page B");
    const first = (await (await send("GET", "/tenants?limit=1", admin)).json()) as { data: { id: string }[]; nextCursor: string };
    expect(first.data.map((t) => t.id)).toEqual([b.tenant.id]);
    const second = (await (await send("GET", `/tenants?limit=1&cursor=${first.nextCursor}`, admin)).json()) as { data: { id: string }[] };
    expect(second.data.map((t) => t.id)).toEqual([a.tenant.id]);
    expect((await send("GET", "/tenants", await tg.tenantToken(a.tenant.id))).status).toBe(403);
    expect((await send("GET", "/tenants?limit=0", admin)).status).toBe(400);
  });

  it("lets a tenant read itself, and hides other tenants behind 404", async () => {
    const a = await createTenant();
    const b = await createTenant();
    const own = await send("GET", `/tenants/${a.tenant.id}`, await tg.tenantToken(a.tenant.id));
    expect(own.status).toBe(200);
    expect(((await own.json()) as { id: string }).id).toBe(a.tenant.id);
    const other = await send("GET", `/tenants/${b.tenant.id}`, await tg.tenantToken(a.tenant.id));
    expect(other.status).toBe(404);
    expect(await other.text()).not.toContain(`${b.tenant.name}"`);
    const mismatch = await send("GET", `/tenants/${a.tenant.id}`, await tg.tenantToken(a.tenant.id), undefined, { "x-tenant-id": b.tenant.id });
    expect(mismatch.status).toBe(403);
    expect((await send("GET", "/tenants/ten_01JAAAAAAAAAAAAAAAAAAAAAAA", admin)).status).toBe(404);
  });

  it("PATCH renames, sets the rate limit, enables live and disables; a disabled tenant's tokens get 403", async () => {
    const { tenant, apiKey } = await createTenant();
    const token = await exchange(apiKey.id, apiKey.secret);
    const patched = await send("PATCH", `/tenants/${tenant.id}`, admin, { name: "Renamed", rateLimit: { rps: 5, burst: 10 }, liveEnabled: true });
    expect(patched.status).toBe(200);
    expect(await patched.json()).toMatchObject({ name: "Renamed", rateLimit: { rps: 5, burst: 10 }, liveEnabled: true, disabled: false });
    expect((await send("PATCH", `/tenants/${tenant.id}`, token, { name: "Self-service" })).status).toBe(403);

    await send("PATCH", `/tenants/${tenant.id}`, admin, { disabled: true });
    const refused = await send("GET", `/tenants/${tenant.id}`, token);
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { message: string }).message).toBe("Tenant is disabled");
    // Its key, right id and secret, is told why no token comes (a wrong secret is not: the same answer as ever).
    const signIn = await tg.request("/auth/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "client_credentials", client_id: apiKey.id, client_secret: apiKey.secret }),
    });
    expect(signIn.status).toBe(401);
    expect(await signIn.json()).toMatchObject({
      error: "invalid_client",
      error_description: "This merchant account is disabled: the operator can enable it again",
    });
    const wrong = await tg.request("/auth/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "client_credentials", client_id: apiKey.id, client_secret: `${apiKey.secret}x` }),
    });
    expect(await wrong.json()).toMatchObject({ error: "invalid_client", error_description: "Invalid client credentials" });
    // Operators still manage it, and can enable it again.
    expect((await send("PATCH", `/tenants/${tenant.id}`, admin, { disabled: false })).status).toBe(200);
    expect((await send("GET", `/tenants/${tenant.id}`, token)).status).toBe(200);
  });
});

describe("API keys and POST /auth/token", () => {
  it("exchanges a key for a token acting in the key's environment, with JSON or a form", async () => {
    const { tenant, apiKey } = await createTenant();
    const token = await exchange(apiKey.id, apiKey.secret);
    const whoami = (await (await send("GET", "/auth/whoami", token)).json()) as Record<string, unknown>;
    expect(whoami).toMatchObject({ role: "tenant", tenantId: tenant.id, environment: "sandbox", keyId: apiKey.id });

    const form = await tg.request("/auth/token", {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "client_credentials", client_id: apiKey.id, client_secret: apiKey.secret }).toString(),
    });
    expect(form.status).toBe(200);
    expect(await form.json()).toMatchObject({ token_type: "Bearer", expires_in: 3600 });
  });

  it("answers a wrong id and a wrong secret with the same 401", async () => {
    const { apiKey } = await createTenant();
    const other = await createTenant();
    const attempt = async (clientId: string, clientSecret: string) => {
      const response = await tg.request("/auth/token", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ grant_type: "client_credentials", client_id: clientId, client_secret: clientSecret }),
      });
      const body = (await response.json()) as Record<string, unknown>;
      return { status: response.status, code: body.code, message: body.message };
    };
    const wrongSecret = await attempt(apiKey.id, `${apiKey.secret.slice(0, -2)}xx`);
    const wrongId = await attempt(other.apiKey.id, apiKey.secret);
    const unknownId = await attempt("key_01JAAAAAAAAAAAAAAAAAAAAAAA", apiKey.secret.replace(/.$/, "A"));
    expect(wrongSecret).toEqual({ status: 401, code: "unauthorized", message: "Invalid client credentials" });
    expect(wrongId).toEqual(wrongSecret);
    expect(unknownId).toEqual(wrongSecret);
    const badGrant = await tg.request("/auth/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "password", client_id: apiKey.id, client_secret: apiKey.secret }),
    });
    expect(badGrant.status).toBe(400);
    expect(((await badGrant.json()) as { message: string[] }).message).toEqual(["grant_type must be equal to client_credentials"]);
  });

  it("creates, lists (prefixes only) and revokes keys", async () => {
    const { tenant, apiKey } = await createTenant();
    const token = await exchange(apiKey.id, apiKey.secret);
    const created = await post(`/tenants/${tenant.id}/api-keys`, token, { environment: "sandbox", name: "ci" });
    expect(created.status).toBe(200);
    const key = (await created.json()) as { id: string; secret: string; prefix: string; name: string };
    expect(key.secret).toStartWith("psk_sandbox_");
    expect(key.secret.startsWith(key.prefix)).toBe(true);
    expect(key.name).toBe("ci");
    const list = (await (await send("GET", `/tenants/${tenant.id}/api-keys`, token)).json()) as { data: Record<string, unknown>[] };
    expect(list.data.map((k) => k.id)).toEqual([key.id, apiKey.id]);
    expect(list.data.every((k) => !("secret" in k))).toBe(true);

    const revoked = await send("DELETE", `/tenants/${tenant.id}/api-keys/${key.id}`, token);
    expect(revoked.status).toBe(200);
    expect((await send("DELETE", `/tenants/${tenant.id}/api-keys/key_01JAAAAAAAAAAAAAAAAAAAAAAA`, token)).status).toBe(404);
    const relist = (await (await send("GET", `/tenants/${tenant.id}/api-keys`, token)).json()) as { data: { id: string; revokedAt: string | null }[] };
    expect(relist.data.find((k) => k.id === key.id)!.revokedAt).not.toBeNull();
    // A revoked key cannot be exchanged any more.
    const again = await tg.request("/auth/token", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ grant_type: "client_credentials", client_id: key.id, client_secret: key.secret }),
    });
    expect(again.status).toBe(401);
  });

  it("stops a revoked key's tokens within 5 seconds, even when another process revoked it", async () => {
    const { tenant, apiKey } = await createTenant();
    const token = await exchange(apiKey.id, apiKey.secret);
    expect((await send("GET", "/auth/whoami", token)).status).toBe(200);
    // Revoked behind this process's back, as another server instance would.
    await tg.gateway.deps.db.updateTable("api_keys").set({ revoked_at: new Date() }).where("id", "=", apiKey.id).execute();
    const started = Date.now();
    const status = await waitUntil(
      async () => {
        const { status } = await send("GET", `/tenants/${tenant.id}`, token);
        return status !== 200 && status;
      },
      { what: "the revoked key's token to be refused", timeoutMs: 6_000, intervalMs: 100 },
    );
    expect(status).toBe(401);
    expect(Date.now() - started).toBeLessThan(5_000);
  }, 10_000);

  it("needs liveEnabled and an admin or live token for live keys", async () => {
    const { tenant, apiKey } = await createTenant();
    const sandboxToken = await exchange(apiKey.id, apiKey.secret);
    const notEnabled = await post(`/tenants/${tenant.id}/api-keys`, admin, { environment: "live" });
    expect(notEnabled.status).toBe(403);
    expect(((await notEnabled.json()) as { message: string }).message).toBe("Tenant is not enabled for live");
    await send("PATCH", `/tenants/${tenant.id}`, admin, { liveEnabled: true });
    const fromSandbox = await post(`/tenants/${tenant.id}/api-keys`, sandboxToken, { environment: "live" });
    expect(fromSandbox.status).toBe(403);
    expect(((await fromSandbox.json()) as { message: string }).message).toBe("A sandbox token cannot act on live");
    const live = (await (await post(`/tenants/${tenant.id}/api-keys`, admin, { environment: "live" })).json()) as { id: string; secret: string };
    expect(live.secret).toStartWith("psk_live_");
    const liveToken = await exchange(live.id, live.secret);
    expect(((await (await send("GET", "/auth/whoami", liveToken)).json()) as { environment: string }).environment).toBe("live");
    expect((await post(`/tenants/${tenant.id}/api-keys`, liveToken, { environment: "live" })).status).toBe(200);
    expect((await send("DELETE", `/tenants/${tenant.id}/api-keys/${live.id}`, sandboxToken)).status).toBe(403);
  });
});

describe("provider credentials", () => {
  const setB = { masterKey: "mk_test_aaaa1111", privateKey: "pk_test_bbbb2222", token: "tk_test_cccc3333", environment: "sandbox" };

  it("names the missing or wrong field", async () => {
    const { tenant } = await createTenant();
    const response = await send("PUT", `/tenants/${tenant.id}/credentials/providerB`, admin, { privateKey: "x", token: "", environment: "prod" });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { message: string[] }).message).toEqual([
      "masterKey should not be empty",
      "token should not be empty",
      "environment must be one of the following values: sandbox, live",
    ]);
  });

  it("stores a set sealed, shows it masked only, and keeps replaced versions for payments made with them", async () => {
    const { tenant, apiKey } = await createTenant();
    const token = await exchange(apiKey.id, apiKey.secret);
    const stored = await send("PUT", `/tenants/${tenant.id}/credentials/providerB`, token, setB);
    expect(stored.status).toBe(200);
    const view = await stored.json();
    expect(view).toMatchObject({ environment: "sandbox", masterKey: "…1111", privateKey: "…2222", token: "…3333", publicKey: null, version: 1 });
    const text = JSON.stringify(view) + (await (await send("GET", `/tenants/${tenant.id}/credentials/providerB`, token)).text());
    for (const value of [setB.masterKey, setB.privateKey, setB.token]) expect(text).not.toContain(value);
    const raw = JSON.stringify((await sql`select * from provider_credentials`.execute(tg.gateway.deps.db)).rows);
    for (const value of [setB.masterKey, setB.privateKey, setB.token]) expect(raw).not.toContain(value);

    const replaced = await send("PUT", `/tenants/${tenant.id}/credentials/providerB`, token, {
      ...setB,
      masterKey: "mk_test_dddd4444",
      publicKey: "pub_eeee5555",
    });
    expect(await replaced.json()).toMatchObject({ version: 2, masterKey: "…4444", publicKey: "…5555" });
    const list = (await (await send("GET", `/tenants/${tenant.id}/credentials/providerB`, token)).json()) as { data: { version: number }[] };
    expect(list.data.map((s) => s.version)).toEqual([2]);

    const deps = tg.gateway.deps;
    const v1 = await openCredentials(deps, { tenantId: tenant.id, provider: "providerB", environment: "sandbox", version: 1 });
    expect(v1?.fields.masterKey).toBe(setB.masterKey);
    const active = await openCredentials(deps, { tenantId: tenant.id, provider: "providerB", environment: "sandbox" });
    expect(active).toMatchObject({ version: 2, fields: { masterKey: "mk_test_dddd4444", publicKey: "pub_eeee5555" } });

    // Every version, masked, newest first: what a payment's credentialVersion points to.
    const versionsRead = await send("GET", `/tenants/${tenant.id}/credentials/providerB/versions`, token);
    const versionsText = await versionsRead.text();
    for (const value of [setB.masterKey, setB.privateKey, setB.token, "mk_test_dddd4444", "pub_eeee5555"]) expect(versionsText).not.toContain(value);
    const versions = JSON.parse(versionsText) as { data: Record<string, unknown>[] };
    expect(versions.data).toEqual([
      {
        environment: "sandbox",
        version: 2,
        active: true,
        masked: { masterKey: "…4444", privateKey: "…2222", token: "…3333", publicKey: "…5555" },
        createdAt: expect.any(String),
        deactivatedAt: null,
      },
      {
        environment: "sandbox",
        version: 1,
        active: false,
        masked: { masterKey: "…1111", privateKey: "…2222", token: "…3333", publicKey: null },
        createdAt: expect.any(String),
        deactivatedAt: expect.any(String),
      },
    ]);
    expect(versions.data[1]!.deactivatedAt).toBe(versions.data[0]!.createdAt);

    expect((await send("DELETE", `/tenants/${tenant.id}/credentials/providerB/sandbox`, token)).status).toBe(200);
    expect((await send("DELETE", `/tenants/${tenant.id}/credentials/providerB/sandbox`, token)).status).toBe(404);
    const afterDelete = (await (await send("GET", `/tenants/${tenant.id}/credentials/providerB/versions`, token)).json()) as { data: { active: boolean }[] };
    expect(afterDelete.data.map((v) => v.active)).toEqual([false, false]);
    expect(await openCredentials(deps, { tenantId: tenant.id, provider: "providerB", environment: "sandbox" })).toBeNull();
    expect((await openCredentials(deps, { tenantId: tenant.id, provider: "providerB", environment: "sandbox", version: 2 }))?.fields.masterKey).toBe(
      "mk_test_dddd4444",
    );
  });

  it("keeps one set per environment, and live needs liveEnabled and an admin or live token", async () => {
    const { tenant, apiKey } = await createTenant();
    const token = await exchange(apiKey.id, apiKey.secret);
    expect((await send("PUT", `/tenants/${tenant.id}/credentials/providerB`, token, { ...setB, environment: "live" })).status).toBe(403);
    expect((await send("PUT", `/tenants/${tenant.id}/credentials/providerB`, admin, { ...setB, environment: "live" })).status).toBe(403);
    await send("PATCH", `/tenants/${tenant.id}`, admin, { liveEnabled: true });
    expect((await send("PUT", `/tenants/${tenant.id}/credentials/providerB`, token, { ...setB, environment: "live" })).status).toBe(403);
    expect((await send("PUT", `/tenants/${tenant.id}/credentials/providerB`, admin, { ...setB, environment: "live" })).status).toBe(200);
    expect((await send("PUT", `/tenants/${tenant.id}/credentials/providerB`, token, setB)).status).toBe(200);
    const list = (await (await send("GET", `/tenants/${tenant.id}/credentials/providerB`, admin)).json()) as { data: { environment: string }[] };
    expect(list.data.map((s) => s.environment).sort()).toEqual(["live", "sandbox"]);
  });

  it("stores a tenant's own provider A account the same way", async () => {
    const { tenant } = await createTenant();
    const stored = await send("PUT", `/tenants/${tenant.id}/credentials/providerA`, admin, {
      secretKey: "sk_sandbox_abcd9999",
      webhookSecret: "wh_sandbox_efgh8888",
      environment: "sandbox",
    });
    expect(await stored.json()).toMatchObject({ environment: "sandbox", secretKey: "…9999", webhookSecret: "…8888", version: 1 });
    const missing = await send("PUT", `/tenants/${tenant.id}/credentials/providerA`, admin, { environment: "sandbox" });
    expect(((await missing.json()) as { message: string[] }).message).toEqual(["secretKey should not be empty", "webhookSecret should not be empty"]);
    expect((await send("DELETE", `/tenants/${tenant.id}/credentials/providerA/sandbox`, admin)).status).toBe(200);
  });

  it("hides another tenant's credentials behind 404", async () => {
    const a = await createTenant();
    const b = await createTenant();
    await send("PUT", `/tenants/${a.tenant.id}/credentials/providerB`, admin, setB);
    const tokenB = await exchange(b.apiKey.id, b.apiKey.secret);
    for (const [method, path, body] of [
      ["GET", `/tenants/${a.tenant.id}/credentials/providerB`, undefined],
      ["GET", `/tenants/${a.tenant.id}/credentials/providerB/versions`, undefined],
      ["PUT", `/tenants/${a.tenant.id}/credentials/providerB`, setB],
      ["DELETE", `/tenants/${a.tenant.id}/credentials/providerB/sandbox`, undefined],
      ["GET", `/tenants/${a.tenant.id}/api-keys`, undefined],
      ["POST", `/tenants/${a.tenant.id}/api-keys`, { environment: "sandbox" }],
      ["DELETE", `/tenants/${a.tenant.id}/api-keys/${a.apiKey.id}`, undefined],
      ["POST", `/tenants/${a.tenant.id}/callback-secret/rotate`, undefined],
    ] as const) {
      const response = await send(method, path, tokenB, body);
      expect(`${method} ${path} ${response.status}`).toBe(`${method} ${path} 404`);
      expect(await response.text()).not.toContain("1111");
      // Naming A in x-tenant-id with B's token is a mismatch: 403, still no data.
      const mismatch = await send(method, path, tokenB, body, { "x-tenant-id": a.tenant.id });
      expect(`${method} ${path} ${mismatch.status}`).toBe(`${method} ${path} 403`);
      expect(((await mismatch.json()) as { code: string }).code).toBe("tenant_mismatch");
    }
    // Tenant-level objects are not environment-scoped, but a live token of B is still B.
    await send("PATCH", `/tenants/${b.tenant.id}`, admin, { liveEnabled: true });
    const liveB = (await (await post(`/tenants/${b.tenant.id}/api-keys`, admin, { environment: "live" })).json()) as { id: string; secret: string };
    const liveTokenB = await exchange(liveB.id, liveB.secret);
    expect((await send("GET", `/tenants/${a.tenant.id}/credentials/providerB`, liveTokenB)).status).toBe(404);
    // A's objects are untouched.
    expect(await openCredentials(tg.gateway.deps, { tenantId: a.tenant.id, provider: "providerB", environment: "sandbox" })).not.toBeNull();
    expect((await exchange(a.apiKey.id, a.apiKey.secret)).length).toBeGreaterThan(0);
  });
});

describe("rate limits", () => {
  it("answer 429 with Retry-After once a tenant's burst is spent, per environment, with the tenant's own limit", async () => {
    const { tenant, apiKey } = await createTenant();
    const token = await exchange(apiKey.id, apiKey.secret);
    await send("PATCH", `/tenants/${tenant.id}`, admin, { rateLimit: { rps: 1, burst: 3 }, liveEnabled: true });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await send("GET", `/tenants/${tenant.id}`, token)).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
    const limited = await send("GET", "/payments", token);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await limited.json()).toMatchObject({ statusCode: 429, code: "rate_limited", error: "Too Many Requests" });

    // The live environment has a budget of its own; operators are not held to the tenant's.
    const live = (await (await post(`/tenants/${tenant.id}/api-keys`, admin, { environment: "live" })).json()) as { id: string; secret: string };
    const liveToken = await exchange(live.id, live.secret);
    expect((await send("GET", `/tenants/${tenant.id}`, liveToken)).status).toBe(200);
    expect((await send("GET", `/tenants/${tenant.id}`, admin)).status).toBe(200);

    // Back to the service default: the next request is allowed again.
    await send("PATCH", `/tenants/${tenant.id}`, admin, { rateLimit: null });
    await Bun.sleep(1_100);
    expect((await send("GET", `/tenants/${tenant.id}`, token)).status).toBe(200);
  }, 15_000);
});

describe("POST /tenants/{tenant_id}/callback-secret/rotate", () => {
  it("issues a new secret and keeps the old one signing for 24 hours", async () => {
    const { tenant, callbackSecret, apiKey } = await createTenant();
    const token = await exchange(apiKey.id, apiKey.secret);
    const response = await send("POST", `/tenants/${tenant.id}/callback-secret/rotate`, token);
    expect(response.status).toBe(200);
    const rotated = (await response.json()) as { callbackSecret: string; previousExpiresAt: string };
    expect(rotated.callbackSecret).toStartWith("whsec_");
    expect(rotated.callbackSecret).not.toBe(callbackSecret);
    const deps = tg.gateway.deps;
    expect(await activeCallbackSecrets(deps, tenant.id)).toEqual([rotated.callbackSecret, callbackSecret]);
    const later = new Date(Date.now() + 24 * 3600_000 + 1_000);
    expect(await activeCallbackSecrets({ ...deps, now: () => later }, tenant.id)).toEqual([rotated.callbackSecret]);
  });
});
