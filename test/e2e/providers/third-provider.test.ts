/**
 * A third provider is a folder (issue 14, point 3): provider C, written in test/support/third-provider.ts
 * with nothing but the library's public exports and served over real HTTP here, is registered next to the
 * default providers and paid through end to end — `POST /payments` picks it for a Wave phone in Senegal,
 * its signed notification moves the payment, the merchant's webhook endpoint gets the event, the payment
 * reads back succeeded, a lost notification is made up by the sync schedule, and a forged one moves nothing.
 *
 * It declares itself (issue 26 point 4): its variables are validated by `loadConfig` through the registry,
 * its credential fields are served by the credentials API and shown, labelled in English and French, in the
 * dashboard's Settings, and its routes are in the OpenAPI document of the gateway built with it.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { Webhook } from "standardwebhooks";
import { ConfigError, DEFAULT_PROVIDERS, generateOpenApi, loadConfig } from "../../../src/mod.ts";
import { syncDirectPayment } from "../../../src/services/direct-payments/mod.ts";
import { describeWithChromium, launchChromium } from "../../support/browser.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { providerC, type ProviderCServer, signProviderC, startProviderC } from "../../support/third-provider.ts";
import { virtualTime } from "../../support/virtual-time.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

const API_KEY = "pc_test_key";
const SECRET = "pc_notify_secret";
const PROVIDERS = [...DEFAULT_PROVIDERS, providerC];
/** The gateway runs on virtual time: its sync steps run when a test moves the clock, not seconds later. */
const time = virtualTime();

let server: ProviderCServer;
let tg: TestGateway;
let base: string;
let receiver: WebhookReceiver;
let tenant: { id: string; token: string; keyId: string; secret: string };
let endpointSecret: string;

async function api(path: string, init: { method?: string; json?: unknown; token?: string; headers?: Record<string, string> } = {}) {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${init.token ?? tenant.token}`);
  if (init.json !== undefined) headers.set("content-type", "application/json");
  const response = await fetch(`${base}${path}`, {
    method: init.method ?? "GET",
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

function wavePayment(overrides: Record<string, unknown> = {}) {
  return { amount: 700, description: "Thiébou dieune", operator: "wave", customer: { phone: { number: "+221770000001", country: "sn" } }, ...overrides };
}

beforeAll(async () => {
  server = startProviderC({ apiKeys: [API_KEY], secret: SECRET });
  tg = await startTestGateway({ PROVIDER_C_URL: server.url, PROVIDER_C_API_KEY: API_KEY, PROVIDER_C_NOTIFY_SECRET: SECRET }, { providers: PROVIDERS, time });
  base = (await tg.gateway.start()).url!;
  server.notifyUrl = `${base}/providerC/notify`;
  receiver = await startReceiver();
  const created = await api("/tenants", { method: "POST", token: await tg.adminToken(), json: { name: "Dakar shop" } });
  expect(created.status).toBe(200);
  tenant = {
    id: created.body.tenant.id,
    token: await tg.tenantToken(created.body.tenant.id),
    keyId: created.body.apiKey.id,
    secret: created.body.apiKey.secret,
  };
  const endpoint = await api("/webhooks", { method: "POST", json: { url: `${receiver.url}/hooks`, events: ["payment.completed", "payment.failed"] } });
  expect(endpoint.status).toBe(200);
  endpointSecret = endpoint.body.secret;
});

afterAll(async () => {
  await tg?.close();
  await receiver?.stop();
  await server?.stop();
});

describe("a third provider registered beside the defaults", () => {
  it("takes a payment through POST /payments, is notified, and the merchant gets the event", async () => {
    const first = await api("/payments", { method: "POST", json: wavePayment(), headers: { "idempotency-key": "wave-1" } });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      provider: "providerC",
      kind: "direct_payment",
      state: "pending",
      amount: 700,
      currency: "XOF",
      paymentMethod: "wave_sn",
      providerTransactionId: "col_1",
      customer: { phone: "+221770000001", country: "sn" },
    });
    // The same Idempotency-Key answers the same payment: provider C was asked once.
    const again = await api("/payments", { method: "POST", json: wavePayment(), headers: { "idempotency-key": "wave-1" } });
    expect(again.body.id).toBe(first.body.id);
    expect(server.calls.filter((call) => call === "POST /v1/collections")).toHaveLength(1);
    expect(server.collections.get("col_1")).toMatchObject({ reference: first.body.id, amount: 700, currency: "XOF", msisdn: "+221770000001" });

    // The customer pays; provider C notifies the gateway, which reads the collection back and moves the payment.
    expect(await server.settle("col_1", "SUCCESSFUL")).toBe(200);
    const read = await api(`/payments/${first.body.id}`);
    expect(read.body).toMatchObject({ id: first.body.id, provider: "providerC", state: "succeeded", providerStatus: "SUCCESSFUL" });
    expect(server.calls).toContain("GET /v1/collections/col_1");

    const receipt = await waitUntil(() => receiver.receipts.find((r) => r.path === "/hooks" && r.body.includes(first.body.id)), { what: "the webhook" });
    const event = new Webhook(endpointSecret).verify(receipt.body, receipt.headers) as { type: string; data: Record<string, unknown> };
    expect(event.type).toBe("payment.completed");
    expect(event.data).toMatchObject({ paymentId: first.body.id, provider: "providerC", providerTransactionId: "col_1", status: "approved", amount: 700 });
    const events = await tg.gateway.deps.db.selectFrom("events").select("type").where("payment_id", "=", first.body.id).execute();
    expect(events.map((e) => e.type)).toEqual(["payment.completed"]);
  });

  it("refuses a forged notification and moves nothing", async () => {
    const payment = await api("/payments", { method: "POST", json: wavePayment({ amount: 800 }) });
    const id = payment.body.providerTransactionId as string;
    server.collections.get(id)!.status = "FAILED";
    const body = JSON.stringify({ event: "collection.updated", data: { id, status: "FAILED" } });
    const forged = await fetch(`${base}/providerC/notify`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-providerc-signature": signProviderC("not-the-secret", body) },
      body,
    });
    expect(forged.status).toBe(401);
    expect((await api(`/payments/${payment.body.id}`)).body.state).toBe("pending");
    // The genuine one moves it.
    const genuine = await fetch(`${base}/providerC/notify`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-providerc-signature": signProviderC(SECRET, body) },
      body,
    });
    expect(genuine.status).toBe(200);
    expect((await api(`/payments/${payment.body.id}`)).body).toMatchObject({ state: "failed", providerStatus: "FAILED" });
  });

  it("settles a payment whose notification was lost on the sync schedule", async () => {
    const payment = await api("/payments", { method: "POST", json: wavePayment({ amount: 900 }) });
    await server.settle(payment.body.providerTransactionId, "SUCCESSFUL", { notify: false });
    expect((await api(`/payments/${payment.body.id}`)).body.state).toBe("pending");
    await syncDirectPayment(tg.gateway.deps, { paymentId: payment.body.id, step: 0 });
    expect((await api(`/payments/${payment.body.id}`)).body).toMatchObject({ state: "succeeded", providerStatus: "SUCCESSFUL" });
  });

  it("follows a pending payment on its own providerC-sync queue: the first step, 5 s after creation, settles it", async () => {
    const payment = await api("/payments", { method: "POST", json: wavePayment({ amount: 950 }) });
    await server.settle(payment.body.providerTransactionId, "SUCCESSFUL", { notify: false });
    expect(tg.gateway.deps.syncHold.size).toBeGreaterThanOrEqual(1);
    const stateOf = async () =>
      (await tg.gateway.deps.db.selectFrom("payments").select("state").where("id", "=", payment.body.id).executeTakeFirstOrThrow()).state;
    // Nothing reads provider C before the step is due.
    await time.advance(4_999);
    expect(await stateOf()).toBe("pending");
    expect(server.calls).not.toContain(`GET /v1/collections/${payment.body.providerTransactionId}`);
    await time.advance(1);
    const settled = await waitUntil(async () => ((await stateOf()) === "succeeded" ? "succeeded" : undefined), {
      what: "the first sync step on providerC-sync",
      timeoutMs: 10_000,
      intervalMs: 50,
    });
    expect(settled).toBe("succeeded");
    // Nothing else could have settled it (no notification, no read): the gateway runs a sync queue per provider.
    expect((await tg.gateway.deps.queue.stats?.())?.map((q) => q.queue)).toContain("providerC-sync");
  });

  it("answers a refusal as a direct payment's: 422, the payment failed", async () => {
    const refused = await api("/payments", { method: "POST", json: wavePayment({ amount: 200_000 }) });
    expect(refused.status).toBe(422);
    expect(refused.body.message).toContain("Provider C refused the request (amount_too_high)");
    const listed = await api("/payments?provider=providerC&state=failed");
    expect(listed.body.data.map((p: { amount: number }) => p.amount)).toContain(200_000);
  });

  it("routes an operator only to a provider that serves it, and filters by the providers the gateway runs", async () => {
    const mtn = await api("/payments", {
      method: "POST",
      json: wavePayment({ operator: "wave", customer: { phone: { number: "+22997000000", country: "bj" } } }),
    });
    expect(mtn.status).toBe(400);
    expect(mtn.body.message).toEqual(["operator wave is not available for country bj"]);
    expect((await api("/payments?provider=providerD")).status).toBe(400);
    expect((await api("/payments?provider=providerC")).body.data.length).toBeGreaterThanOrEqual(4);
  });
});

describe("a third provider declares itself", () => {
  it("has its variables validated by loadConfig through the registry, each named when it is wrong", () => {
    const env = { NODE_ENV: "test", PROVIDER_C_URL: "http://127.0.0.1:9", PROVIDER_C_API_KEY: API_KEY, PROVIDER_C_NOTIFY_SECRET: SECRET };
    expect(loadConfig(env, { providers: PROVIDERS }).providerC).toEqual({ url: "http://127.0.0.1:9", apiKey: API_KEY, notifySecret: SECRET });
    expect(tg.config.providerC).toEqual({ url: server.url, apiKey: API_KEY, notifySecret: SECRET });
    expect(() => loadConfig({ ...env, PROVIDER_C_URL: "ftp://example.com" }, { providers: PROVIDERS })).toThrow(/^Invalid configuration: PROVIDER_C_URL/);
    expect(() => loadConfig({ ...env, PROVIDER_C_API_KEY: undefined }, { providers: PROVIDERS })).toThrow(ConfigError);
    expect(() => loadConfig({ ...env, PROVIDER_C_API_KEY: undefined }, { providers: PROVIDERS })).toThrow(/PROVIDER_C_API_KEY/);
    // A gateway without it neither reads nor requires them.
    expect(loadConfig({ NODE_ENV: "test" }).providerC).toBeUndefined();
  });

  it("documents its inbound route and its credentials in the OpenAPI document of the gateway built with it", async () => {
    const served = await fetch(`${base}/openapi.json`);
    expect(served.status).toBe(200);
    const document = (await served.json()) as {
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, { properties: object }> };
    };
    expect(Object.keys(document.paths["/providerC/notify"] ?? {})).toEqual(["post"]);
    expect(Object.keys(document.paths["/tenants/{tenant_id}/credentials/providerC"] ?? {}).sort()).toEqual(["get", "put"]);
    expect(Object.keys(document.components.schemas.ProviderCCredentials?.properties ?? {})).toEqual(["environment", "apiKey", "version", "updatedAt"]);
    // The defaults' document has none of it.
    const defaults = (await generateOpenApi()) as unknown as typeof document;
    expect(defaults.paths["/providerC/notify"]).toBeUndefined();
    expect(defaults.paths["/tenants/{tenant_id}/credentials/providerC"]).toBeUndefined();
    expect(defaults.paths["/tenants/{tenant_id}/credentials/providerB"]).toBeDefined();
  });

  it("has its credential fields served by the credentials API: listed with their labels, read, and required as declared", async () => {
    const listed = await api("/credentials/providers");
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((p: { provider: string }) => p.provider)).toEqual(["providerA", "providerB", "providerC"]);
    expect(listed.body.data[2]).toEqual({
      provider: "providerC",
      label: "Provider C",
      title: { en: "Your own provider C account (optional)", fr: "Votre propre compte fournisseur C (facultatif)" },
      hint: { en: "Wave payments in Senegal go through it when it is stored.", fr: "Les paiements Wave au Sénégal passent par ce compte s'il est enregistré." },
      fields: [{ name: "apiKey", optional: false, label: { en: "API key", fr: "Clé d'API" } }],
    });
    expect((await api(`/tenants/${tenant.id}/credentials/providerC`)).body).toEqual({ data: [] });
    expect((await api(`/tenants/${tenant.id}/credentials/providerC/versions`)).body).toEqual({ data: [] });
    // Its declared field is required, and must be a usable key.
    const missing = await api(`/tenants/${tenant.id}/credentials/providerC`, { method: "PUT", json: { environment: "sandbox" } });
    expect(missing.status).toBe(400);
    expect(JSON.stringify(missing.body.message)).toContain("apiKey");
    const spaced = await api(`/tenants/${tenant.id}/credentials/providerC`, { method: "PUT", json: { environment: "sandbox", apiKey: "two words" } });
    expect(spaced.status).toBe(400);
    // A usable key is stored (sealed), shown masked from then on, and listed as its first version.
    const stored = await api(`/tenants/${tenant.id}/credentials/providerC`, {
      method: "PUT",
      json: { environment: "sandbox", apiKey: "pc_test_0123456789abcdef" },
    });
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ environment: "sandbox", version: 1, apiKey: "…cdef" });
    expect(JSON.stringify((await api(`/tenants/${tenant.id}/credentials/providerC`)).body)).not.toContain("0123456789");
    expect((await api(`/tenants/${tenant.id}/credentials/providerC/versions`)).body.data).toHaveLength(1);
    // A provider the gateway does not run has no credential routes.
    expect((await api(`/tenants/${tenant.id}/credentials/providerD`)).status).toBe(404);
  });
});

describeWithChromium("a third provider in the dashboard's Settings", () => {
  for (const [languages, expected] of [
    [["en-US", "en"], { title: "Your own provider C account (optional)", field: "API key" }],
    [["fr-FR", "fr"], { title: "Votre propre compte fournisseur C (facultatif)", field: "Clé d'API" }],
  ] as const) {
    it(`shows its section and its field, labelled in ${languages[1]}, beside the defaults'`, async () => {
      const browser = await launchChromium();
      try {
        const page = await browser.newPage();
        await page.addInitScript((preferred: readonly string[]) => {
          Object.defineProperty(navigator, "languages", { get: () => preferred });
          Object.defineProperty(navigator, "language", { get: () => preferred[0] });
        }, languages);
        await page.goto(`${base}/dashboard`);
        // A developer's sign-in with an API key: its tab first (people sign in with e-mail and password).
        await page.locator('[role="tab"][data-mode="tenant"]').click();
        await page.locator('input[name="keyId"]').fill(tenant.keyId);
        await page.locator('input[name="secret"]').fill(tenant.secret);
        await page.locator('form button[type="submit"]').click();
        await page.locator('[data-testid="environment"]').waitFor();
        await page.locator('nav a[href="#/settings"]').click();
        const section = page.locator('[data-testid="provider-c"]');
        await section.getByRole("heading", { name: expected.title, exact: true }).waitFor();
        await section.getByLabel(expected.field, { exact: true }).waitFor();
        expect(await section.locator('input[name="apiKey"]').getAttribute("type")).toBe("password");
        expect(await page.locator('[data-testid="provider-a"], [data-testid="provider-b"]').count()).toBe(2);
      } finally {
        await browser.close();
      }
    }, 30_000);
  }
});
