/**
 * Provider A direct payments end to end over real HTTP (issue 5, contract §4): a started gateway, the
 * provider A simulator on its own port behind a small fault-injecting proxy, and a callback receiver.
 *
 * The gateway runs on virtual time (`virtual-time.ts`), the simulator dating and signing on the same clock:
 * a sync step, the refresh floor and "2 min on" happen when a test moves the clock. What takes real time
 * stays real: HTTP timeouts (PROVIDER_TIMEOUT_MS), the simulator's approvals and webhook retries.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { Webhook } from "standardwebhooks";
import { createProviderASimulator, type ProviderASimulator } from "../../../src/providers/providerA/simulator/mod.ts";
import { signProviderAWebhook } from "../../../src/providers/providerA/mod.ts";
import { DIRECT_PAYMENT_SYNC } from "../../../src/services/direct-payments/sync-jobs.ts";
import { runSweeper } from "../../../src/services/webhooks/sweeper.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { advanceThroughWaits, virtualTime } from "../../support/virtual-time.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

const TIMEOUT_MS = 1_500;
/** The gateway's and the simulator's clock: it stands still unless a test moves it. */
const time = virtualTime();
/** The gateway's clock in whole seconds, as a webhook's signature timestamp. */
const nowSeconds = () => Math.floor(time.now().getTime() / 1000);

/** What the proxy in front of the simulator does to the next matching request. */
type Fault = { match: RegExp; kind: "slow" | "refuse" | "fail5xx" };

let simulator: ProviderASimulator;
let simServer: ReturnType<typeof Bun.serve>;
let proxy: ReturnType<typeof Bun.serve>;
let simBase: string;
const faults: Fault[] = [];
const upstreamCalls: string[] = [];
let account: { secretKey: string; webhookSecret: string };
let otherAccount: { secretKey: string; webhookSecret: string };
let tg: TestGateway;
let base: string;
let receiver: WebhookReceiver;
let tenant: { id: string; token: string; callbackSecret: string };

async function startProxy() {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const path = url.pathname;
      upstreamCalls.push(`${request.method} ${path}`);
      const index = faults.findIndex((fault) => fault.match.test(`${request.method} ${path}`));
      const fault = index >= 0 ? faults.splice(index, 1)[0] : undefined;
      if (fault?.kind === "refuse")
        return Response.json({ message: "Transaction could not be created", errors: { amount: ["is over the account limit"] } }, { status: 422 });
      if (fault?.kind === "fail5xx") return Response.json({ message: "Server error" }, { status: 500 });
      const headers = new Headers(request.headers);
      headers.delete("host");
      const forwarded = await fetch(`${simBase}${path}${url.search}`, {
        method: request.method,
        headers,
        body: request.method === "GET" ? undefined : await request.arrayBuffer(),
      });
      const body = await forwarded.arrayBuffer();
      // The provider acted, but its answer arrives after the gateway's timeout.
      if (fault?.kind === "slow") await Bun.sleep(TIMEOUT_MS * 3);
      return new Response(body, { status: forwarded.status, headers: { "content-type": "application/json" } });
    },
  });
}

async function api(path: string, init: RequestInit & { token?: string; json?: unknown } = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${init.token ?? tenant.token}`);
  if (init.json !== undefined) headers.set("content-type", "application/json");
  const response = await fetch(`${base}${path}`, { ...init, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
}

function payment(overrides: Record<string, unknown> = {}) {
  return {
    description: "Order 1042",
    amount: 500,
    payment_method: "mnoA_open",
    phone_number: { number: "+22997000000", country: "bj" },
    firstname: "Ada",
    lastname: "Lovelace",
    email: "ada@example.com",
    ...overrides,
  };
}

async function newTenant(): Promise<{ id: string; token: string; callbackSecret: string }> {
  const created = await api("/tenants", { method: "POST", token: await tg.adminToken(), json: { name: `Shop ${Math.random()}` } });
  expect(created.status).toBe(200);
  return { id: created.body.tenant.id, token: await tg.tenantToken(created.body.tenant.id), callbackSecret: created.body.callbackSecret };
}

async function statusOf(transactionId: number, token = tenant.token) {
  return api(`/providerA/transaction/${transactionId}/status`, { token });
}

async function waitForStatus(transactionId: number, status: string, timeoutMs = 8_000) {
  return waitUntil(
    async () => {
      const read = await statusOf(transactionId);
      return read.body?.status === status ? read.body : undefined;
    },
    { what: `transaction ${transactionId} ${status}`, timeoutMs, intervalMs: 100 },
  );
}

/** Points the service account's webhooks at `url` in the simulator (null: the provider sends none). */
async function pointProviderWebhooks(url: string | null): Promise<void> {
  await fetch(`${simBase}/_sim/accounts/${account.secretKey}/webhook`, {
    method: "PUT",
    body: JSON.stringify({ url }),
    headers: { "content-type": "application/json" },
  });
}

async function eventsOf(paymentId: string): Promise<{ type: string }[]> {
  return tg.gateway.deps.db.selectFrom("events").select(["type"]).where("payment_id", "=", paymentId).execute();
}

beforeAll(async () => {
  simulator = createProviderASimulator({ approveDelayMs: 150, webhookRetryDelaysMs: [50, 100, 200], webhookTimeoutMs: 3_000, now: () => time.now() });
  simServer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: simulator.fetch });
  simBase = simServer.url.toString().replace(/\/$/, "");
  proxy = await startProxy();
  const make = async () => (await (await fetch(`${simBase}/_sim/accounts`, { method: "POST" })).json()) as { secretKey: string; webhookSecret: string };
  account = await make();
  otherAccount = await make();
  tg = await startTestGateway(
    {
      PROVIDER_A_SANDBOX_URL: proxy.url.toString().replace(/\/$/, ""),
      PROVIDER_A_SANDBOX_SECRET_KEY: account.secretKey,
      PROVIDER_A_SANDBOX_WEBHOOK_SECRET: account.webhookSecret,
      PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
    },
    { time },
  );
  const { url } = await tg.gateway.start();
  base = url!;
  await pointProviderWebhooks(`${base}/providerA/webhook/sandbox`);
  receiver = await startReceiver();
  tenant = await newTenant();
});

afterAll(async () => {
  simulator?.close();
  await tg?.close();
  await receiver?.stop();
  await simServer?.stop(true);
  await proxy?.stop(true);
});

describe("POST /providerA/direct-payment — validation", () => {
  it("rejects a payment_method outside the enum with the spec's message", async () => {
    const { status, body } = await api("/providerA/direct-payment", { method: "POST", json: payment({ payment_method: "orange" }) });
    expect(status).toBe(400);
    expect(body.message).toContain(
      "payment_method must be one of the following values: mnoA_open, mnoB, mnoC, mnoB_tg, mnoD, mnoA_open_gn, mnoA_ci, mnoE_ne, mnoF_sn",
    );
    expect(body.error).toBe("Bad Request");
  });

  it("lists every missing field and a bad phone format", async () => {
    const { status, body } = await api("/providerA/direct-payment", { method: "POST", json: { phone_number: { number: "97000000", country: "BJ" } } });
    expect(status).toBe(400);
    expect(body.message).toEqual(
      expect.arrayContaining([
        "phone_number.number must be in international format, like +22997000000",
        "phone_number.country must be a lower-case two-letter country code, like bj",
      ]),
    );
    expect(body.message.some((m: string) => m.startsWith("description "))).toBe(true);
    expect(body.message.some((m: string) => m.startsWith("amount "))).toBe(true);
  });

  it("applies the operator/country and calling-code rules", async () => {
    const wrongOperator = await api("/providerA/direct-payment", { method: "POST", json: payment({ payment_method: "mnoA_ci" }) });
    expect(wrongOperator.status).toBe(400);
    expect(wrongOperator.body.message).toContain("payment_method mnoA_ci is not available for country bj");
    const wrongCode = await api("/providerA/direct-payment", { method: "POST", json: payment({ phone_number: { number: "+22897000000", country: "bj" } }) });
    expect(wrongCode.body.message).toContain("phone_number.number must start with +229 for country bj");
    const tooMuch = await api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 10_000_001 }) });
    expect(tooMuch.body.message).toContain("amount must not be greater than 10000000");
  });
});

describe("sandbox outcomes end to end", () => {
  it("approves an amount below 1000, once, and delivers payment.completed to callback_url signed", async () => {
    const { status, body } = await api("/providerA/direct-payment", {
      method: "POST",
      json: payment({ amount: 500, callback_url: `${receiver.url}/cb` }),
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ ok: true, status: "pending", description: "Order 1042", amount: 500 });
    expect(Number.isInteger(body.transactionId)).toBe(true);
    // The callback URL is ours: it never reaches provider A.
    const sent = (await (await fetch(`${simBase}/_sim/transactions`)).json()) as { transactions: { id: number; callback_url: string | null }[] };
    expect(sent.transactions.find((t) => t.id === body.transactionId)?.callback_url).toBeNull();

    const approved = await waitForStatus(body.transactionId, "approved");
    expect(approved).toMatchObject({ ok: true, approved: true, amount: 500, currency: "XOF", payment_method: "mnoA_open", paymentId: body.paymentId });
    expect(approved.approvedAt).not.toBeNull();
    const quick = await api(`/providerA/transaction/${body.transactionId}/is-approved`);
    expect(quick.body).toEqual({ transactionId: body.transactionId, approved: true, status: "approved" });

    const receipt = await waitUntil(() => receiver.receipts.find((r) => r.path === "/cb"), { what: "callback delivery", timeoutMs: 8_000 });
    const verified = new Webhook(tenant.callbackSecret).verify(receipt.body, receipt.headers) as { type: string; data: { paymentId: string } };
    expect(verified).toMatchObject({ type: "payment.completed", data: { paymentId: body.paymentId } });
    const deliveries = await api(`/payments/${body.paymentId}/deliveries`);
    expect(deliveries.status).toBe(200);
    expect(deliveries.body.data.length).toBe(1);
    await simulator.webhooksIdle();
    expect((await eventsOf(body.paymentId)).map((e) => e.type)).toEqual(["payment.completed"]);
  });

  it("keeps 1000–5000 pending until the console approves or declines it", async () => {
    const a = (await api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 2000 }) })).body;
    const b = (await api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 5000 }) })).body;
    await Bun.sleep(400);
    expect((await statusOf(a.transactionId)).body.status).toBe("pending");
    expect((await fetch(`${simBase}/_sim/transactions/${a.transactionId}/approve`, { method: "POST" })).status).toBe(200);
    expect((await fetch(`${simBase}/_sim/transactions/${b.transactionId}/decline`, { method: "POST" })).status).toBe(200);
    expect((await waitForStatus(a.transactionId, "approved")).approved).toBe(true);
    const declined = await waitForStatus(b.transactionId, "declined");
    expect(declined).toMatchObject({ approved: false, errorCode: "DECLINED_BY_CUSTOMER" });
    expect((await eventsOf(b.paymentId)).map((e) => e.type)).toEqual(["payment.failed"]);
  });

  it("answers 200 pending above 5000 and reports the decline later", async () => {
    const { status, body } = await api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 7000 }) });
    expect(status).toBe(200);
    expect(body.status).toBe("pending");
    const declined = await waitForStatus(body.transactionId, "declined");
    expect(declined).toMatchObject({ approved: false, errorCode: "INSUFFICIENT_FUND_ERROR" });
  });

  it("charges GNF for Guinea", async () => {
    const { body } = await api("/providerA/direct-payment", {
      method: "POST",
      json: payment({ payment_method: "mnoA_open_gn", phone_number: { number: "+224620000000", country: "gn" } }),
    });
    expect((await statusOf(body.transactionId)).body.currency).toBe("GNF");
  });

  it("replays an Idempotency-Key without a second payment", async () => {
    const headers = { "idempotency-key": `key-${Math.random()}` };
    const first = await api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 3000 }), headers });
    const again = await api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 3000 }), headers });
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
  });
});

describe("GET /providerA/transaction/{transaction_id}", () => {
  it("is 404 for another tenant and another environment, 400 for a non-positive-integer id", async () => {
    const { body } = await api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 2500 }) });
    const stranger = await newTenant();
    expect((await statusOf(body.transactionId, stranger.token)).status).toBe(404);
    expect((await api(`/providerA/transaction/${body.transactionId}/is-approved`, { token: stranger.token })).status).toBe(404);
    const admin = await tg.adminToken("live");
    const live = await api(`/providerA/transaction/${body.transactionId}/status`, { token: admin, headers: { "x-tenant-id": tenant.id } });
    expect(live.status).toBe(404);
    for (const bad of ["0", "-3", "abc", "1.5"]) expect((await api(`/providerA/transaction/${bad}/status`)).status).toBe(400);
  });

  it("shares one upstream read among concurrent readers and reads at most once a second", async () => {
    const { body } = await api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 2000 }) });
    await time.advance(1_100);
    const reads = () => upstreamCalls.filter((c) => c === `GET /v1/transactions/${body.transactionId}`).length;
    const before = reads();
    // The gateway's clock stands still meanwhile: a busy machine cannot stretch these reads past the second.
    const answers = await Promise.all(Array.from({ length: 10 }, () => statusOf(body.transactionId)));
    expect(answers.every((a) => a.status === 200 && a.body.status === "pending")).toBe(true);
    expect(reads() - before).toBe(1);
    await statusOf(body.transactionId);
    expect(reads() - before).toBe(1);
    // A second later, the next read asks the provider again.
    await time.advance(1_000);
    await statusOf(body.transactionId);
    expect(reads() - before).toBe(2);
  });
});

describe("provider failures", () => {
  it("a refusal is 422 and the payment failed", async () => {
    faults.push({ match: /^POST \/v1\/transactions$/, kind: "refuse" });
    const { status, body } = await api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 800 }) });
    expect(status).toBe(422);
    expect(body).toMatchObject({ code: "provider_refused", providerErrors: ["amount is over the account limit"] });
    const list = await api("/payments?limit=1");
    expect(list.body.data[0]).toMatchObject({ state: "failed", failureCode: "provider_refused", outcomeUnknown: false });
  });

  it("a timeout after the push was received is 504, left pending, then settled to the provider's outcome with one charge", async () => {
    faults.push({ match: /^POST \/v1\/mtn_open$/, kind: "slow" });
    const { status, body } = await api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 1200, description: "slow push" }) });
    expect(status).toBe(504);
    expect(body.code).toBe("provider_timeout");
    const row = (await api("/payments?limit=1")).body.data[0];
    expect(row).toMatchObject({ state: "pending", outcomeUnknown: true, description: "slow push" });
    // The customer approves on the phone (the console): the push did reach it.
    expect((await fetch(`${simBase}/_sim/transactions/${row.providerTransactionId}/approve`, { method: "POST" })).status).toBe(200);
    const settled = await waitUntil(
      async () => {
        const read = (await api(`/payments/${row.id}`)).body;
        return read.state === "succeeded" ? read : undefined;
      },
      { what: "the slow payment settled", timeoutMs: 10_000, intervalMs: 100 },
    );
    expect(settled.outcomeUnknown).toBe(false);
    const all = (await (await fetch(`${simBase}/_sim/transactions`)).json()) as { transactions: { merchant_reference: string | null }[] };
    expect(all.transactions.filter((t) => t.merchant_reference === row.id).length).toBe(1);
    expect((await eventsOf(row.id)).map((e) => e.type)).toEqual(["payment.completed"]);
  });

  it("a 5xx on create is 502 and left pending with outcomeUnknown", async () => {
    faults.push({ match: /^POST \/v1\/transactions$/, kind: "fail5xx" });
    const { status, body } = await api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 900 }) });
    expect(status).toBe(502);
    expect(body.code).toBe("provider_error");
    expect((await api("/payments?limit=1")).body.data[0]).toMatchObject({ state: "pending", outcomeUnknown: true });
  });

  it("a provider down before sending is 502 and the payment failed", async () => {
    // On a virtual time of its own: the client's waits before retrying the refused connection are stepped through.
    const downTime = virtualTime();
    const down = await startTestGateway(
      {
        PROVIDER_A_SANDBOX_URL: "http://127.0.0.1:1",
        PROVIDER_A_SANDBOX_SECRET_KEY: "sk_sandbox_nowhere",
        PROVIDER_A_SANDBOX_WEBHOOK_SECRET: "wh_nowhere",
      },
      { time: downTime },
    );
    try {
      const tenantId = await down.insertTenant();
      const token = await down.tenantToken(tenantId);
      const answer = down.request("/providerA/direct-payment", {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify(payment()),
      });
      await advanceThroughWaits(downTime, [100, 400], { what: "provider A's client" });
      const response = await answer;
      expect(response.status).toBe(502);
      const list = await down.request("/payments", { headers: { authorization: `Bearer ${token}` } });
      expect(((await list.json()) as any).data[0]).toMatchObject({ state: "failed", failureCode: "provider_unreachable", outcomeUnknown: false });
    } finally {
      await down.close();
    }
  });
});

describe("POST /providerA/webhook/{environment}", () => {
  async function postWebhook(body: string, signature: string, path = "/providerA/webhook/sandbox") {
    return fetch(`${base}${path}`, { method: "POST", headers: { "content-type": "application/json", "x-fedapay-signature": signature }, body });
  }

  it("applies duplicate webhooks once, and answers 200 for unknown transactions", async () => {
    const { body } = await api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 4000 }) });
    const settled = (await (await fetch(`${simBase}/_sim/transactions/${body.transactionId}/approve`, { method: "POST" })).json()) as {
      "v1/transaction": unknown;
    };
    const raw = JSON.stringify({ name: "transaction.approved", entity: settled["v1/transaction"] });
    const now = nowSeconds();
    const responses = await Promise.all(Array.from({ length: 5 }, () => postWebhook(raw, signProviderAWebhook(account.webhookSecret, now, raw))));
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    await simulator.webhooksIdle();
    expect((await statusOf(body.transactionId)).body.status).toBe("approved");
    expect((await eventsOf(body.paymentId)).map((e) => e.type)).toEqual(["payment.completed"]);
    const unknown = JSON.stringify({ name: "transaction.approved", entity: { id: 987654 } });
    expect((await postWebhook(unknown, signProviderAWebhook(account.webhookSecret, now, unknown))).status).toBe(200);
  });

  it("rejects a bad signature, an old timestamp and another account's secret", async () => {
    const raw = JSON.stringify({ name: "transaction.approved", entity: { id: 1 } });
    const now = nowSeconds();
    expect((await postWebhook(raw, `t=${now},s=${"0".repeat(64)}`)).status).toBe(401);
    expect((await postWebhook(raw, signProviderAWebhook(account.webhookSecret, now - 301, raw))).status).toBe(401);
    expect((await postWebhook(raw, signProviderAWebhook(otherAccount.webhookSecret, now, raw))).status).toBe(401);
    expect((await postWebhook(raw, "")).status).toBe(401);
    // Several s= values: one matching is enough.
    const good = signProviderAWebhook(account.webhookSecret, now, raw);
    expect((await postWebhook(raw, `${good},s=${"1".repeat(64)}`)).status).toBe(200);
    // The tenant route is verified with the tenant's own account only.
    expect((await postWebhook(raw, good, `/providerA/webhook/sandbox/${tenant.id}`)).status).toBe(401);
  });
});

describe("keeping status true without readers", () => {
  it("settles pending payments whose first sync steps were lost (a process that died holding them, or Redis lost)", async () => {
    await pointProviderWebhooks(null);
    try {
      const created = await Promise.all(Array.from({ length: 3 }, () => api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 1500 }) })));
      const ids = created.map((c) => c.body.paymentId as string);
      for (const c of created) await fetch(`${simBase}/_sim/transactions/${c.body.transactionId}/approve`, { method: "POST" });
      // Their first steps are held in this process until due: lost, as a process that dies loses them.
      for (const id of ids) tg.gateway.deps.syncHold.settled(id);
      await time.advance(5_200);
      const stateOf = async () => (await tg.gateway.deps.db.selectFrom("payments").select("state").where("id", "in", ids).execute()).map((r) => r.state);
      expect(await stateOf()).toEqual(["pending", "pending", "pending"]);
      await runSweeper(tg.gateway.deps);
      const rows = await waitUntil(
        async () => {
          const rows = await tg.gateway.deps.db.selectFrom("payments").select("state").where("id", "in", ids).execute();
          return rows.every((r) => r.state === "succeeded") ? rows : undefined;
        },
        { what: "every pending payment settled", timeoutMs: 20_000, intervalMs: 100 },
      );
      expect(rows.map((r) => r.state)).toEqual(["succeeded", "succeeded", "succeeded"]);
    } finally {
      await pointProviderWebhooks(`${base}/providerA/webhook/sandbox`);
    }
  });
});

describe("a create call that got no answer (contract §4: found by our pay_ id)", () => {
  const rowOf = (id: string) => tg.gateway.deps.db.selectFrom("payments").selectAll().where("id", "=", id).executeTakeFirstOrThrow();

  it("the provider created it but its answer never came: 504, pending; the sync job finds it by our pay_ id and settles it", async () => {
    // No webhook from the provider: only the providerA-sync job can learn the outcome.
    await pointProviderWebhooks(null);
    try {
      faults.push({ match: /^POST \/v1\/transactions$/, kind: "slow" });
      const { status, body } = await api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 1300, description: "create lost" }) });
      expect(status).toBe(504);
      expect(body.code).toBe("provider_timeout");
      const row = (await api("/payments?limit=1")).body.data[0];
      expect(row).toMatchObject({ state: "pending", outcomeUnknown: true, providerTransactionId: null, description: "create lost" });
      // The provider did create it (with our id as merchant_reference); the customer's payment goes through there.
      const all = (await (await fetch(`${simBase}/_sim/transactions`)).json()) as { transactions: { id: number; merchant_reference: string | null }[] };
      const atProvider = all.transactions.filter((t) => t.merchant_reference === row.id);
      expect(atProvider.length).toBe(1);
      expect((await fetch(`${simBase}/_sim/transactions/${atProvider[0]!.id}/approve`, { method: "POST" })).status).toBe(200);
      // The first sync step is 5 s after the payment's creation: nothing looks it up before.
      await time.advance(4_999);
      expect(upstreamCalls).not.toContain(`GET /v1/transactions/merchant/${row.id}`);
      expect((await rowOf(row.id)).state).toBe("pending");
      await time.advance(1);
      const settled = await waitUntil(async () => ((await rowOf(row.id)).state === "succeeded" ? rowOf(row.id) : undefined), {
        what: "the sync job settled the lost create",
        timeoutMs: 12_000,
        intervalMs: 50,
      });
      expect(upstreamCalls).toContain(`GET /v1/transactions/merchant/${row.id}`);
      expect(settled).toMatchObject({ provider_transaction_id: String(atProvider[0]!.id), outcome_unknown: false, provider_status: "approved" });
      const status_ = await statusOf(atProvider[0]!.id);
      expect(status_.body).toMatchObject({ status: "approved", approved: true, paymentId: row.id, outcomeUnknown: false });
      expect((await eventsOf(row.id)).map((e) => e.type)).toEqual(["payment.completed"]);
    } finally {
      await pointProviderWebhooks(`${base}/providerA/webhook/sandbox`);
    }
  });

  it("the provider never received it: pending while it may still appear, then failed/not_received from the sync job (2 min on)", async () => {
    faults.push({ match: /^POST \/v1\/transactions$/, kind: "fail5xx" });
    const { status } = await api("/providerA/direct-payment", { method: "POST", json: payment({ amount: 1400, description: "create never received" }) });
    expect(status).toBe(502);
    const id = (await api("/payments?limit=1")).body.data[0].id as string;
    const lookups = () => upstreamCalls.filter((call) => call === `GET /v1/transactions/merchant/${id}`).length;
    const createdAt = (await rowOf(id)).created_at.getTime();
    const queued = (step: number) => tg.gateway.deps.queue.has("providerA-sync", DIRECT_PAYMENT_SYNC.jobId(id, step));
    // The sync chain runs on its own as the clock reaches each step: at 5 s, 15 s, 30 s and 1 min the provider
    // does not know our pay_ id, which proves nothing yet — still pending.
    for (const [step, offsetMs] of [5_000, 15_000, 30_000, 60_000].entries()) {
      await time.advance(createdAt + offsetMs - time.now().getTime());
      await waitUntil(() => lookups() === step + 1, { what: `step ${step}'s lookup`, lastSeen: lookups });
      await waitUntil(() => queued(step + 1), { what: `step ${step + 1} queued by step ${step}` });
      expect(await rowOf(id)).toMatchObject({ state: "pending", outcome_unknown: true });
    }
    // Its next step, 6 min on (past the 2 min after which a create the provider does not know never reached it).
    await time.advance(createdAt + 6 * 60_000 - 1 - time.now().getTime());
    expect(lookups()).toBe(4);
    expect((await rowOf(id)).state).toBe("pending");
    await time.advance(1);
    await waitUntil(async () => (await rowOf(id)).state === "failed", { what: "the step at 6 min to fail it", lastSeen: lookups });
    const failed = (await api(`/payments/${id}`)).body;
    expect(failed).toMatchObject({ state: "failed", failureCode: "not_received", outcomeUnknown: false, providerTransactionId: null });
    expect((await eventsOf(id)).map((e) => e.type)).toEqual(["payment.failed"]);
    const all = (await (await fetch(`${simBase}/_sim/transactions`)).json()) as { transactions: { merchant_reference: string | null }[] };
    expect(all.transactions.some((t) => t.merchant_reference === id)).toBe(false);
  });
});
