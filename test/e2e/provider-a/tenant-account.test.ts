/**
 * A tenant's OWN provider A account end to end over real HTTP (issue 5, contract §3–§4): the tenant
 * stores the keys of a second simulator account; its payments are made on that account (the simulator
 * says so), that account's webhooks — pointed at `/providerA/webhook/sandbox/{tenant_id}` — move them, and
 * each webhook route accepts only its own account's secret. Another tenant (on the service's account)
 * never sees them.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { signProviderAWebhook } from "../../../src/providers/providerA/mod.ts";
import { createProviderASimulator, type ProviderASimulator } from "../../../src/providers/providerA/simulator/mod.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { waitUntil } from "../../support/wait.ts";

type Account = { secretKey: string; webhookSecret: string };

let simulator: ProviderASimulator;
let simServer: ReturnType<typeof Bun.serve>;
let simBase: string;
let service: Account;
let own: Account;
let tg: TestGateway;
let base: string;
let owner: { id: string; token: string };
let other: { id: string; token: string };

async function api(path: string, init: RequestInit & { token: string; json?: unknown }): Promise<{ status: number; body: any }> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${init.token}`);
  if (init.json !== undefined) headers.set("content-type", "application/json");
  const response = await fetch(`${base}${path}`, { ...init, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

async function newTenant(): Promise<{ id: string; token: string }> {
  const created = await api("/tenants", { method: "POST", token: await tg.adminToken(), json: { name: `Shop ${Math.random()}` } });
  expect(created.status).toBe(200);
  return { id: created.body.tenant.id, token: await tg.tenantToken(created.body.tenant.id) };
}

const payment = (amount: number) => ({
  description: "Own account",
  amount,
  payment_method: "mnoA_open",
  phone_number: { number: "+22997000000", country: "bj" },
});

/** The transaction as an account sees it on the simulator (another account's is 404). */
const simRead = (id: number, key: string) => fetch(`${simBase}/v1/transactions/${id}`, { headers: { authorization: `Bearer ${key}` } });

const setWebhook = (key: string, url: string | null) =>
  fetch(`${simBase}/_sim/accounts/${key}/webhook`, { method: "PUT", headers: { "content-type": "application/json" }, body: JSON.stringify({ url }) });

const stateOf = async (paymentId: string) =>
  await tg.gateway.deps.db
    .selectFrom("payments")
    .select(["state", "provider_account", "provider_synced_at"])
    .where("id", "=", paymentId)
    .executeTakeFirstOrThrow();

const postWebhook = (path: string, raw: string, signature: string) =>
  fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-fedapay-signature": signature }, body: raw });

beforeAll(async () => {
  simulator = createProviderASimulator({ approveDelayMs: 150, webhookRetryDelaysMs: [50, 100, 200], webhookTimeoutMs: 3_000 });
  simServer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: simulator.fetch });
  simBase = simServer.url.toString().replace(/\/$/, "");
  const make = async () => (await (await fetch(`${simBase}/_sim/accounts`, { method: "POST" })).json()) as Account;
  service = await make();
  own = await make();
  tg = await startTestGateway({
    PROVIDER_A_SANDBOX_URL: simBase,
    PROVIDER_A_SANDBOX_SECRET_KEY: service.secretKey,
    PROVIDER_A_SANDBOX_WEBHOOK_SECRET: service.webhookSecret,
  });
  base = (await tg.gateway.start()).url!;
  owner = await newTenant();
  other = await newTenant();
  const stored = await api(`/tenants/${owner.id}/credentials/providerA`, {
    method: "PUT",
    token: owner.token,
    json: { environment: "sandbox", secretKey: own.secretKey, webhookSecret: own.webhookSecret },
  });
  expect(stored.status).toBe(200);
  expect(JSON.stringify(stored.body)).not.toContain(own.secretKey);
  expect((await setWebhook(own.secretKey, `${base}/providerA/webhook/sandbox/${owner.id}`)).status).toBe(200);
});

afterAll(async () => {
  simulator?.close();
  await tg?.close();
  await simServer?.stop(true);
});

describe("a tenant's own provider A account", () => {
  it("makes the tenant's payments on its own account, and that account's webhook on the tenant route settles them", async () => {
    const created = await api("/providerA/direct-payment", { method: "POST", token: owner.token, json: payment(2000) });
    expect(created.status).toBe(200);
    const { transactionId, paymentId } = created.body;
    // The simulator: the transaction belongs to the tenant's account, not the service's.
    expect((await simRead(transactionId, own.secretKey)).status).toBe(200);
    expect((await simRead(transactionId, service.secretKey)).status).toBe(404);
    const row = await stateOf(paymentId);
    expect(row.provider_account).not.toBe("service");

    // The customer approves; the own account's webhook reaches /providerA/webhook/sandbox/{tenant_id}.
    expect((await fetch(`${simBase}/_sim/transactions/${transactionId}/approve`, { method: "POST" })).status).toBe(200);
    // Read from the database (a status read would refresh it itself); well before the first sync run (5 s).
    await waitUntil(async () => ((await stateOf(paymentId)).state === "succeeded" ? true : undefined), {
      what: "the webhook settled it",
      timeoutMs: 3_000,
      intervalMs: 50,
    });
    await simulator.webhooksIdle();
    const sent = (await (await fetch(`${simBase}/_sim/accounts/${own.secretKey}/webhook`)).json()) as {
      url: string;
      deliveries: { transactionId: number; event: string; url: string; status: string; lastResponseStatus: number | null }[];
    };
    const approvedHook = sent.deliveries.find((d) => d.transactionId === transactionId && d.event === "transaction.approved");
    expect(approvedHook).toMatchObject({ url: `${base}/providerA/webhook/sandbox/${owner.id}`, status: "delivered", lastResponseStatus: 200 });

    const status = await api(`/providerA/transaction/${transactionId}/status`, { token: owner.token });
    expect(status.body).toMatchObject({ status: "approved", approved: true, paymentId });
    const events = await tg.gateway.deps.db.selectFrom("events").select("type").where("payment_id", "=", paymentId).execute();
    expect(events.map((e) => e.type)).toEqual(["payment.completed"]);
  });

  it("is invisible to another tenant, whose payments stay on the service's account", async () => {
    const mine = (await api("/providerA/direct-payment", { method: "POST", token: owner.token, json: payment(2500) })).body;
    const theirs = await api("/providerA/direct-payment", { method: "POST", token: other.token, json: payment(2500) });
    expect(theirs.status).toBe(200);
    expect((await simRead(theirs.body.transactionId, service.secretKey)).status).toBe(200);
    expect((await simRead(theirs.body.transactionId, own.secretKey)).status).toBe(404);
    expect((await stateOf(theirs.body.paymentId)).provider_account).toBe("service");
    for (const path of [
      `/providerA/transaction/${mine.transactionId}/status`,
      `/providerA/transaction/${mine.transactionId}/is-approved`,
      `/payments/${mine.paymentId}`,
    ])
      expect((await api(path, { token: other.token })).status).toBe(404);
    expect((await api(`/providerA/transaction/${theirs.body.transactionId}/status`, { token: owner.token })).status).toBe(404);
    // Live is another environment: 404 there too.
    const live = await api(`/providerA/transaction/${mine.transactionId}/status`, { token: await tg.adminToken("live"), headers: { "x-tenant-id": owner.id } });
    expect(live.status).toBe(404);
  });

  it("accepts only the own account's secret on the tenant route, and only the service's on the service route", async () => {
    const { transactionId } = (await api("/providerA/direct-payment", { method: "POST", token: owner.token, json: payment(3000) })).body;
    const raw = JSON.stringify({ name: "transaction.created", entity: { id: transactionId } });
    const now = Math.floor(Date.now() / 1000);
    const tenantRoute = `/providerA/webhook/sandbox/${owner.id}`;
    expect((await postWebhook(tenantRoute, raw, signProviderAWebhook(service.webhookSecret, now, raw))).status).toBe(401);
    expect((await postWebhook("/providerA/webhook/sandbox", raw, signProviderAWebhook(own.webhookSecret, now, raw))).status).toBe(401);
    expect((await postWebhook(tenantRoute, raw, signProviderAWebhook(own.webhookSecret, now, raw))).status).toBe(200);
    expect((await postWebhook(tenantRoute, raw, signProviderAWebhook(own.webhookSecret, now - 301, raw))).status).toBe(401);
    // A tenant without an account of its own, an unknown tenant, a malformed id: nothing verifies there.
    expect((await postWebhook(`/providerA/webhook/sandbox/${other.id}`, raw, signProviderAWebhook(own.webhookSecret, now, raw))).status).toBe(401);
    expect(
      (await postWebhook(`/providerA/webhook/sandbox/ten_01JD3Z6Q5W8B8Y4G1M7T2N9XKC`, raw, signProviderAWebhook(own.webhookSecret, now, raw))).status,
    ).toBe(401);
    expect((await postWebhook(`/providerA/webhook/sandbox/nope`, raw, signProviderAWebhook(own.webhookSecret, now, raw))).status).toBe(401);
  });

  it("applies a tenant-route webhook only to that account's transactions", async () => {
    // The service account sends no webhooks here, so only our forged one could move the other tenant's payment.
    await setWebhook(service.secretKey, null);
    const theirs = (await api("/providerA/direct-payment", { method: "POST", token: other.token, json: payment(4000) })).body;
    expect((await fetch(`${simBase}/_sim/transactions/${theirs.transactionId}/approve`, { method: "POST" })).status).toBe(200);
    const before = await stateOf(theirs.paymentId);
    const raw = JSON.stringify({ name: "transaction.approved", entity: { id: theirs.transactionId } });
    const signed = signProviderAWebhook(own.webhookSecret, Math.floor(Date.now() / 1000), raw);
    expect((await postWebhook(`/providerA/webhook/sandbox/${owner.id}`, raw, signed)).status).toBe(200);
    const after = await stateOf(theirs.paymentId);
    expect(after.state).toBe("pending");
    expect(after.provider_synced_at?.getTime() ?? null).toBe(before.provider_synced_at?.getTime() ?? null);
    // Its own account's route does settle it.
    const service_ = signProviderAWebhook(service.webhookSecret, Math.floor(Date.now() / 1000), raw);
    expect((await postWebhook("/providerA/webhook/sandbox", raw, service_)).status).toBe(200);
    expect((await stateOf(theirs.paymentId)).state).toBe("succeeded");
  });
});

describe("the order of states on the tenant's account (contract §4)", () => {
  it("a refund after approval sends payment.refunded once; nothing goes back to pending or approved", async () => {
    const { transactionId, paymentId } = (await api("/providerA/direct-payment", { method: "POST", token: owner.token, json: payment(1500) })).body;
    expect((await fetch(`${simBase}/_sim/transactions/${transactionId}/approve`, { method: "POST" })).status).toBe(200);
    await waitUntil(async () => ((await stateOf(paymentId)).state === "succeeded" ? true : undefined), { what: "approved", timeoutMs: 3_000, intervalMs: 50 });
    expect((await fetch(`${simBase}/_sim/transactions/${transactionId}/refund`, { method: "POST" })).status).toBe(200);
    await waitUntil(async () => ((await stateOf(paymentId)).state === "refunded" ? true : undefined), { what: "refunded", timeoutMs: 3_000, intervalMs: 50 });
    await simulator.webhooksIdle();
    const status = await api(`/providerA/transaction/${transactionId}/status`, { token: owner.token });
    expect(status.body).toMatchObject({ status: "refunded", approved: false });
    expect((await api(`/providerA/transaction/${transactionId}/is-approved`, { token: owner.token })).body).toEqual({
      transactionId,
      approved: false,
      status: "refunded",
    });
    // The same webhook again changes nothing.
    const raw = JSON.stringify({ name: "transaction.approved", entity: { id: transactionId } });
    expect(
      (await postWebhook(`/providerA/webhook/sandbox/${owner.id}`, raw, signProviderAWebhook(own.webhookSecret, Math.floor(Date.now() / 1000), raw))).status,
    ).toBe(200);
    const events = await tg.gateway.deps.db.selectFrom("events").select("type").where("payment_id", "=", paymentId).orderBy("created_at").execute();
    expect(events.map((e) => e.type)).toEqual(["payment.completed", "payment.refunded"]);
    expect((await stateOf(paymentId)).state).toBe("refunded");
  });
});
