/**
 * Money where it sits (issue 24): a tenant's balance is kept per holding account — the service's pooled
 * provider A account, the tenant's own provider A or provider B account — and a payout or refund from the
 * pooled account spends only what the tenant holds on it. Over real HTTP against both simulators: money
 * collected on the tenant's own provider B account, or on its own provider A account whose keys it then
 * removed, cannot leave through the service's pooled account.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { callerOf, type Json } from "../../support/json.ts";
import { type ProviderARig, startProviderARig } from "../../support/provider-a-rig.ts";
import { type SimulatorServer, startSimulator } from "../../support/provider-b-rig.ts";
import { waitUntil } from "../../support/wait.ts";
import { expectLedgerRefiledAsWritten } from "../../support/ledger-refile.ts";

let rigA: ProviderARig;
let simB: SimulatorServer;

beforeAll(async () => {
  simB = await startSimulator();
  rigA = await startProviderARig({
    env: { PROVIDER_B_SANDBOX_URL: `${simB.url}/sandbox-api/v1`, PROVIDER_B_LIVE_URL: `${simB.url}/api/v1`, PROVIDER_TIMEOUT_MS: "5000" },
  });
});

afterAll(async () => {
  await rigA?.close();
  await simB?.stop();
});

/** The tenant of each token (the spec's provider B routes want x-tenant-id). */
const tenantOf = new Map<string, string>();

const call = callerOf(
  () => rigA.base,
  (token) => ({ "x-tenant-id": tenantOf.get(token)! }),
);

async function newTenant(): Promise<{ id: string; token: string }> {
  const id = await rigA.tg.insertTenant();
  const token = await rigA.tg.tenantToken(id);
  tenantOf.set(token, id);
  return { id, token };
}

/**
 * Polls `path` until its state is `state`. Up to 35 s: a payout not sent by its first step (the provider's
 * notification lost or late on a loaded machine) is read again by its sync chain 5, 15 and 30 s after its creation.
 */
async function until(token: string, path: string, state: string): Promise<Json> {
  let last: Json | undefined;
  return waitUntil(
    async () => {
      const read = await call(token, "GET", path);
      last = read.body;
      return read.body.state === state ? read.body : undefined;
    },
    { what: `${path} ${state}`, timeoutMs: 35_000, intervalMs: 100, lastSeen: () => last },
  );
}

/** A paid MTN Benin payment (below 1000: provider A's sandbox approves it by itself). */
async function collectMtnBenin(token: string, amount: number): Promise<Json> {
  const created = await call(token, "POST", "/payments", {
    amount,
    description: "Commande",
    operator: "mtn",
    customer: { phone: { number: "+22997000001", country: "bj" } },
  });
  expect(created.status).toBe(200);
  return until(token, `/payments/${created.body.id}`, "succeeded");
}

/** Provider A's payouts under our id, as its simulator holds them. */
async function providerAPayouts(payoutId: string): Promise<Json[]> {
  const all = ((await (await fetch(`${rigA.simBase}/_sim/payouts`)).json()) as { payouts: Json[] }).payouts;
  return all.filter((payout) => payout.merchant_reference === payoutId);
}

const mtnBeninPayout = (amount: number) => ({
  amount,
  description: "Fournisseur",
  recipient: { phone: { number: "+22997000123", country: "bj" }, operator: "mtn" },
});

function account(balance: Json, holding: string): Json | undefined {
  return (balance.accounts as Json[]).find((a) => a.holding === holding);
}

describe("money where it sits", () => {
  it("refuses a pooled payout of money collected on the tenant's own provider B account (the issue's example)", async () => {
    const { id, token } = await newTenant();
    const keys = await simB.account();
    expect((await call(token, "PUT", `/tenants/${id}/credentials/providerB`, { environment: "sandbox", ...keys })).status).toBe(200);
    const checkout = await call(token, "POST", "/providerB/checkout", {
      amount: 900,
      description: "Commande 42",
      returnUrl: "https://shop.example/merci",
      cancelUrl: "https://shop.example/panier",
      customer: { name: "Awa Diop", phone: "+221771234567" },
    });
    expect(checkout.status).toBe(200);
    expect((await simB.press(checkout.body.token, "pay", { payment_method: "wave-senegal" })).status).toBe(200);
    await until(token, `/payments/${checkout.body.paymentId}`, "succeeded");

    // MTN Benin is paid out by provider A; the tenant has no provider A account: the pooled one would send it.
    const refused = await call(token, "POST", "/payouts", { ...mtnBeninPayout(850), provider: "providerA" });
    expect(refused.status).toBe(422);
    expect(refused.body.code).toBe("insufficient_balance");
    expect(refused.body.message).toContain("pooled:providerA");
    expect(refused.body.message).toContain("850");

    const balance = (await call(token, "GET", "/balance")).body;
    expect(balance.balances).toEqual([{ currency: "XOF", available: 900, pending: 0 }]);
    expect(account(balance, "own:providerB")).toMatchObject({
      kind: "own",
      provider: "providerB",
      label: "Provider B",
      balances: [{ currency: "XOF", available: 900, pending: 0 }],
      reported: { error: null },
    });
    // The pooled account it could pay out from is listed, holding nothing of this tenant's, and shows no provider balance.
    expect(account(balance, "pooled:providerA")).toMatchObject({ kind: "pooled", balances: [], reported: null });
    expect((balance.accounts as Json[]).map((a) => a.holding)).toEqual(["pooled:providerA", "own:providerB"]);
    // Nothing was written: no payout row, no entry beyond the collection.
    expect((await call(token, "GET", "/payouts")).body.data).toEqual([]);
    const entries = (await call(token, "GET", "/balance/entries")).body.data as Json[];
    expect(entries.map((e) => [e.journal.split(".")[1], e.account, e.holding, e.amount])).toEqual([
      ["collected", "provider:providerB", "own:providerB", -900],
      ["collected", "available", "own:providerB", 900],
    ]);
  }, 40_000);

  it("pays out of the pooled account what the tenant collected there, and no more", async () => {
    const { token } = await newTenant();
    await collectMtnBenin(token, 800);
    const tooMuch = await call(token, "POST", "/payouts", mtnBeninPayout(801));
    expect(tooMuch.status).toBe(422);
    expect(tooMuch.body.code).toBe("insufficient_balance");
    const payout = await call(token, "POST", "/payouts", mtnBeninPayout(800));
    expect(payout.status).toBe(200);
    expect(payout.body.provider).toBe("providerA");
    await until(token, `/payouts/${payout.body.id}`, "sent");
    expect(await providerAPayouts(payout.body.id)).toHaveLength(1);
    const balance = (await call(token, "GET", "/balance")).body;
    expect(account(balance, "pooled:providerA")?.balances).toEqual([{ currency: "XOF", available: 0, pending: 0 }]);
  }, 80_000);

  it("refuses the pooled refund of a payment collected on the tenant's own provider A account after its keys were removed", async () => {
    const { id, token } = await newTenant();
    const own = (await (await fetch(`${rigA.simBase}/_sim/accounts`, { method: "POST" })).json()) as { secretKey: string; webhookSecret: string };
    await fetch(`${rigA.simBase}/_sim/accounts/${own.secretKey}/webhook`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: `${rigA.base}/providerA/webhook/sandbox/${id}` }),
    });
    expect((await call(token, "PUT", `/tenants/${id}/credentials/providerA`, { environment: "sandbox", ...own })).status).toBe(200);
    const paid = await collectMtnBenin(token, 600);
    expect(paid.credentialVersion).toBe(1);
    expect(account((await call(token, "GET", "/balance")).body, "own:providerA")?.balances).toEqual([{ currency: "XOF", available: 600, pending: 0 }]);

    expect((await call(token, "DELETE", `/tenants/${id}/credentials/providerA/sandbox`)).status).toBe(200);
    // Without its keys, the refund and a payout would go out of the pooled account, where the tenant holds nothing.
    const refund = await call(token, "POST", `/payments/${paid.id}/refunds`, { amount: 600 });
    expect(refund.status).toBe(422);
    expect(refund.body.code).toBe("insufficient_balance");
    const payout = await call(token, "POST", "/payouts", mtnBeninPayout(500));
    expect(payout.status).toBe(422);
    expect(payout.body.code).toBe("insufficient_balance");
    expect((await (await fetch(`${rigA.simBase}/_sim/payouts`)).json()) as Json).not.toMatchObject({
      payouts: expect.arrayContaining([expect.objectContaining({ amount: 600 })]),
    });
    const balance = (await call(token, "GET", "/balance")).body;
    expect(account(balance, "own:providerA")).toMatchObject({
      balances: [{ currency: "XOF", available: 600, pending: 0 }],
      // Its keys are gone: its provider's balance cannot be read, and the balance says so.
      reported: { balances: [], error: "The tenant's Provider A keys for this environment are no longer stored: the balance cannot be read" },
    });
    expect(account(balance, "pooled:providerA")?.balances).toEqual([]);
  }, 40_000);

  it("refuses payouts and refunds above MAX_AMOUNT before anything is written", async () => {
    const { id, token } = await newTenant();
    const keys = await simB.account();
    expect((await call(token, "PUT", `/tenants/${id}/credentials/providerB`, { environment: "sandbox", ...keys })).status).toBe(200);
    for (const amount of [10_000_001, 9_007_199_254_740_991]) {
      const refused = await call(token, "POST", "/payouts", {
        amount,
        description: "Trop",
        recipient: { phone: { number: "+221770000001", country: "sn" }, operator: "wave" },
      });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: "validation_failed" });
      expect(JSON.stringify(refused.body)).toContain("amount must not be greater than 10000000");
    }
    const paid = await collectMtnBenin(token, 700);
    const refund = await call(token, "POST", `/payments/${paid.id}/refunds`, { amount: 9_007_199_254_740_991 });
    expect(refund.status).toBe(400);
    expect((await call(token, "GET", "/payouts")).body.data).toEqual([]);
    expect((await call(token, "GET", "/reports/reconciliation")).status).toBe(200);
  }, 40_000);
});

describe("migration 0014 on this file's ledger", () => {
  it("re-files every entry on the holding account the gateway wrote it on, every amount unchanged", async () => {
    const seen = await expectLedgerRefiledAsWritten(rigA.tg.gateway.deps.db);
    for (const movement of ["own:providerB collected", "own:providerA collected", "pooled:providerA collected", "pooled:providerA sent"])
      expect(seen).toContain(movement);
  });
});
