/**
 * Never more out than in, fees included (issue 24): provider A's sandbox charging 1 % per payout, a payout
 * from the service's pooled account sets the fee it announces aside before the start, from what the tenant
 * holds there — or is stopped when that cannot cover it, nothing started at the provider. Over real HTTP.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { callerOf, type Json } from "../../support/json.ts";
import { type ProviderARig, startProviderARig } from "../../support/provider-a-rig.ts";
import { waitUntil } from "../../support/wait.ts";

let rig: ProviderARig;

beforeAll(async () => {
  rig = await startProviderARig({ payoutFeeRate: 0.01 });
});

afterAll(() => rig?.close());

const call = callerOf(() => rig.base);

async function settled(token: string, path: string): Promise<Json> {
  return waitUntil(
    async () => {
      const read = await call(token, "GET", path);
      return read.body.state === "pending" ? undefined : read.body;
    },
    { what: `${path} settled`, timeoutMs: 15_000, intervalMs: 100 },
  );
}

async function tenantWith(amount: number): Promise<string> {
  const token = await rig.tg.tenantToken(await rig.tg.insertTenant());
  const created = await call(token, "POST", "/payments", {
    amount,
    description: "Commande",
    operator: "mtn",
    customer: { phone: { number: "+22997000001", country: "bj" } },
  });
  expect(created.status).toBe(200);
  await waitUntil(async () => (await call(token, "GET", `/payments/${created.body.id}`)).body.state === "succeeded", {
    what: "the payment succeeded",
    timeoutMs: 10_000,
  });
  return token;
}

const payout = (amount: number, number: string) => ({
  amount,
  description: "Fournisseur",
  recipient: { phone: { number, country: "bj" }, operator: "mtn" },
});

describe("a pooled payout's fee", () => {
  it("is set aside before the start and charged once sent: what the tenant held covers amount and fee", async () => {
    const token = await tenantWith(800);
    const sent = await call(token, "POST", "/payouts", payout(700, "+22996000011"));
    expect(sent.status).toBe(200);
    expect(await settled(token, `/payouts/${sent.body.id}`)).toMatchObject({ state: "sent", fee: 7 });
    expect((await call(token, "GET", "/balance")).body.balances).toEqual([{ currency: "XOF", available: 93, pending: 0 }]);
    const journals = ((await call(token, "GET", `/balance/entries?subjectId=${sent.body.id}`)).body.data as Json[]).map(
      (e) => `${e.journal.split(".")[1]} ${e.account} ${e.amount}`,
    );
    expect(journals.sort()).toEqual([
      "fee fees 7",
      "fee pending -7",
      "fee_reserved available -7",
      "fee_reserved pending 7",
      "reserved available -700",
      "reserved pending 700",
      "sent pending -700",
      "sent provider:providerA 700",
    ]);
  }, 40_000);

  it("stops the payout before its start when the tenant's money there cannot pay the fee too", async () => {
    const token = await tenantWith(800);
    const all = await call(token, "POST", "/payouts", payout(800, "+22996000012"));
    expect(all.status).toBe(200);
    expect(await settled(token, `/payouts/${all.body.id}`)).toMatchObject({ state: "failed", failureCode: "insufficient_balance" });
    const atProvider = ((await (await fetch(`${rig.simBase}/_sim/payouts`)).json()) as { payouts: Json[] }).payouts.filter(
      (p) => p.merchant_reference === all.body.id,
    );
    // Created (which moves no money), never started.
    expect(atProvider.map((p) => p.status)).toEqual(["pending"]);
    expect((await call(token, "GET", "/balance")).body.balances).toEqual([{ currency: "XOF", available: 800, pending: 0 }]);
    const events = (await call(token, "GET", "/events?type=payout.failed")).body.data as Json[];
    expect(events.filter((e) => e.data?.id === all.body.id)).toHaveLength(1);
  }, 40_000);
});
