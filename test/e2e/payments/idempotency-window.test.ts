/**
 * A payment is made once for one `Idempotency-Key` even when its answer was never stored (issue 28, the
 * idempotency window, for money in): `POST /payments`, `POST /providerA/direct-payment` and the pay page's payment.
 *
 * The window: the payment row committed (and provider A pushed), then the key's answer was not stored — the API
 * process died before storing it, the key's lock ran out or was taken over while the request was still at work —
 * so the key is left `in_flight` under a lock that ran out, which the next request with the key takes over and
 * runs again. Before migration 0034 that run made a second payment under a new id, and provider A a second
 * transaction with a second USSD push. Now the key is the payment row's own: the retry answers that payment.
 *
 * The state the killed process leaves is written as it would be (the key `in_flight`, its lock run out); provider
 * A's own books (`GET /_sim/transactions`: one transaction, one push) and the merchant's list are what is asserted.
 * Runs of one keyed request at once (what the layer lets through after takeovers) are called on the service.
 */
import { afterAll, beforeAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { AppError } from "../../../src/errors.ts";
import { createDirectPayment } from "../../../src/services/direct-payments/create-direct-payment.ts";
import { createPayment } from "../../../src/services/payments/create-payment.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { freePort } from "../../support/ports.ts";
import { advanceThroughWaits, virtualTime } from "../../support/virtual-time.ts";
import { type ProviderARig, startProviderARig } from "../../support/provider-a-rig.ts";

setDefaultTimeout(60_000);

type Body = Record<string, any>;

let rig: ProviderARig;
let tg: TestGateway;

async function api(token: string | undefined, path: string, init: { method?: string; json?: unknown; key?: string } = {}) {
  const response = await fetch(`${rig.base}${path}`, {
    method: init.method ?? "GET",
    headers: {
      ...(token !== undefined && { authorization: `Bearer ${token}` }),
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

async function newTenant(): Promise<{ tenantId: string; token: string }> {
  const tenantId = await tg.insertTenant();
  return { tenantId, token: await tg.tenantToken(tenantId) };
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

/** The idempotency layer's row gone (purged after 24 hours, or freed by a 5xx after the payment committed). */
async function keyForgotten(key: string): Promise<void> {
  await tg.gateway.deps.db.deleteFrom("idempotency_keys").where("key", "=", key).execute();
}

/** Provider A's own books: the transactions it made for the tenant's payments (by our id, its merchant reference). */
async function providerTransactionsOf(tenantId: string): Promise<Body[]> {
  const ours = new Set((await tg.gateway.deps.db.selectFrom("payments").select("id").where("tenant_id", "=", tenantId).execute()).map((r) => r.id));
  const books = (await (await fetch(`${rig.simBase}/_sim/transactions`)).json()) as { transactions: Body[] };
  return books.transactions.filter((t) => ours.has(t.merchant_reference));
}

async function paymentIdsOf(token: string): Promise<string[]> {
  return (await api(token, "/payments")).body.data.map((p: Body) => p.id);
}

beforeAll(async () => {
  rig = await startProviderARig();
  tg = rig.tg;
});

afterAll(() => rig?.close());

describe("the idempotency window of money in", () => {
  it("POST /payments whose answer was never stored: the retries with the key answer the same payment, pushed once", async () => {
    const { tenantId, token } = await newTenant();
    const key = `order-${crypto.randomUUID()}`;
    // 1000–5000: the sandbox keeps it pending (the console settles it), so the retry meets a payment at work.
    const body = { amount: 2500, description: "Order 7", operator: "mtn", customer: { phone: { number: "+22997000201", country: "bj" } } };
    const first = await api(token, "/payments", { method: "POST", json: body, key });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    await answerNeverStored(key);

    const retries = await Promise.all([
      api(token, "/payments", { method: "POST", json: body, key }),
      api(token, "/payments", { method: "POST", json: body, key }),
    ]);
    const answered = retries.filter((r) => r.status === 200);
    expect(answered.length).toBeGreaterThanOrEqual(1);
    for (const r of retries) expect([200, 409], JSON.stringify(r.body)).toContain(r.status);
    for (const r of answered) {
      expect(r.body.id).toBe(first.body.id);
      expect(r.body).toMatchObject({ state: "pending", providerTransactionId: first.body.providerTransactionId });
      expect(r.body.attempts.map((a: Body) => a.outcome)).toEqual(["started"]);
    }
    expect((await api(token, "/payments", { method: "POST", json: body, key })).body.id).toBe(first.body.id);

    expect(await paymentIdsOf(token)).toEqual([first.body.id]);
    const books = await providerTransactionsOf(tenantId);
    expect(books.map((t) => [t.merchant_reference, t.push_sent])).toEqual([[first.body.id, true]]);

    // The key is the payment's for good: once the layer forgot it, the same body answers the payment, another is 422.
    await keyForgotten(key);
    const same = await api(token, "/payments", { method: "POST", json: body, key });
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    expect(same.replayed).toBe(false);
    expect(same.body.id).toBe(first.body.id);
    await keyForgotten(key);
    const other = await api(token, "/payments", { method: "POST", json: { ...body, amount: 2600 }, key });
    expect(other.status, JSON.stringify(other.body)).toBe(422);
    expect(other.body.code).toBe("idempotency_mismatch");
    expect(await paymentIdsOf(token)).toEqual([first.body.id]);
    expect(await providerTransactionsOf(tenantId)).toHaveLength(1);
  });

  it("POST /providerA/direct-payment whose answer was never stored: the retry answers the same payment and transaction, pushed once", async () => {
    const { tenantId, token } = await newTenant();
    const key = `direct-${crypto.randomUUID()}`;
    const body = { amount: 2500, description: "Order 8", payment_method: "mnoA_open", phone_number: { number: "+22997000202", country: "bj" } };
    const first = await api(token, "/providerA/direct-payment", { method: "POST", json: body, key });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    await answerNeverStored(key);

    const retries = await Promise.all([
      api(token, "/providerA/direct-payment", { method: "POST", json: body, key }),
      api(token, "/providerA/direct-payment", { method: "POST", json: body, key }),
    ]);
    for (const r of retries) expect([200, 409], JSON.stringify(r.body)).toContain(r.status);
    for (const r of retries.filter((x) => x.status === 200)) expect(r.body).toEqual(first.body);
    expect((await api(token, "/providerA/direct-payment", { method: "POST", json: body, key })).body).toEqual(first.body);

    expect(await paymentIdsOf(token)).toEqual([first.body.paymentId]);
    const books = await providerTransactionsOf(tenantId);
    expect(books.map((t) => [t.id, t.push_sent])).toEqual([[first.body.transactionId, true]]);

    await keyForgotten(key);
    const other = await api(token, "/providerA/direct-payment", { method: "POST", json: { ...body, description: "Order 9" }, key });
    expect(other.status, JSON.stringify(other.body)).toBe(422);
    expect(other.body.code).toBe("idempotency_mismatch");
    expect(await providerTransactionsOf(tenantId)).toHaveLength(1);
  });

  it("the pay page's payment whose answer was never stored: the page's retry with its key answers the same payment, pushed once", async () => {
    const { tenantId, token } = await newTenant();
    const link = await api(token, "/payment-links", { method: "POST", json: { amount: 2500, description: "Panier 12", reusable: true } });
    expect(link.status, JSON.stringify(link.body)).toBe(200);
    const key = crypto.randomUUID();
    const body = { operator: "mtn", phone: { number: "+22997000203", country: "bj" } };
    const first = await api(undefined, `/pay/${link.body.id}/payments`, { method: "POST", json: body, key });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    await answerNeverStored(key);

    const retry = await api(undefined, `/pay/${link.body.id}/payments`, { method: "POST", json: body, key });
    expect(retry.status, JSON.stringify(retry.body)).toBe(200);
    expect(retry.body.id).toBe(first.body.id);
    expect(await paymentIdsOf(token)).toEqual([first.body.id]);
    expect((await providerTransactionsOf(tenantId)).map((t) => t.push_sent)).toEqual([true]);

    await keyForgotten(key);
    const other = await api(undefined, `/pay/${link.body.id}/payments`, {
      method: "POST",
      json: { ...body, phone: { number: "+22997000204", country: "bj" } },
      key,
    });
    expect(other.status, JSON.stringify(other.body)).toBe(422);
    expect(other.body.code).toBe("idempotency_mismatch");
    // Another key is another payment (the key names one payment; it does not stop the next).
    const next = await api(undefined, `/pay/${link.body.id}/payments`, { method: "POST", json: body, key: crypto.randomUUID() });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect(next.body.id).not.toBe(first.body.id);
    expect(await providerTransactionsOf(tenantId)).toHaveLength(2);
  });

  it("a payment that failed in its own request before anything was sent gives its key back: the retry after that 502 runs again", async () => {
    // Provider A's address refuses connections: nothing is ever sent, the payment fails, the 502 names nothing (not stored).
    // On a virtual time of its own: the client's waits before retrying the refused connection are stepped through.
    const downTime = virtualTime();
    const down = await startTestGateway(
      {
        PROVIDER_A_SANDBOX_URL: `http://127.0.0.1:${await freePort()}`,
        PROVIDER_A_SANDBOX_SECRET_KEY: rig.account.secretKey,
        PROVIDER_A_SANDBOX_WEBHOOK_SECRET: rig.account.webhookSecret,
      },
      { time: downTime },
    );
    try {
      const tenantId = await down.insertTenant();
      const token = await down.tenantToken(tenantId);
      const key = `unreachable-${crypto.randomUUID()}`;
      const body = { amount: 2500, description: "Order 10", operator: "mtn", customer: { phone: { number: "+22997000207", country: "bj" } } };
      const post = async () => {
        const answer = down.request("/payments", {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify(body),
        });
        await advanceThroughWaits(downTime, [100, 400], { what: "provider A's client" });
        const response = await answer;
        return { status: response.status, body: (await response.json()) as Body };
      };
      const first = await post();
      expect(first.status, JSON.stringify(first.body)).toBe(502);
      expect(first.body).not.toHaveProperty("paymentId");
      const retry = await post();
      expect(retry.status, JSON.stringify(retry.body)).toBe(502);
      const rows = await down.gateway.deps.db
        .selectFrom("payments")
        .select(["state", "failure_code", "idempotency_key"])
        .where("tenant_id", "=", tenantId)
        .execute();
      expect(rows).toEqual([
        { state: "failed", failure_code: "provider_unreachable", idempotency_key: null },
        { state: "failed", failure_code: "provider_unreachable", idempotency_key: null },
      ]);
    } finally {
      await down.close();
    }
  });

  it("runs of one keyed request at once (as the idempotency layer lets through after takeovers) make one payment and one push", async () => {
    const { tenantId, token } = await newTenant();
    const scope = { tenantId, environment: "sandbox" as const };
    const deps = tg.gateway.deps;

    const routedKey = { key: `runs-${crypto.randomUUID()}`, path: "/payments" };
    const input = { amount: 2500, description: "Runs", operator: "mtn", customer: { phone: { number: "+22997000205", country: "bj" } } };
    const routed = await Promise.all(Array.from({ length: 5 }, () => createPayment(deps, { ...scope, input, idempotency: routedKey })));
    expect(new Set(routed.map((p) => p.id)).size).toBe(1);

    const directKey = { key: `runs-${crypto.randomUUID()}`, path: "/providerA/direct-payment" };
    const direct = { amount: 2500, description: "Runs direct", payment_method: "mnoA_open" as const, phone_number: { number: "+22997000206", country: "bj" } };
    // A run that meets the payment before provider A named its transaction answers as an unknown outcome does: 502 naming it.
    const runs = await Promise.all(
      Array.from({ length: 5 }, () =>
        createDirectPayment(deps, { ...scope, input: direct, idempotency: directKey }).then(
          (answer) => answer.paymentId,
          (error: unknown) => {
            if (!(error instanceof AppError) || error.status !== 502) throw error;
            return error.extras.paymentId;
          },
        ),
      ),
    );
    expect(new Set(runs).size).toBe(1);

    expect((await paymentIdsOf(token)).sort()).toEqual([routed[0]!.id, runs[0]!].sort());
    const books = await providerTransactionsOf(tenantId);
    expect(books.map((t) => t.merchant_reference).sort()).toEqual([routed[0]!.id, runs[0]!].sort());
    expect(books.every((t) => t.push_sent)).toBe(true);
  });
});
