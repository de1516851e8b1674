/**
 * Money out on provider A's pooled (service) account, end to end over real HTTP against its simulator: a
 * tenant collects, pays out and refunds; the ledger follows every step; the pooled account never pays
 * out more than the tenant holds; limits are refused before any call; the refunds of a payment never add
 * up to more than it collected, even when 20 arrive at once.
 */
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { parse } from "csv-parse/sync";
import { followPayment } from "../../../src/mod.ts";
import type { TestGateway } from "../../support/gateway.ts";
import { type ProviderARig, startProviderARig } from "../../support/provider-a-rig.ts";
import { expectIsolated } from "../../support/isolation.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";
import { expectLedgerRefiledAsWritten } from "../../support/ledger-refile.ts";

// Waits follow the payouts' sync chain (steps 5, 15 and 30 s after creation): a test may take up to a minute on a loaded machine.
setDefaultTimeout(60_000);

let rig: ProviderARig;
let simBase: string;
let tg: TestGateway;
let base: string;

type Body = Record<string, any>;

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
    return { status: response.status, headers: response.headers, text, body: (text.startsWith("{") ? JSON.parse(text) : {}) as Body };
  };
}

type Api = ReturnType<typeof client>;

async function newTenant(): Promise<{ id: string; api: Api }> {
  const id = await tg.insertTenant();
  return { id, api: client(await tg.tenantToken(id)) };
}

/** A paid MTN Benin payment of `amount` (below 1000: the sandbox approves it by itself). */
async function collect(api: Api, amount: number, number = "+22997000000"): Promise<Body> {
  const created = await api("/payments", {
    method: "POST",
    json: { amount, description: "Order", operator: "mtn", customer: { phone: { number, country: "bj" }, firstname: "Awa" } },
  });
  expect(created.status).toBe(200);
  return waitUntil(
    async () => {
      const read = await api(`/payments/${created.body.id}`);
      return read.body.state === "succeeded" ? read.body : undefined;
    },
    { what: "the payment succeeded", timeoutMs: 8_000, intervalMs: 50 },
  );
}

/**
 * Polls `path` until its state is one of `states`. Up to 35 s: a payout or refund whose provider notification is
 * lost or late on a loaded machine is read again by its sync chain 5, 15 and 30 s after its creation.
 */
async function settled(api: Api, path: string, states: string[]): Promise<Body> {
  let last: Body | undefined;
  return waitUntil(
    async () => {
      const read = await api(path);
      last = read.body;
      return states.includes(read.body.state) ? read.body : undefined;
    },
    { what: `${path} settled`, timeoutMs: 35_000, intervalMs: 50, lastSeen: () => last },
  );
}

function payoutBody(amount: number, number = "+22996000001") {
  return { amount, description: "Supplier 7", recipient: { phone: { number, country: "bj" }, operator: "mtn", firstname: "Kofi" } };
}

let receiver: WebhookReceiver;

/** The events the receiver got, parsed. */
function received(): Body[] {
  return receiver.receipts.map((r) => JSON.parse(r.body) as Body);
}

beforeAll(async () => {
  rig = await startProviderARig();
  ({ simBase, tg, base } = rig);
  receiver = await startReceiver();
});

afterAll(async () => {
  await rig?.close();
  await receiver?.stop();
});

describe("payouts from the pooled provider A account", () => {
  it("sends a payout the tenant's balance covers, and the ledger and events follow it", async () => {
    const { api } = await newTenant();
    const endpoint = await api("/webhooks", { method: "POST", json: { url: receiver.url, events: ["payout.sent", "payout.failed"] } });
    expect(endpoint.status).toBe(200);
    expect((await api("/balance")).body.balances).toEqual([]);
    await collect(api, 900);
    expect((await api("/balance")).body.balances).toEqual([{ currency: "XOF", available: 900, pending: 0 }]);

    const created = await api("/payouts", { method: "POST", json: payoutBody(600), headers: { "idempotency-key": "po-1" } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ state: "pending", provider: "providerA", amount: 600, currency: "XOF", recipient: { operator: "mtn" } });
    expect(created.body.id).toMatch(/^po_[0-9A-Z]{26}$/);
    const replayed = await api("/payouts", { method: "POST", json: payoutBody(600), headers: { "idempotency-key": "po-1" } });
    expect(replayed.body.id).toBe(created.body.id);

    const sent = await settled(api, `/payouts/${created.body.id}`, ["sent", "failed"]);
    expect(sent).toMatchObject({ state: "sent", providerStatus: "sent", outcomeUnknown: false });
    expect(sent.providerPayoutId).toMatch(/^\d+$/);
    // One payout at the provider for the one request (and its replay), under our id.
    const atProvider = (await (await fetch(`${simBase}/_sim/payouts`)).json()) as { payouts: Body[] };
    expect(atProvider.payouts.filter((p) => p.merchant_reference === created.body.id)).toHaveLength(1);

    const fee = sent.fee ?? 0;
    expect((await api("/balance")).body.balances).toEqual([{ currency: "XOF", available: 900 - 600 - fee, pending: 0 }]);
    const entries = (await api(`/balance/entries?subjectId=${created.body.id}`)).body.data as Body[];
    expect(entries.map((e) => `${e.journal.split(".")[1]} ${e.account} ${e.amount}`).sort()).toEqual(
      [
        "reserved available -600",
        "reserved pending 600",
        "sent pending -600",
        "sent provider:providerA 600",
        ...(fee > 0 ? [`fee available -${fee}`, `fee fees ${fee}`] : []),
      ].sort(),
    );
    const event = await waitUntil(() => received().find((e) => e.type === "payout.sent" && e.data?.id === created.body.id), {
      what: "payout.sent delivered",
      timeoutMs: 8_000,
    });
    expect(event.data).toMatchObject({ id: created.body.id, state: "sent", amount: 600 });

    const listed = await api("/payouts?state=sent");
    expect(listed.body.data.map((p: Body) => p.id)).toEqual([created.body.id]);
    expect((await api("/payouts?state=pending")).body.data).toEqual([]);
  });

  it("refuses beyond the available balance (422 insufficient_balance) and writes nothing", async () => {
    const { api } = await newTenant();
    await collect(api, 700);
    const refused = await api("/payouts", { method: "POST", json: payoutBody(701) });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: "insufficient_balance" });
    expect(refused.body.message).toContain("700");
    expect((await api("/payouts")).body.data).toEqual([]);
    expect((await api("/balance")).body.balances).toEqual([{ currency: "XOF", available: 700, pending: 0 }]);
  });

  it("fails a payout the provider fails, and gives the money back to available", async () => {
    const { api } = await newTenant();
    await collect(api, 900);
    await collect(api, 900);
    await collect(api, 900);
    await collect(api, 900);
    await collect(api, 900);
    await collect(api, 900);
    // Above 5000 the sandbox fails the payout.
    const created = await api("/payouts", { method: "POST", json: payoutBody(5200, "+22996000002") });
    expect(created.status).toBe(200);
    const failed = await settled(api, `/payouts/${created.body.id}`, ["sent", "failed"]);
    expect(failed.state).toBe("failed");
    expect(failed.failureCode).not.toBeNull();
    expect((await api("/balance")).body.balances).toEqual([{ currency: "XOF", available: 5400, pending: 0 }]);
  });

  it("enforces provider A's limits before calling it: 1,000,000 per payout, 3 per number per 24 h", async () => {
    const { api } = await newTenant();
    const tooBig = await api("/payouts", { method: "POST", json: payoutBody(1_000_001) });
    expect(tooBig.status).toBe(422);
    expect(tooBig.body).toMatchObject({ code: "payout_limit_exceeded" });
    expect(tooBig.body.message).toContain("at most 1000000");
    await collect(api, 900);
    for (let i = 0; i < 3; i++) expect((await api("/payouts", { method: "POST", json: payoutBody(100, "+22996000003") })).status).toBe(200);
    const fourth = await api("/payouts", { method: "POST", json: payoutBody(100, "+22996000003") });
    expect(fourth.status).toBe(422);
    expect(fourth.body.code).toBe("payout_limit_exceeded");
    expect(fourth.body.message).toContain("at most 3 payouts to one number within 24 hours");
    // Another number is not limited by that one's payouts.
    expect((await api("/payouts", { method: "POST", json: payoutBody(100, "+22996000004") })).status).toBe(200);
  });

  it("answers 400 for a wallet no provider pays out to, or a number of another country", async () => {
    const { api } = await newTenant();
    const airtel = await api("/payouts", {
      method: "POST",
      json: { amount: 100, description: "x", recipient: { phone: { number: "+22790000000", country: "ne" }, operator: "airtel" } },
    });
    expect(airtel.status).toBe(400);
    expect(airtel.body.message).toEqual(["recipient.operator airtel cannot be paid out to in country ne"]);
    const wrongCode = await api("/payouts", { method: "POST", json: payoutBody(100, "+22896000000") });
    expect(wrongCode.status).toBe(400);
    expect(wrongCode.body.message).toEqual(["recipient.phone.number must start with +229 for country bj"]);
  });
});

describe("refunds", () => {
  it("refunds a payment in part then in full, to the phone that paid, and marks it refunded", async () => {
    const { api } = await newTenant();
    const endpoint = await api("/webhooks", { method: "POST", json: { url: receiver.url, events: ["refund.succeeded", "payment.refunded"] } });
    expect(endpoint.status).toBe(200);
    const payment = await collect(api, 800, "+22997000011");
    const partial = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 300, reason: "One item missing" } });
    expect(partial.status).toBe(200);
    expect(partial.body).toMatchObject({ paymentId: payment.id, state: "pending", amount: 300, reason: "One item missing" });
    expect(partial.body.id).toMatch(/^rf_/);
    expect(partial.body.recipient).toMatchObject({ phone: { number: "+22997000011", country: "bj" }, operator: "mtn" });
    await settled(api, `/refunds/${partial.body.id}`, ["succeeded", "failed"]);
    expect((await api(`/refunds/${partial.body.id}`)).body.state).toBe("succeeded");
    const afterPartial = await api(`/payments/${payment.id}`);
    expect(afterPartial.body).toMatchObject({ state: "succeeded", amountRefunded: 300, refundStatus: "partially_refunded" });

    // Above what is left: 422; no amount: the rest.
    const tooMuch = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 501 } });
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body).toMatchObject({ code: "amount_exceeds_refundable" });
    const rest = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: {} });
    expect(rest.body.amount).toBe(500);
    await settled(api, `/refunds/${rest.body.id}`, ["succeeded", "failed"]);
    const refunded = await api(`/payments/${payment.id}`);
    expect(refunded.body).toMatchObject({ state: "refunded", amountRefunded: 800, refundStatus: "refunded" });
    const again = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: {} });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("payment_not_refundable");

    const listed = await api(`/payments/${payment.id}/refunds`);
    expect(listed.body.data.map((r: Body) => r.id)).toEqual([rest.body.id, partial.body.id]);
    await waitUntil(() => received().find((e) => e.type === "payment.refunded" && e.data?.paymentId === payment.id), {
      what: "payment.refunded delivered",
      timeoutMs: 8_000,
    });
    expect(received().filter((e) => e.type === "refund.succeeded" && e.data?.paymentId === payment.id)).toHaveLength(2);
    // The payment's money went in and back out: nothing left available.
    const fees = (listed.body.data as Body[]).reduce((sum, r) => sum + (r.fee ?? 0), 0);
    expect((await api("/balance")).body.balances).toEqual([{ currency: "XOF", available: 0 - fees, pending: 0 }]);
  });

  it("refuses a payment that is not paid (409) and another tenant's payment (404)", async () => {
    const { api } = await newTenant();
    const pending = await api("/payments", {
      method: "POST",
      json: { amount: 3000, description: "waits for the console", operator: "mtn", customer: { phone: { number: "+22997000012", country: "bj" } } },
    });
    const refused = await api(`/payments/${pending.body.id}/refunds`, { method: "POST", json: {} });
    expect(refused.status).toBe(409);
    expect(refused.body.code).toBe("payment_not_refundable");
    const other = await newTenant();
    const paid = await collect(api, 500, "+22997000013");
    expect((await other.api(`/payments/${paid.id}/refunds`, { method: "POST", json: {} })).status).toBe(404);
    expect((await other.api(`/payments/${paid.id}/refunds`)).status).toBe(404);
    const mine = await api(`/payments/${paid.id}/refunds`, { method: "POST", json: { amount: 100 } });
    expect((await other.api(`/refunds/${mine.body.id}`)).status).toBe(404);
    expect((await other.api(`/payouts`)).body.data).toEqual([]);
  });

  it("never refunds more than was collected when 20 refunds arrive at once", async () => {
    const { api } = await newTenant();
    const payment = await collect(api, 900, "+22997000014");
    const answers = await Promise.all(Array.from({ length: 20 }, () => api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 400 } })));
    const accepted = answers.filter((a) => a.status === 200);
    expect(accepted).toHaveLength(2);
    expect(answers.filter((a) => a.status === 422).every((a) => a.body.code === "amount_exceeds_refundable")).toBe(true);
    expect(answers.filter((a) => a.status !== 200 && a.status !== 422)).toEqual([]);
    const listed = (await api(`/payments/${payment.id}/refunds`)).body.data as Body[];
    expect(listed.reduce((sum, r) => sum + r.amount, 0)).toBe(800);
  });
});

describe("isolation", () => {
  it("another tenant, environment or an operator naming another tenant reaches none of a tenant's payouts and refunds", async () => {
    const owner = await tg.insertTenant({ liveEnabled: true });
    const api = client(await tg.tenantToken(owner));
    const other = await tg.insertTenant({ liveEnabled: true });
    const payment = await collect(api, 900, "+22997000018");
    const payout = await api("/payouts", { method: "POST", json: payoutBody(100, "+22996000006") });
    const refund = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 100 } });
    await settled(api, `/payouts/${payout.body.id}`, ["sent"]);
    await settled(api, `/refunds/${refund.body.id}`, ["succeeded"]);
    const requests = [
      { path: `/payouts/${payout.body.id}` },
      { path: `/refunds/${refund.body.id}` },
      { path: `/payments/${payment.id}/refunds` },
      { method: "POST" as const, path: `/payments/${payment.id}/refunds`, body: { amount: 1 } },
    ];
    await expectIsolated(tg, {
      owner,
      other,
      environment: "sandbox",
      requests,
      object: (await api(`/payouts/${payout.body.id}`)).body,
      readBack: `/payouts/${payout.body.id}`,
    });
    await expectIsolated(tg, {
      owner,
      other,
      environment: "sandbox",
      requests,
      object: (await api(`/refunds/${refund.body.id}`)).body,
      readBack: `/payments/${payment.id}/refunds`,
    });
    // Lists and the balance show only the caller's own.
    const theirs = client(await tg.tenantToken(other));
    expect((await theirs("/payouts")).body.data).toEqual([]);
    expect((await theirs("/balance")).body.balances).toEqual([]);
    expect((await theirs("/balance/entries")).body.data).toEqual([]);
    expect((await theirs("/reports/reconciliation")).body.rows).toEqual([]);
  });
});

describe("what happens at the provider without us", () => {
  it("a payment refunded on provider A's dashboard becomes refunded and leaves the tenant's available balance", async () => {
    const { api } = await newTenant();
    const payment = await collect(api, 900, "+22997000016");
    expect((await api("/balance")).body.balances).toEqual([{ currency: "XOF", available: 900, pending: 0 }]);
    const refunded = await fetch(`${simBase}/_sim/transactions/${payment.providerTransactionId}/refund`, { method: "POST" });
    expect(refunded.status).toBe(200);
    await settled(api, `/payments/${payment.id}`, ["refunded"]);
    expect((await api("/balance")).body.balances).toEqual([{ currency: "XOF", available: 0, pending: 0 }]);
    const journals = ((await api(`/balance/entries?subjectId=${payment.id}`)).body.data as Body[]).map(
      (e) => `${e.journal.split(".")[1]} ${e.account} ${e.amount}`,
    );
    expect(journals.sort()).toEqual([
      "collected available 900",
      "collected provider:providerA -900",
      "refunded_at_provider:900 available -900",
      "refunded_at_provider:900 provider:providerA 900",
    ]);
  });

  it("a provider's word that differs from a final state of ours is kept for the reconciliation report", async () => {
    const { api } = await newTenant();
    const payment = await collect(api, 600, "+22997000017");
    const refund = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: {} });
    await settled(api, `/refunds/${refund.body.id}`, ["succeeded"]);
    expect((await api(`/payments/${payment.id}`)).body.state).toBe("refunded");
    // Provider A still calls the payment approved (it has no refunds: ours are payouts). A notification makes us read it again.
    await followPayment(tg.gateway.deps, { provider: "providerA", providerPaymentId: payment.providerTransactionId });
    const report = await api("/reports/reconciliation");
    expect(report.body.differences).toEqual([
      expect.objectContaining({
        kind: "payment",
        id: payment.id,
        provider: "providerA",
        ourState: "refunded",
        providerState: "succeeded",
        providerStatus: "approved",
        amount: 600,
      }),
    ]);
    const csv = await api("/reports/reconciliation", { headers: { accept: "text/csv" } });
    expect(csv.text).toContain(`difference,payment,providerA,,refunded,XOF,1,600,${payment.id}`);
  });
});

describe("the reconciliation report", () => {
  it("counts and totals payments, payouts and refunds per provider, operator and state; as JSON and as CSV", async () => {
    const { api } = await newTenant();
    const payment = await collect(api, 900, "+22997000015");
    const payout = await api("/payouts", { method: "POST", json: payoutBody(200, "+22996000005") });
    await settled(api, `/payouts/${payout.body.id}`, ["sent", "failed"]);
    const refund = await api(`/payments/${payment.id}/refunds`, { method: "POST", json: { amount: 100 } });
    await settled(api, `/refunds/${refund.body.id}`, ["succeeded", "failed"]);
    const report = await api("/reports/reconciliation");
    expect(report.status).toBe(200);
    expect(report.body.rows).toEqual([
      { kind: "payment", provider: "providerA", operator: "mtn", state: "succeeded", currency: "XOF", count: 1, total: 900 },
      { kind: "payout", provider: "providerA", operator: "mtn", state: "sent", currency: "XOF", count: 1, total: 200 },
      { kind: "refund", provider: "providerA", operator: "mtn", state: "succeeded", currency: "XOF", count: 1, total: 100 },
    ]);
    expect(report.body.differences).toEqual([]);
    const csv = await api("/reports/reconciliation", { headers: { accept: "text/csv" } });
    expect(csv.status).toBe(200);
    expect(csv.headers.get("content-type")).toContain("text/csv");
    expect(csv.text.split("\n")[0]).toBe(
      "section,kind,provider,operator,state,currency,count,total,id,tenant_id,provider_state,provider_status,last_seen_at,reported,difference",
    );
    expect(csv.text).toContain("total,payout,providerA,mtn,sent,XOF,1,200");
    // An operator sees every tenant's; a tenant's token cannot.
    const all = await fetch(`${base}/admin/reports/reconciliation`, { headers: { authorization: `Bearer ${await tg.adminToken()}` } });
    expect(all.status).toBe(200);
    const totals = ((await all.json()) as Body).rows as Body[];
    expect(totals.find((r) => r.kind === "payment" && r.state === "succeeded")!.count).toBeGreaterThan(1);
    expect((await api("/admin/reports/reconciliation")).status).toBe(403);
    const badWindow = await api("/reports/reconciliation?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z");
    expect(badWindow.status).toBe(400);

    // The lists behind the report, as CSV files: the same items as the JSON lists, field by field.
    const rowsOf = async (path: string) => {
      const answer = await api(path, { headers: { accept: "text/csv" } });
      expect(answer.headers.get("content-type")).toBe("text/csv; charset=utf-8");
      const [header, ...rows] = parse(answer.text) as string[][];
      return rows.map((row) => Object.fromEntries(header!.map((name, i) => [name, row[i]])));
    };
    const [refundRow] = await rowsOf("/refunds");
    expect(refundRow).toMatchObject({ id: refund.body.id, paymentId: payment.id, state: "succeeded", amount: "100", "recipient.phone.number": "+22997000015" });
    const [payoutRow] = await rowsOf("/payouts");
    expect(payoutRow).toMatchObject({ id: payout.body.id, state: "sent", amount: "200", "recipient.operator": "mtn", "recipient.firstname": "Kofi" });
    const entries = await rowsOf("/balance/entries");
    const json = (await api("/balance/entries?limit=100")).body.data as Body[];
    expect(entries.map((entry) => [entry.id, entry.journal, entry.account, entry.holding, Number(entry.amount)])).toEqual(
      json.map((entry) => [entry.id, entry.journal, entry.account, entry.holding, entry.amount]),
    );
    expect(entries.reduce((sum, entry) => sum + Number(entry.amount), 0)).toBe(0);
    const [paymentRow] = await rowsOf("/payments");
    expect(paymentRow).toMatchObject({ id: payment.id, state: "succeeded", amount: "900", amountRefunded: "100", operator: "mtn" });
  });
});

describe("migration 0014 on this file's ledger", () => {
  it("re-files every entry on the holding account the gateway wrote it on, every amount unchanged", async () => {
    const seen = await expectLedgerRefiledAsWritten(tg.gateway.deps.db);
    for (const movement of [
      "pooled:providerA collected",
      "pooled:providerA reserved",
      "pooled:providerA sent",
      "pooled:providerA released",
      "pooled:providerA refunded_at_provider:900",
    ])
      expect(seen).toContain(movement);
  });
});
