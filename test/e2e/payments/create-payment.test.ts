/**
 * `POST /payments` on the default providers: an MTN phone in Benin goes to provider A (the only provider
 * whose capabilities push to it), through the provider A simulator over real HTTP, and settles like a direct
 * payment; what the one-call body gets wrong is one 400 listing every rule broken.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { TestGateway } from "../../support/gateway.ts";
import { type ProviderARig, startProviderARig } from "../../support/provider-a-rig.ts";
import { waitUntil } from "../../support/wait.ts";

let rig: ProviderARig;
let tg: TestGateway;
let base: string;
let token: string;

async function api(path: string, init: { method?: string; json?: unknown; headers?: Record<string, string> } = {}) {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${token}`);
  if (init.json !== undefined) headers.set("content-type", "application/json");
  const response = await fetch(`${base}${path}`, {
    method: init.method ?? "GET",
    headers,
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

const mtnBenin = { amount: 500, description: "Order 1042", operator: "mtn", customer: { phone: { number: "+22997000000", country: "bj" }, firstname: "Awa" } };

beforeAll(async () => {
  rig = await startProviderARig({ approveDelayMs: 100 });
  ({ tg, base } = rig);
  token = await tg.tenantToken(await tg.insertTenant());
});

afterAll(async () => {
  await rig?.close();
});

describe("POST /payments on the default providers", () => {
  it("sends an MTN Benin phone to provider A, and the payment settles from its webhook", async () => {
    const created = await api("/payments", { method: "POST", json: mtnBenin, headers: { "idempotency-key": "mtn-1" } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      provider: "providerA",
      kind: "direct_payment",
      state: "pending",
      amount: 500,
      currency: "XOF",
      paymentMethod: "mnoA_open",
      customer: { firstname: "Awa", phone: "+22997000000", country: "bj" },
    });
    expect(created.body.providerTransactionId).toMatch(/^\d+$/);
    const replayed = await api("/payments", { method: "POST", json: mtnBenin, headers: { "idempotency-key": "mtn-1" } });
    expect(replayed.body.id).toBe(created.body.id);
    // The spec's own status endpoint knows it by provider A's id, like any direct payment.
    const settled = await waitUntil(
      async () => {
        const read = await api(`/payments/${created.body.id}`);
        return read.body.state === "succeeded" ? read.body : undefined;
      },
      { what: "the payment settled", timeoutMs: 8_000, intervalMs: 50 },
    );
    expect(settled.providerStatus).toBe("approved");
    const status = await api(`/providerA/transaction/${created.body.providerTransactionId}/status`);
    expect(status.body).toMatchObject({ paymentId: created.body.id, status: "approved", approved: true });
  });

  it("takes Guinea's MTN in GNF, the country's currency", async () => {
    const created = await api("/payments", { method: "POST", json: { ...mtnBenin, customer: { phone: { number: "+224620000000", country: "gn" } } } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ provider: "providerA", currency: "GNF", paymentMethod: "mnoA_open_gn" });
  });

  it("answers one 400 naming every rule the body breaks", async () => {
    const wrong = await api("/payments", {
      method: "POST",
      json: { ...mtnBenin, amount: tg.config.maxAmount + 1, currency: "GNF", customer: { phone: { number: "+22897000000", country: "bj" } } },
    });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toEqual([
      "customer.phone.number must start with +229 for country bj",
      "currency must be XOF for country bj",
      `amount must not be greater than ${tg.config.maxAmount}`,
    ]);
    const orange = await api("/payments", { method: "POST", json: { ...mtnBenin, operator: "orange" } });
    expect(orange.status).toBe(400);
    expect(orange.body.message).toEqual(["operator orange is not available for country bj"]);
    const malformed = await api("/payments", {
      method: "POST",
      json: { ...mtnBenin, operator: "MTN", customer: { phone: { number: "97000000", country: "bj" } } },
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.message).toEqual(
      expect.arrayContaining([
        "operator must be a lower-case operator name, like mtn",
        "customer.phone.number must be in international format, like +22997000000",
      ]),
    );
  });

  it("keeps each tenant's payments its own", async () => {
    const created = await api("/payments", { method: "POST", json: mtnBenin });
    const other = await tg.tenantToken(await tg.insertTenant());
    const read = await fetch(`${base}/payments/${created.body.id}`, { headers: { authorization: `Bearer ${other}` } });
    expect(read.status).toBe(404);
  });
});
