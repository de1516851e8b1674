/**
 * Never more out than in, whoever refunds (issue 24, point 4), over real HTTP against the gateway and
 * provider A's simulator. A 3,000 XOF payment on the pooled provider A account, a refund of ours of 2,000,
 * and the payment refunded in full on provider A's own dashboard (the simulator's `…/refund` control) at
 * each step of ours: before our first provider call, after our create and before our start (caught when
 * the provider's word arrives; caught by the next step's check; caught by the last check, right before the
 * start — and right before provider B's submit for a refund sent through provider B), and after our start
 * or after ours was sent; and refunded in part (no amount said: counted as all of it). A
 * refund not yet sent is stopped (`failed`, `refunded_at_provider`, `refund.failed`, its reservation
 * released) and the simulator never starts it; one already sent is a difference in the reconciliation
 * report, the tenant's and the operator's.
 *
 * The provider's refund is placed between two of our calls by a proxy in front of the simulator: it holds
 * one of our calls, refunds the payment at the simulator, waits until the gateway has read the refund (the
 * simulator's `transaction.refunded` webhook), then lets the call go on (or answers it itself).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { sql } from "kysely";
import { createProviderASimulator, type ProviderASimulator } from "../../../src/providers/providerA/simulator/mod.ts";
import { advancePayout } from "../../../src/services/payouts/advance-payout.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { audit } from "../../../src/services/audit/audit.ts";
import { freePort } from "../../support/ports.ts";
import { startSimulator, type SimulatorServer } from "../../support/provider-b-rig.ts";
import { waitUntil } from "../../support/wait.ts";

type Body = Record<string, any>;

/** One of our calls to the simulator held by the proxy: `run` decides what happens to it. */
interface Hold {
  match(method: string, path: string): boolean;
  run(forward: () => Promise<Response>): Promise<Response>;
}

let simulator: ProviderASimulator;
let server: ReturnType<typeof Bun.serve>;
let simBase: string;
let tg: TestGateway;
let base: string;
let hold: Hold | undefined;
let simB: SimulatorServer;

/** The proxy in front of a simulator: every call goes through to `next`, but the one `hold` matches (once). */
async function around(request: Request, next: (request: Request) => Promise<Response>): Promise<Response> {
  const path = new URL(request.url).pathname;
  const armed = hold?.match(request.method, path) ? hold : undefined;
  if (!armed) return next(request);
  hold = undefined;
  return armed.run(() => next(request));
}

function client(token: string) {
  return async (path: string, init: { method?: string; json?: unknown; headers?: Record<string, string> } = {}) => {
    const headers = new Headers(init.headers);
    headers.set("authorization", `Bearer ${token}`);
    if (init.json !== undefined) headers.set("content-type", "application/json");
    const response = await fetch(`${base}${path}`, {
      method: init.method ?? "GET",
      headers,
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    const text = await response.text();
    return { status: response.status, text, body: (text.startsWith("{") ? JSON.parse(text) : {}) as Body };
  };
}

type Api = ReturnType<typeof client>;

async function newTenant(): Promise<Api> {
  return client(await tg.tenantToken(await tg.insertTenant()));
}

async function until(api: Api, path: string, done: (body: Body) => boolean, what: string): Promise<Body> {
  return waitUntil(
    async () => {
      const read = await api(path);
      return done(read.body) ? read.body : undefined;
    },
    { what, timeoutMs: 15_000, intervalMs: 50 },
  );
}

/** A paid MTN Benin payment of 3,000 XOF (the sandbox holds 1000–5000 for its console: approved there). */
async function collect3000(api: Api, number: string): Promise<Body> {
  const created = await api("/payments", {
    method: "POST",
    json: { amount: 3000, description: "Order", operator: "mtn", customer: { phone: { number, country: "bj" }, firstname: "Awa" } },
  });
  expect(created.status).toBe(200);
  const pushed = await until(api, `/payments/${created.body.id}`, (p) => p.providerTransactionId !== null, "the payment at the provider");
  const approved = await fetch(`${simBase}/_sim/transactions/${pushed.providerTransactionId}/approve`, { method: "POST" });
  expect(approved.status).toBe(200);
  return until(api, `/payments/${created.body.id}`, (p) => p.state === "succeeded", "the payment succeeded");
}

/** Provider A refunds the payment on its dashboard; answers once the gateway has read it (the payment `refunded`). */
async function refundAtProvider(api: Api, payment: Body): Promise<void> {
  const refunded = await fetch(`${simBase}/_sim/transactions/${payment.providerTransactionId}/refund`, { method: "POST" });
  expect(refunded.status).toBe(200);
  await until(api, `/payments/${payment.id}`, (p) => p.state === "refunded", "the gateway read the refund at the provider");
}

/** The payouts the simulator holds under our refund's id (its `merchant_reference`). */
async function atProvider(refundId: string): Promise<Body[]> {
  const listed = (await (await fetch(`${simBase}/_sim/payouts`)).json()) as { payouts: Body[] };
  return listed.payouts.filter((p) => p.merchant_reference === refundId);
}

/** Provider A refunds part of the payment on its dashboard (no amount said); answers once the gateway has read it. */
async function partlyRefundAtProvider(api: Api, payment: Body): Promise<void> {
  const refunded = await fetch(`${simBase}/_sim/transactions/${payment.providerTransactionId}/partial-refund`, { method: "POST" });
  expect(refunded.status).toBe(200);
  await until(api, `/payments/${payment.id}`, (p) => p.providerStatus === "approved_partially_refunded", "the gateway read the partial refund");
}

/**
 * What a stopped refund leaves: failed with the reason, `refund.failed` recorded, the reservation released,
 * nothing started; the balance `available` (0 once the provider gave all 3,000 back) and no difference for it.
 */
async function expectStopped(api: Api, refundId: string, available = 0): Promise<Body> {
  const refund = await until(api, `/refunds/${refundId}`, (r) => r.state !== "pending", "the refund final");
  expect(refund).toMatchObject({ state: "failed", failureCode: "refunded_at_provider", amount: 2000 });
  const events = (await api("/events?type=refund.failed")).body.data as Body[];
  expect(events.filter((e) => e.data?.id === refundId)).toHaveLength(1);
  expect(events.find((e) => e.data?.id === refundId)!.data).toMatchObject({ state: "failed", failureCode: "refunded_at_provider" });
  // 3,000 collected, 3,000 given back by the provider, the 2,000 reserved for ours released: nothing left, nothing owed.
  expect((await api("/balance")).body.balances).toEqual([{ currency: "XOF", available, pending: 0 }]);
  const journals = ((await api(`/balance/entries?subjectId=${refundId}`)).body.data as Body[]).map(
    (e) => `${e.journal.split(".")[1]} ${e.account} ${e.amount}`,
  );
  expect(journals.sort()).toEqual(["released available 2000", "released pending -2000", "reserved available -2000", "reserved pending 2000"]);
  // No difference about it: nothing of ours went out.
  expect(((await api("/reports/reconciliation")).body.differences as Body[]).filter((d) => d.id === refundId)).toEqual([]);
  return refund;
}

beforeAll(async () => {
  simulator = createProviderASimulator({ approveDelayMs: 50 });
  server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => around(request, async (r) => simulator.fetch(r)) });
  simB = await startSimulator({ around });
  simBase = server.url.toString().replace(/\/$/, "");
  const account = (await (await fetch(`${simBase}/_sim/accounts`, { method: "POST" })).json()) as { secretKey: string; webhookSecret: string };
  // Provider B probes its callback (ours, under PUBLIC_BASE_URL) before it answers a get-invoice: the gateway's own port.
  const port = await freePort();
  tg = await startTestGateway({
    PORT: String(port),
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    PROVIDER_A_SANDBOX_URL: simBase,
    PROVIDER_A_SANDBOX_SECRET_KEY: account.secretKey,
    PROVIDER_A_SANDBOX_WEBHOOK_SECRET: account.webhookSecret,
    PROVIDER_B_SANDBOX_URL: `${simB.url}/sandbox-api/v1`,
    PROVIDER_B_LIVE_URL: `${simB.url}/api/v1`,
  });
  base = (await tg.gateway.start()).url!;
  await fetch(`${simBase}/_sim/accounts/${account.secretKey}/webhook`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url: `${base}/providerA/webhook/sandbox` }),
  });
}, 30_000);

afterAll(async () => {
  simulator?.close();
  await tg?.close();
  await server?.stop(true);
  await simB?.stop();
});

describe("a payment refunded at provider A while a refund of ours is on its way", () => {
  it("before our first call to the provider: ours is stopped, nothing is created there", async () => {
    const api = await newTenant();
    const payment = await collect3000(api, "+22997100001");
    expect((await api("/balance")).body.balances).toEqual([{ currency: "XOF", available: 3000, pending: 0 }]);
    // Our refund's first step reads the provider under its id before anything else: the provider refunds first.
    hold = {
      match: (method, path) => method === "GET" && path.startsWith("/v1/payouts/merchant/rf_"),
      run: async (forward) => (await refundAtProvider(api, payment), forward()),
    };
    const refund = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 2000 } });
    expect(refund.status).toBe(200);
    await expectStopped(api, refund.body.id);
    expect(hold).toBeUndefined();
    expect(await atProvider(refund.body.id)).toEqual([]);
    // Nothing is left to refund through us.
    const again = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 1 } });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("payment_not_refundable");
  });

  it("after our create and before our start: stopped when the provider's word arrives; the provider's payout is never started", async () => {
    const api = await newTenant();
    const payment = await collect3000(api, "+22997100002");
    hold = {
      match: (method, path) => method === "POST" && path === "/v1/payouts",
      run: async (forward) => {
        const created = await forward();
        await refundAtProvider(api, payment);
        return created;
      },
    };
    const refund = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 2000 } });
    expect(refund.status).toBe(200);
    await expectStopped(api, refund.body.id);
    const held = await atProvider(refund.body.id);
    expect(held).toHaveLength(1);
    expect(held[0]!.status).toBe("pending");
  });

  it("after our create and before our start: stopped by the check before the start when the provider's word came after it", async () => {
    const api = await newTenant();
    const payment = await collect3000(api, "+22997100003");
    // The start is held: the provider refunds the payment, then the start never reaches it (503: the next step reads and decides again).
    hold = {
      match: (method, path) => method === "PUT" && path === "/v1/payouts/start",
      run: async () => (await refundAtProvider(api, payment), new Response("unavailable", { status: 503 })),
    };
    const refund = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 2000 } });
    expect(refund.status).toBe(200);
    // The provider's id was stored before the start: the provider's word could not stop it (a sending call may have been made).
    const waiting = await until(api, `/refunds/${refund.body.id}`, (r) => r.outcomeUnknown === true, "the unanswered start recorded");
    expect(waiting).toMatchObject({ state: "pending" });
    expect(waiting.providerPayoutId).toMatch(/^\d+$/);
    // The next step of its chain (run now rather than in 5 s): the provider says nothing was sent, the check stops it.
    await advancePayout(tg.gateway.deps, refund.body.id);
    await expectStopped(api, refund.body.id);
    const held = await atProvider(refund.body.id);
    expect(held).toHaveLength(1);
    expect(held[0]!.status).toBe("pending");
  });

  it("at the very last moment, after every earlier check passed: stopped by the check right before the start", async () => {
    const api = await newTenant();
    const payment = await collect3000(api, "+22997100007");
    // A first step creates it and its start goes unanswered (the provider never got it): it stays pending.
    hold = { match: (method, path) => method === "PUT" && path === "/v1/payouts/start", run: async () => new Response("unavailable", { status: 503 }) };
    const refund = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 2000 } });
    expect(refund.status).toBe(200);
    const waiting = await until(api, `/refunds/${refund.body.id}`, (r) => r.outcomeUnknown === true, "the unanswered start recorded");
    // The next step reads it (pending: nothing sent), checks, then reads it again right before the start: the provider refunds in between.
    let reads = 0;
    hold = {
      match: (method, path) => method === "GET" && path === `/v1/payouts/${waiting.providerPayoutId}` && ++reads === 2,
      run: async (forward) => (await refundAtProvider(api, payment), forward()),
    };
    await advancePayout(tg.gateway.deps, refund.body.id);
    // The gateway's own chain may have taken the step first (its lease then kept this call out): either way one step reads twice.
    await waitUntil(() => hold === undefined, { what: "the second read held, the provider refunding in between", timeoutMs: 30_000, intervalMs: 50 });
    await expectStopped(api, refund.body.id);
    expect(await atProvider(refund.body.id)).toEqual([expect.objectContaining({ status: "pending" })]);
  }, 60_000);

  it("a refund sent through provider B (a tenant's own account): stopped right before its submit", async () => {
    const tenantId = await tg.insertTenant();
    const api = client(await tg.tenantToken(tenantId));
    // Paid on provider A from a Moov Togo phone: provider A does not pay out there, provider B does (moov-togo).
    const created = await api("/payments", {
      method: "POST",
      json: { amount: 3000, description: "Order", operator: "moov", customer: { phone: { number: "+22890100008", country: "tg" }, firstname: "Awa" } },
    });
    expect(created.status).toBe(200);
    expect(created.body.provider).toBe("providerA");
    const pushed = await until(api, `/payments/${created.body.id}`, (p) => p.providerTransactionId !== null, "the payment at the provider");
    expect((await fetch(`${simBase}/_sim/transactions/${pushed.providerTransactionId}/approve`, { method: "POST" })).status).toBe(200);
    const payment = await until(api, `/payments/${created.body.id}`, (p) => p.state === "succeeded", "the payment succeeded");
    const keys = await simB.account();
    await fetch(`${simB.url}/_sim/accounts/${keys.masterKey}/balances`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ TG: 50_000 }),
    });
    const stored = await api(`/tenants/${tenantId}/credentials/providerB`, { method: "PUT", json: { environment: "sandbox", ...keys } });
    expect(stored.status).toBe(200);
    // Provider B's get-invoice is answered (no money moves), then the payment is refunded at provider A before the submit.
    hold = {
      match: (method, path) => method === "POST" && path.endsWith("/disburse/get-invoice"),
      run: async (forward) => {
        const answered = await forward();
        await refundAtProvider(api, payment);
        return answered;
      },
    };
    const refund = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 2000 } });
    expect(refund.status).toBe(200);
    expect(refund.body.provider).toBe("providerB");
    await expectStopped(api, refund.body.id);
    const disbursements = ((await (await fetch(`${simB.url}/_sim/disbursements`)).json()) as { disbursements: Body[] }).disbursements;
    expect(disbursements.filter((d) => d.disburse_id === refund.body.id)).toEqual([expect.objectContaining({ status: "created", submits: 0 })]);
  });

  it("after our start: ours goes out; the money out twice is a reconciliation difference the tenant and the operator see", async () => {
    const api = await newTenant();
    const payment = await collect3000(api, "+22997100004");
    const refund = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 2000 } });
    expect(refund.status).toBe(200);
    // 1000–5000: started at the provider, it waits for the sandbox console.
    const started = await until(api, `/refunds/${refund.body.id}`, (r) => r.providerStatus !== null && r.providerStatus !== "pending", "our refund started");
    expect(started.state).toBe("pending");
    await refundAtProvider(api, payment);
    // Started: it may be out already, so nothing stops it.
    expect((await api(`/refunds/${refund.body.id}`)).body.state).toBe("pending");
    const sent = await fetch(`${simBase}/_sim/payouts/${started.providerPayoutId}/send`, { method: "POST" });
    expect(sent.status).toBe(200);
    const succeeded = await until(api, `/refunds/${refund.body.id}`, (r) => r.state !== "pending", "our refund final");
    expect(succeeded.state).toBe("succeeded");
    expect(await atProvider(refund.body.id)).toEqual([expect.objectContaining({ status: "sent" })]);
    // 5,000 out for 3,000 in: the ledger says so (the pooled account 2,000 short) and the report names our refund.
    expect((await api("/balance")).body.balances).toEqual([{ currency: "XOF", available: -2000, pending: 0 }]);
    const difference = {
      kind: "refund",
      id: refund.body.id,
      provider: "providerA",
      ourState: "sent",
      providerState: "refunded",
      providerStatus: "refunded",
      amount: 2000,
      currency: "XOF",
    };
    expect((await api("/reports/reconciliation")).body.differences).toEqual([expect.objectContaining(difference)]);
    const csv = await api("/reports/reconciliation", { headers: { accept: "text/csv" } });
    expect(csv.text).toContain(`difference,refund,providerA,,sent,XOF,1,2000,${refund.body.id}`);
    const admin = await fetch(`${base}/admin/reports/reconciliation`, { headers: { authorization: `Bearer ${await tg.adminToken()}` } });
    expect(admin.status).toBe(200);
    expect(((await admin.json()) as Body).differences).toContainEqual(expect.objectContaining(difference));
    // And the audit names it: the tenant's money on the pooled account is 2,000 below zero.
    const tenantId = (await api("/auth/whoami")).body.tenantId as string;
    const violation = `tenant_pooled_negative ${tenantId} pooled:providerA XOF`;
    const found = await audit({ db: tg.gateway.deps.db });
    expect(found.map((v) => `${v.invariant} ${v.subject}`)).toContain(violation);
    tg.database.expectedViolations = [...(tg.database.expectedViolations ?? []), violation];
  });

  it("after ours was sent in full: the provider's refund on top is a reconciliation difference", async () => {
    const api = await newTenant();
    const payment = await collect3000(api, "+22997100005");
    // Below 1000 the sandbox sends it by itself.
    const refund = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 900 } });
    expect(refund.status).toBe(200);
    expect((await until(api, `/refunds/${refund.body.id}`, (r) => r.state !== "pending", "our refund final")).state).toBe("succeeded");
    expect((await api("/reports/reconciliation")).body.differences).toEqual([]);
    await refundAtProvider(api, payment);
    expect((await api("/reports/reconciliation")).body.differences).toEqual([
      expect.objectContaining({ kind: "refund", id: refund.body.id, ourState: "sent", providerState: "refunded", providerStatus: "refunded", amount: 900 }),
    ]);
    // 3,900 out for 3,000 in: the ledger takes all the provider gave back, and the audit names the tenant 900 below zero.
    expect((await api("/balance")).body.balances).toEqual([{ currency: "XOF", available: -900, pending: 0 }]);
    const tenantId = (await api("/auth/whoami")).body.tenantId as string;
    const violation = `tenant_pooled_negative ${tenantId} pooled:providerA XOF`;
    expect((await audit({ db: tg.gateway.deps.db })).map((v) => `${v.invariant} ${v.subject}`)).toContain(violation);
    // With the 2,000 of the test before, the provider gave out 2,900 more than this file's tenants collected on it.
    tg.database.expectedViolations = [...(tg.database.expectedViolations ?? []), violation, "pooled_account_negative pooled:providerA XOF"];
  });

  it("refunded in part at the provider, which does not say how much: ours not yet sent is stopped, no more can be asked, the payment is a difference", async () => {
    const api = await newTenant();
    const payment = await collect3000(api, "+22997100006");
    hold = {
      match: (method, path) => method === "GET" && path.startsWith("/v1/payouts/merchant/rf_"),
      run: async (forward) => (await partlyRefundAtProvider(api, payment), forward()),
    };
    const refund = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 2000 } });
    expect(refund.status).toBe(200);
    // What provider A gave back is not known: counted as all of it, nothing of ours fits, and the ledger takes all of it
    // from the tenant's balance (migration 0016): none of it can be paid out again.
    await expectStopped(api, refund.body.id, 0);
    const given = ((await api(`/balance/entries?subjectId=${payment.id}`)).body.data as Body[]).map(
      (e) => `${e.journal.split(".")[1]} ${e.account} ${e.amount}`,
    );
    expect(given.sort()).toEqual([
      "collected available 3000",
      "collected provider:providerA -3000",
      "refunded_at_provider:3000 available -3000",
      "refunded_at_provider:3000 provider:providerA 3000",
    ]);
    const payout = await api("/payouts", {
      method: "POST",
      json: { amount: 500, description: "Fournisseur", recipient: { phone: { number: "+22996000001", country: "bj" }, operator: "mtn" } },
    });
    expect(payout.status).toBe(422);
    expect(payout.body.code).toBe("insufficient_balance");
    expect(await atProvider(refund.body.id)).toEqual([]);
    const read = await api(`/payments/${payment.id}`);
    expect(read.body).toMatchObject({ state: "succeeded", amountRefunded: 0 });
    const again = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 1 } });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: "payment_not_refundable" });
    expect(again.body.message).toContain("approved_partially_refunded");
    expect((await api("/reports/reconciliation")).body.differences).toEqual([
      expect.objectContaining({
        kind: "payment",
        id: payment.id,
        ourState: "succeeded",
        providerState: "partially_refunded",
        providerStatus: "approved_partially_refunded",
        amount: 3000,
      }),
    ]);
  });

  it("refunds asked while the provider's refund is applied, many times over: never an error, never more out than in unseen", async () => {
    const api = await newTenant();
    let wentOutTwice = false;
    for (let round = 0; round < 8; round++) {
      const number = `+2299720${String(round).padStart(4, "0")}`;
      const created = await api("/payments", {
        method: "POST",
        json: { amount: 900, description: "Order", operator: "mtn", customer: { phone: { number, country: "bj" }, firstname: "Awa" } },
      });
      const payment = await until(api, `/payments/${created.body.id}`, (p) => p.state === "succeeded", "the payment succeeded");
      // Three refunds of ours and the provider's own, at once.
      const [first, second, third, atProvider] = await Promise.all([
        api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 300 } }),
        api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 300 } }),
        api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 300 } }),
        fetch(`${simBase}/_sim/transactions/${payment.providerTransactionId}/refund`, { method: "POST" }),
      ]);
      expect(atProvider.status).toBe(200);
      const answers = [first, second, third];
      // Asked before the provider's word: accepted; after it: 409 (the payment is refunded), or 422 when the provider's
      // refund has already taken the money back off the tenant's pooled holding (nothing left there to send from).
      const refused = (a: (typeof answers)[number]) =>
        a.status === 409 || (a.status === 422 && ["insufficient_balance", "amount_exceeds_refundable"].includes(a.body.code));
      expect(answers.filter((a) => a.status !== 200 && !refused(a)).map((a) => [a.status, a.body.code])).toEqual([]);
      await until(api, `/payments/${payment.id}`, (p) => p.state === "refunded", "the provider's refund read");
      for (const accepted of answers.filter((a) => a.status === 200)) {
        const refund = await until(api, `/refunds/${accepted.body.id}`, (r) => r.state !== "pending", "our refund final");
        // Stopped, or it went out before the provider's word: then the report names it (recorded when it is final).
        if (refund.state === "failed") expect(refund.failureCode).toBe("refunded_at_provider");
        else {
          const differences = (await api("/reports/reconciliation")).body.differences as Body[];
          expect(differences.map((d) => d.id)).toContain(refund.id);
          wentOutTwice = true;
        }
      }
    }
    expect((await api("/balance")).body.balances[0].pending).toBe(0);
    // A refund of ours that went out before the provider's word is money out twice: the ledger takes all the provider
    // gave back too, and the audit names the tenant below zero on the pooled account.
    if (wentOutTwice) {
      const tenantId = (await api("/auth/whoami")).body.tenantId as string;
      const violation = `tenant_pooled_negative ${tenantId} pooled:providerA XOF`;
      expect((await audit({ db: tg.gateway.deps.db })).map((v) => `${v.invariant} ${v.subject}`)).toContain(violation);
      tg.database.expectedViolations = [...(tg.database.expectedViolations ?? []), violation];
    }
  }, 60_000);
});

describe("a refund's lease, on the database's clock", () => {
  it("is not taken while another worker holds it by a worker whose clock runs minutes ahead: nothing is sent twice at once", async () => {
    const api = await newTenant();
    const payment = await collect3000(api, "+22997100020");
    // Its start goes unanswered: it stays pending, created at the provider, for the next step to follow.
    hold = { match: (method, path) => method === "PUT" && path === "/v1/payouts/start", run: async () => new Response("unavailable", { status: 503 }) };
    const refund = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 1000 } });
    expect(refund.status).toBe(200);
    await until(api, `/refunds/${refund.body.id}`, (r) => r.outcomeUnknown === true, "the unanswered start recorded");
    // Another worker leases it now, for 30 s by the database's clock.
    const { db } = tg.gateway.deps;
    await db.updateTable("payouts").set({ locked_until: sql<Date>`now() + interval '30 seconds'` }).where("id", "=", refund.body.id).execute();
    const leased = await db.selectFrom("payouts").select("locked_until").where("id", "=", refund.body.id).executeTakeFirstOrThrow();

    // A worker whose clock is 5 minutes ahead (a stepped host clock, a campaign's clock-jump) leaves it alone.
    const ahead = { ...tg.gateway.deps, now: () => new Date(Date.now() + 5 * 60_000) };
    const row = await advancePayout(ahead, refund.body.id);
    expect(row).toMatchObject({ state: "pending", locked_until: leased.locked_until });
    expect((await atProvider(refund.body.id)).map((p) => p.status)).toEqual(["pending"]);
  });
});
