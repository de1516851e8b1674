/**
 * Who reads which environment's provider credentials (contract §3): a sandbox token — minted, from an API
 * key, or the key itself as the bearer — sees the sandbox set only, masked or not; an operator or a live
 * tenant token sees both. Over real HTTP, on REST and `/trpc`.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";

let tg: TestGateway;
let base: string;
let admin: string;
let tenantId: string;
let apiKey: { id: string; secret: string };

const LIVE = {
  providerB: { masterKey: "mk_live_0000LIV1", privateKey: "pk_live_0000LIV2", token: "tk_live_0000LIV3", publicKey: "pub_live_0000LIV4" },
  providerA: { secretKey: "sk_live_0000LIV5", webhookSecret: "wh_live_0000LIV6" },
};
const SANDBOX = {
  providerB: { masterKey: "mk_test_SBOX1111", privateKey: "pk_test_SBOX2222", token: "tk_test_SBOX3333" },
  providerA: { secretKey: "sk_test_SBOX5555", webhookSecret: "wh_test_SBOX6666" },
};

const call = (method: string, path: string, token: string, body?: unknown) =>
  fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });

beforeAll(async () => {
  tg = await startTestGateway();
  base = (await tg.gateway.start({ workers: false })).url!;
  admin = await tg.adminToken();
  const created = (await (await call("POST", "/tenants", admin, { name: "Boutique" })).json()) as { tenant: { id: string }; apiKey: typeof apiKey };
  tenantId = created.tenant.id;
  apiKey = created.apiKey;
  expect((await call("PATCH", `/tenants/${tenantId}`, admin, { liveEnabled: true })).status).toBe(200);
  for (const provider of ["providerB", "providerA"] as const) {
    // Stored twice in live, so the versions list has an inactive live set too.
    for (const set of [
      { ...LIVE[provider], environment: "live" },
      { ...LIVE[provider], environment: "live" },
      { ...SANDBOX[provider], environment: "sandbox" },
    ])
      expect((await call("PUT", `/tenants/${tenantId}/credentials/${provider}`, admin, set)).status).toBe(200);
  }
}, 60_000);

afterAll(() => tg?.close(), 30_000);

/** The environments a token reads on each credentials read, REST and `/trpc`, and every text it got. */
async function readAs(token: string): Promise<{ environments: Record<string, string[]>; text: string }> {
  const environments: Record<string, string[]> = {};
  let text = "";
  for (const provider of ["providerB", "providerA"] as const) {
    for (const [name, path] of [
      ["get", `/tenants/${tenantId}/credentials/${provider}`],
      ["versions", `/tenants/${tenantId}/credentials/${provider}/versions`],
    ] as const) {
      const rest = await call("GET", path, token);
      expect(rest.status).toBe(200);
      const restText = await rest.text();
      const input = encodeURIComponent(JSON.stringify({ tenant_id: tenantId }));
      const trpc = await call("GET", `/trpc/credentials.${provider}.${name}?input=${input}`, token);
      expect(trpc.status).toBe(200);
      const trpcText = await trpc.text();
      text += restText + trpcText;
      const restData = (JSON.parse(restText) as { data: { environment: string }[] }).data;
      const trpcData = (JSON.parse(trpcText) as { result: { data: { data: { environment: string }[] } } }).result.data.data;
      expect(trpcData).toEqual(restData);
      environments[`${provider}.${name}`] = [...new Set(restData.map((set) => set.environment))].sort();
    }
  }
  return { environments, text };
}

const BOTH = {
  "providerB.get": ["live", "sandbox"],
  "providerB.versions": ["live", "sandbox"],
  "providerA.get": ["live", "sandbox"],
  "providerA.versions": ["live", "sandbox"],
};
const SANDBOX_ONLY = { "providerB.get": ["sandbox"], "providerB.versions": ["sandbox"], "providerA.get": ["sandbox"], "providerA.versions": ["sandbox"] };

describe("reading provider credentials", () => {
  it("a sandbox token sees the sandbox sets only: no live set, not even masked", async () => {
    const exchanged = (await (
      await fetch(`${base}/auth/token`, {
        method: "POST",
        headers: { authorization: `Basic ${btoa(`${apiKey.id}:${apiKey.secret}`)}` },
        body: new URLSearchParams({ grant_type: "client_credentials" }),
      })
    ).json()) as { access_token: string };
    for (const token of [await tg.tenantToken(tenantId, "sandbox"), exchanged.access_token, apiKey.secret]) {
      const { environments, text } = await readAs(token);
      expect(environments).toEqual(SANDBOX_ONLY);
      expect(text).not.toContain("LIV"); // the live sets' masks (`…LIV1`) and nothing else of them
      expect(text).toContain("…1111"); // the sandbox set is there
    }
  });

  it("an operator and a live tenant token see both environments", async () => {
    for (const token of [admin, await tg.adminToken("live"), await tg.tenantToken(tenantId, "live")]) expect((await readAs(token)).environments).toEqual(BOTH);
  });

  it("a sandbox token still cannot write or deactivate live (403), and its own environment works", async () => {
    const token = await tg.tenantToken(tenantId, "sandbox");
    expect((await call("PUT", `/tenants/${tenantId}/credentials/providerB`, token, { ...LIVE.providerB, environment: "live" })).status).toBe(403);
    expect((await call("DELETE", `/tenants/${tenantId}/credentials/providerB/live`, token)).status).toBe(403);
    expect((await call("PUT", `/tenants/${tenantId}/credentials/providerB`, token, { ...SANDBOX.providerB, environment: "sandbox" })).status).toBe(200);
  });
});
