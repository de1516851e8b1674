/**
 * Money out on a tenant's own provider B account, end to end over real HTTP against provider B's
 * simulator: a checkout paid with Wave in Senegal is refunded to the phone that paid it (a disbursement);
 * a payout goes out by disburse with its callback; the tenant's balance shows provider B's own beside
 * ours; provider B's smallest payout is enforced before the call.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { TestDatabase } from "../../support/db.ts";
import type { Json } from "../../support/json.ts";
import { createTestDatabase, startRigGateway, startSimulator, type RigGateway, type SimulatorServer } from "../../support/provider-b-rig.ts";
import { waitUntil } from "../../support/wait.ts";
import { expectLedgerRefiledAsWritten } from "../../support/ledger-refile.ts";

let sim: SimulatorServer;
let database: TestDatabase;
let gw: RigGateway;

async function call(tenantId: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Json }> {
  const response = await gw.call(method, path, tenantId, body);
  return { status: response.status, body: (await response.json()) as Json };
}

async function settled(tenantId: string, path: string): Promise<Json> {
  return waitUntil(
    async () => {
      const read = await call(tenantId, "GET", path);
      return read.body.state === "pending" ? undefined : read.body;
    },
    { what: `${path} settled`, timeoutMs: 15_000, intervalMs: 100 },
  );
}

/** A tenant with provider B keys whose Senegal balance at provider B is `balance`. */
async function tenant(balance: number): Promise<{ tenantId: string; masterKey: string }> {
  const { tenantId, keys } = await gw.tenantWithAccount(sim);
  await fetch(`${sim.url}/_sim/accounts/${keys.masterKey}/balances`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ SN: balance }),
  });
  return { tenantId, masterKey: keys.masterKey };
}

beforeAll(async () => {
  sim = await startSimulator();
  database = await createTestDatabase();
  gw = await startRigGateway({ sim, database });
});

afterAll(async () => {
  await gw?.close();
  await sim?.stop();
  await database?.dispose();
});

describe("money out on a tenant's own provider B account", () => {
  it("refunds a Wave checkout to the phone that paid, by a disbursement", async () => {
    const { tenantId } = await tenant(10_000);
    const created = await call(tenantId, "POST", "/providerB/checkout", {
      amount: 900,
      description: "Commande 7",
      returnUrl: "https://shop.example/merci",
      cancelUrl: "https://shop.example/panier",
      customer: { name: "Awa Diop", email: "awa@example.com", phone: "+221770000007" },
    });
    expect(created.status).toBe(200);
    expect((await sim.press(created.body.token, "pay", { payment_method: "wave-senegal" })).status).toBe(200);
    await waitUntil(async () => (await call(tenantId, "GET", `/payments/${created.body.paymentId}`)).body.state === "succeeded", {
      what: "the checkout paid",
      timeoutMs: 10_000,
    });
    const refund = await call(tenantId, "POST", `/payments/${created.body.paymentId}/refunds`, { amount: 400, reason: "Size" });
    expect(refund.status).toBe(200);
    expect(refund.body).toMatchObject({
      provider: "providerB",
      state: "pending",
      recipient: { phone: { number: "+221770000007", country: "sn" }, operator: "wave" },
    });
    const done = await settled(tenantId, `/refunds/${refund.body.id}`);
    expect(done.state).toBe("succeeded");
    const disbursements = ((await (await fetch(`${sim.url}/_sim/disbursements`)).json()) as { disbursements: Json[] }).disbursements;
    expect(disbursements.filter((d) => d.disburse_id === refund.body.id)).toEqual([
      expect.objectContaining({ status: "success", amount: 400, withdraw_mode: "wave-senegal", account_alias: "770000007", submits: 1 }),
    ]);
    expect((await call(tenantId, "GET", `/payments/${created.body.paymentId}`)).body).toMatchObject({
      amountRefunded: 400,
      refundStatus: "partially_refunded",
    });
  }, 30_000);

  it("sends a payout by disburse, and shows provider B's balance beside ours", async () => {
    const { tenantId } = await tenant(10_000);
    const payout = await call(tenantId, "POST", "/payouts", {
      amount: 700,
      description: "Livreur",
      recipient: { phone: { number: "+221770000008", country: "sn" }, operator: "orange" },
    });
    expect(payout.status).toBe(200);
    expect(payout.body.provider).toBe("providerB");
    expect((await settled(tenantId, `/payouts/${payout.body.id}`)).state).toBe("sent");
    const balance = await call(tenantId, "GET", "/balance");
    // Nothing collected through us: the payout took our available balance below zero (the provider paid it from the tenant's own account).
    expect(balance.body.balances).toEqual([{ currency: "XOF", available: -700, pending: 0 }]);
    // It went out of the tenant's own provider B account, and provider B's balance of that account is beside it.
    const b = balance.body.accounts.find((a: Json) => a.holding === "own:providerB");
    expect(b).toMatchObject({ kind: "own", provider: "providerB", balances: [{ currency: "XOF", available: -700, pending: 0 }] });
    expect(b.reported.error).toBeNull();
    expect(b.reported.balances).toContainEqual({ currency: "XOF", amount: 9300, label: "sn" });
  }, 30_000);

  it("refuses a payout below provider B's smallest (200 XOF) before calling it", async () => {
    const { tenantId } = await tenant(10_000);
    const refused = await call(tenantId, "POST", "/payouts", {
      amount: 150,
      description: "Trop petit",
      recipient: { phone: { number: "+221770000009", country: "sn" }, operator: "wave" },
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({ code: "payout_limit_exceeded", message: "Provider B sends at least 200 XOF per payout" });
    const disbursements = ((await (await fetch(`${sim.url}/_sim/disbursements`)).json()) as { disbursements: Json[] }).disbursements;
    expect(disbursements.filter((d) => d.account_alias === "770000009")).toEqual([]);
  });

  it("fails a payout provider B refuses for want of funds (4002), and gives the amount back", async () => {
    const { tenantId } = await tenant(100);
    const payout = await call(tenantId, "POST", "/payouts", {
      amount: 700,
      description: "Sans fonds",
      recipient: { phone: { number: "+221770000010", country: "sn" }, operator: "wave" },
    });
    const failed = await settled(tenantId, `/payouts/${payout.body.id}`);
    expect(failed).toMatchObject({ state: "failed", failureCode: "4002" });
    expect((await call(tenantId, "GET", "/balance")).body.balances).toEqual([{ currency: "XOF", available: 0, pending: 0 }]);
  }, 30_000);
});

describe("migration 0014 on this file's ledger", () => {
  it("re-files every entry on the holding account the gateway wrote it on, every amount unchanged", async () => {
    const seen = await expectLedgerRefiledAsWritten(gw.gateway.deps.db);
    for (const movement of ["own:providerB collected", "own:providerB reserved", "own:providerB sent", "own:providerB released"])
      expect(seen).toContain(movement);
  });
});
