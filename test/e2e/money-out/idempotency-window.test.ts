/**
 * A payout or refund is made once for one `Idempotency-Key` even when its answer was never stored (issue 28
 * point 4, the idempotency window): the row and its ledger reservation committed, then the API process died
 * before it stored the key's answer — the key left `in_flight` under a lock that ran out, which the next request
 * with the key takes over and runs again. Before migration 0033 that run made a second payout (or refund) under
 * a new id, which provider A sent as another payout. Now the key is the row's own: the retry answers that row.
 *
 * The state the killed process leaves is written as it would be (the key `in_flight`, its lock run out); provider
 * A's own books (`GET /_sim/payouts`) and the merchant's lists are what is asserted.
 */
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { createPayout } from "../../../src/services/payouts/create-payout.ts";
import { createRefund } from "../../../src/services/payouts/create-refund.ts";
import type { TestGateway } from "../../support/gateway.ts";
import { type ProviderARig, startProviderARig } from "../../support/provider-a-rig.ts";
import { waitUntil } from "../../support/wait.ts";

// The payouts' sync chain sends a payout at once and reads it again after 5, 15 and 30 s.
setDefaultTimeout(60_000);

type Body = Record<string, any>;

let rig: ProviderARig;
let tg: TestGateway;

async function api(token: string, path: string, init: { method?: string; json?: unknown; key?: string } = {}) {
  const response = await fetch(`${rig.base}${path}`, {
    method: init.method ?? "GET",
    headers: {
      authorization: `Bearer ${token}`,
      ...(init.json !== undefined && { "content-type": "application/json" }),
      ...(init.key !== undefined && { "idempotency-key": init.key }),
    },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: (text.startsWith("{") ? JSON.parse(text) : {}) as Body,
    replayed: response.headers.get("idempotent-replayed") === "true",
  };
}

/** A tenant, and a succeeded MTN Benin payment of 800 from `number` (the sandbox approves it by itself). */
async function tenantWithPayment(number: string): Promise<{ tenantId: string; token: string; paymentId: string }> {
  const tenantId = await tg.insertTenant();
  const token = await tg.tenantToken(tenantId);
  const created = await api(token, "/payments", {
    method: "POST",
    json: { amount: 800, description: "Order", operator: "mtn", customer: { phone: { number, country: "bj" }, firstname: "Awa" } },
  });
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  await waitUntil(async () => (await api(token, `/payments/${created.body.id}`)).body.state === "succeeded", {
    what: "the payment succeeded",
    timeoutMs: 10_000,
    intervalMs: 50,
  });
  return { tenantId, token, paymentId: created.body.id };
}

/** What a process killed after the commit and before storing the answer leaves: the key in flight, its lock run out. */
async function answerNeverStored(key: string): Promise<void> {
  const updated = await tg.gateway.deps.db
    .updateTable("idempotency_keys")
    .set({ state: "in_flight", response_status: null, response_body: null, response_headers: null, locked_until: new Date(Date.now() - 1_000) })
    .where("key", "=", key)
    .executeTakeFirst();
  expect(updated.numUpdatedRows).toBe(1n);
}

/** Provider A's own books: the payouts it made for any payout or refund of the tenant (by our id, its merchant reference). */
async function providerPayoutsOf(tenantId: string): Promise<Body[]> {
  const ours = new Set((await tg.gateway.deps.db.selectFrom("payouts").select("id").where("tenant_id", "=", tenantId).execute()).map((r) => r.id));
  const books = (await (await fetch(`${rig.simBase}/_sim/payouts`)).json()) as { payouts: Body[] };
  return books.payouts.filter((p) => ours.has(p.merchant_reference));
}

beforeAll(async () => {
  rig = await startProviderARig();
  tg = rig.tg;
});

afterAll(() => rig?.close());

describe("the idempotency window of money out", () => {
  it("a payout whose answer was never stored: the retry with the key answers the same payout, sent once", async () => {
    const { tenantId, token } = await tenantWithPayment("+22997000101");
    const key = `supplier-${crypto.randomUUID()}`;
    const body = { amount: 300, description: "Supplier", recipient: { phone: { number: "+22996000102", country: "bj" }, operator: "mtn" } };
    const first = await api(token, "/payouts", { method: "POST", json: body, key });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    await answerNeverStored(key);

    const retries = await Promise.all([
      api(token, "/payouts", { method: "POST", json: body, key }),
      api(token, "/payouts", { method: "POST", json: body, key }),
    ]);
    const answered = retries.filter((r) => r.status === 200);
    expect(answered.length).toBeGreaterThanOrEqual(1);
    for (const r of retries) expect([200, 409], JSON.stringify(r.body)).toContain(r.status);
    for (const r of answered) expect(r.body.id).toBe(first.body.id);
    const after = await api(token, "/payouts", { method: "POST", json: body, key });
    expect(after.body.id).toBe(first.body.id);

    const sent = await waitUntil(
      async () => {
        const read = await api(token, `/payouts/${first.body.id}`);
        return read.body.state === "pending" ? undefined : read.body;
      },
      { what: "the payout settled", timeoutMs: 40_000, intervalMs: 100 },
    );
    expect(sent.state).toBe("sent");
    expect((await api(token, "/payouts")).body.data.map((p: Body) => p.id)).toEqual([first.body.id]);
    expect((await providerPayoutsOf(tenantId)).map((p) => p.merchant_reference)).toEqual([first.body.id]);
    // Another body under the key is refused, even once the idempotency layer forgot the key.
    await tg.gateway.deps.db.deleteFrom("idempotency_keys").where("key", "=", key).execute();
    const other = await api(token, "/payouts", { method: "POST", json: { ...body, amount: 301 }, key });
    expect(other.status).toBe(422);
    expect(other.body.code).toBe("idempotency_mismatch");
  });

  it("a refund whose answer was never stored: the retry answers the same refund, even once the payment is refunded in full", async () => {
    const { tenantId, token, paymentId } = await tenantWithPayment("+22997000103");
    const key = `refund-${crypto.randomUUID()}`;
    const first = await api(token, `/payments/${paymentId}/refunds`, { method: "POST", json: { reason: "Out of stock" }, key });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    await answerNeverStored(key);
    const retry = await api(token, `/payments/${paymentId}/refunds`, { method: "POST", json: { reason: "Out of stock" }, key });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.id).toBe(first.body.id);
    await waitUntil(async () => (await api(token, `/refunds/${first.body.id}`)).body.state !== "pending", {
      what: "the refund settled",
      timeoutMs: 40_000,
      intervalMs: 100,
    });
    expect((await api(token, `/payments/${paymentId}/refunds`)).body.data.map((r: Body) => r.id)).toEqual([first.body.id]);
    expect((await providerPayoutsOf(tenantId)).map((p) => p.merchant_reference)).toEqual([first.body.id]);
  });

  it("runs of one keyed request at once (as the idempotency layer lets through after takeovers) make one payout and one refund", async () => {
    const { tenantId, token, paymentId } = await tenantWithPayment("+22997000105");
    const scope = { tenantId, environment: "sandbox" as const };
    const payoutKey = `runs-${crypto.randomUUID()}`;
    const input = { amount: 200, description: "Runs", recipient: { phone: { number: "+22996000106", country: "bj" }, operator: "mtn" } };
    const payouts = await Promise.all(Array.from({ length: 5 }, () => createPayout(tg.gateway.deps, { ...scope, input, idempotencyKey: payoutKey })));
    expect(new Set(payouts.map((p) => p.id)).size).toBe(1);
    const refundKey = `runs-${crypto.randomUUID()}`;
    const refunds = await Promise.all(
      Array.from({ length: 5 }, () => createRefund(tg.gateway.deps, { ...scope, paymentId, input: { amount: 100 }, idempotencyKey: refundKey })),
    );
    expect(new Set(refunds.map((r) => r.id)).size).toBe(1);
    const rows = await tg.gateway.deps.db.selectFrom("payouts").select(["id", "purpose"]).where("tenant_id", "=", tenantId).orderBy("id").execute();
    expect(rows.map((r) => r.id).sort()).toEqual([payouts[0]!.id, refunds[0]!.id].sort());
    await waitUntil(
      async () =>
        (await api(token, `/payouts/${payouts[0]!.id}`)).body.state !== "pending" && (await api(token, `/refunds/${refunds[0]!.id}`)).body.state !== "pending",
      { what: "the payout and the refund settled", timeoutMs: 40_000, intervalMs: 100 },
    );
    expect((await providerPayoutsOf(tenantId)).map((p) => p.merchant_reference).sort()).toEqual([payouts[0]!.id, refunds[0]!.id].sort());
  });
});
