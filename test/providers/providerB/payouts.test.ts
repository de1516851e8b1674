/**
 * Provider B's payouts behind the port (`providerB.payouts`), over real HTTP against its simulator's disburse
 * v2 API, with a tenant's own provider B account stored in the database (both drivers): send, resume, a lost
 * submit answer, refusals, read, the sandbox amount rules and the balances. The gateway's public URL is a
 * receiver here, so the probe and the callbacks provider B sends can be seen.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHash } from "node:crypto";
import type { Deps } from "../../../src/services/deps.ts";
import { type PayoutError, type ProviderAccountRef, ProviderCallError } from "../../../src/providers/provider.ts";
import { providerB } from "../../../src/providers/providerB/provider.ts";
import type { TestDatabase } from "../../support/db.ts";
import { createTestDatabase, type RigGateway, type SimulatorServer, startRigGateway } from "../../support/provider-b-rig.ts";
import { rejectionOf } from "../../support/errors.ts";
import { waitUntil } from "../../support/wait.ts";
import {
  disbursementsUnder,
  loseNextSubmit,
  payoutRequest,
  pressDisbursement,
  setBalances,
  startCallbackReceiver,
  startPayoutSimulator,
} from "./payouts-rig.ts";

const payouts = providerB.payouts!;

let sim: SimulatorServer;
let receiver: ReturnType<typeof startCallbackReceiver>;
let database: TestDatabase;
let gw: RigGateway;
let deps: Deps;
let tenantId: string;
let masterKey: string;
let account: ProviderAccountRef;

beforeAll(async () => {
  sim = startPayoutSimulator(100);
  receiver = startCallbackReceiver();
  database = await createTestDatabase();
  gw = await startRigGateway({ sim, database, workers: false, publicBaseUrl: receiver.url, env: { PROVIDER_TIMEOUT_MS: "2500" } });
  deps = gw.gateway.deps;
  const tenant = await gw.tenantWithAccount(sim);
  tenantId = tenant.tenantId;
  masterKey = tenant.keys.masterKey;
  account = await providerB.accountFor(deps, tenantId, "sandbox");
}, 30_000);

afterAll(async () => {
  await gw?.close();
  await database?.dispose();
  await sim?.stop();
  await receiver?.stop();
});

const request = (overrides: Parameters<typeof payoutRequest>[1] = {}) => payoutRequest({ tenantId, account }, overrides);

async function payoutErrorOf(promise: Promise<unknown>): Promise<PayoutError> {
  const error = await rejectionOf(promise, 5000);
  expect((error as Error).name).toBe("PayoutError");
  return error as PayoutError;
}

const callbacksOf = (token: string) => receiver.received.filter((callback) => callback.fields.token === token);

describe("providerB.payouts.send", () => {
  it("records the disbursement, hands its token over before submitting, and is sent: callback and check-status agree", async () => {
    const payout = request({ amount: 500 });
    const before = receiver.received.length;
    const report = await payouts.send(deps, payout);

    // get-invoice first posted an empty body to our callback URL.
    const probe = receiver.received[before]!;
    expect(probe).toMatchObject({ path: "/providerB/webhook/disburse", raw: "" });
    expect(payout.recordedCalls).toEqual([{ providerPayoutId: report.providerPayoutId, providerStatus: "created" }]);
    expect(report).toMatchObject({ providerStatus: "pending", state: "pending", notSentYet: false });
    const [disbursement] = await disbursementsUnder(sim, payout.payoutId);
    expect(disbursement).toMatchObject({ token: report.providerPayoutId, amount: 500, withdraw_mode: "wave-senegal", account_alias: "771234567", submits: 1 });

    const [callback] = await waitUntil(() => (callbacksOf(report.providerPayoutId).length ? callbacksOf(report.providerPayoutId) : undefined), {
      what: "the disbursement's callback",
    });
    expect(callback!.contentType).toStartWith("application/x-www-form-urlencoded");
    expect(callback!.fields).toMatchObject({ status: "success", disburse_id: payout.payoutId, amount: "500.00", withdraw_mode: "wave-senegal" });
    expect(callback!.fields.hash).toBe(createHash("sha512").update(masterKey).digest("hex"));

    const read = await payouts.read(deps, { ...payout, providerPayoutId: report.providerPayoutId });
    expect(read).toMatchObject({ providerPayoutId: report.providerPayoutId, providerStatus: "success", state: "sent", notSentYet: false, fee: null });
    expect(read!.sentAt).toBeInstanceOf(Date);
  });

  it("stops before submitting when recording the token fails: nothing is sent, and resuming with the created token submits once", async () => {
    const payout = request({
      amount: 400,
      recorded: async () => {
        throw new Error("database down");
      },
    });
    await expect(payouts.send(deps, payout)).rejects.toThrow("database down");
    const [created] = await disbursementsUnder(sim, payout.payoutId);
    expect(created).toMatchObject({ status: "created", submits: 0 });

    const resumed = await payouts.send(deps, { ...payout, providerPayoutId: created!.token });
    expect(resumed).toMatchObject({ providerPayoutId: created!.token, state: "pending", notSentYet: false });
    expect(await disbursementsUnder(sim, payout.payoutId)).toMatchObject([{ token: created!.token, submits: 1 }]);

    // Once more: provider B says it is under way, so it is only reported.
    const again = await payouts.send(deps, { ...payout, providerPayoutId: created!.token });
    expect(again.notSentYet).toBe(false);
    expect((await disbursementsUnder(sim, payout.payoutId))[0]!.submits).toBe(1);
  });

  for (const fault of [{ answer: "server_error" } as const, { answer: "timeout", delayMs: 4000 } as const]) {
    it(`reports a submit whose answer is lost (${fault.answer}) as mayHaveActed, and a second send does not submit again`, async () => {
      const payout = request({ amount: 300 });
      await loseNextSubmit(sim, fault);
      const error = await payoutErrorOf(payouts.send(deps, payout));
      expect(error.step).toBe("submit");
      expect(error.mayHaveActed).toBe(true);
      expect(error.failure.kind).toBe(fault.answer === "timeout" ? "timeout" : "server_error");
      const token = payout.recordedCalls[0]!.providerPayoutId;

      const second = await payouts.send(deps, { ...payout, providerPayoutId: token });
      expect(second.notSentYet).toBe(false);
      expect(await disbursementsUnder(sim, payout.payoutId)).toMatchObject([{ token, submits: 1 }]);
      await waitUntil(async () => (await payouts.read(deps, { ...payout, providerPayoutId: token }))?.state === "sent", { what: "the payout to be sent" });
    });
  }

  it("is refused 5000 when its disburse_id was submitted before, and sends nothing", async () => {
    const first = request({ amount: 250 });
    await payouts.send(deps, first);
    const again = request({ payoutId: first.payoutId, amount: 250 });
    const error = await payoutErrorOf(payouts.send(deps, again));
    expect(error).toMatchObject({ step: "submit", mayHaveActed: false });
    expect(error.failure).toBeInstanceOf(ProviderCallError);
    expect(error.failure).toMatchObject({ kind: "refused", details: { providerCode: "5000" } });
    const under = await disbursementsUnder(sim, first.payoutId);
    expect(under.map((disbursement) => disbursement.submits).sort()).toEqual([0, 1]);
  });

  it("is refused 4002 when the account's balance in the wallet's country is short, and nothing moves", async () => {
    await setBalances(sim, masterKey, { CI: 100 });
    const payout = request({ amount: 500, recipient: { phone: { number: "0701020304", country: "ci" }, operator: "orange" } });
    const error = await payoutErrorOf(payouts.send(deps, payout));
    expect(error).toMatchObject({ step: "submit", mayHaveActed: false, failure: { kind: "refused", details: { providerCode: "4002" } } });
    expect(await disbursementsUnder(sim, payout.payoutId)).toMatchObject([{ withdraw_mode: "orange-money-ci", status: "created", submits: 0 }]);
    await setBalances(sim, masterKey, { CI: 1_000_000 });
  });

  it("is refused at get-invoice (4002) when our callback URL does not answer 2xx: no token, nothing recorded", async () => {
    receiver.state.down = true;
    try {
      const payout = request();
      const error = await payoutErrorOf(payouts.send(deps, payout));
      expect(error).toMatchObject({ step: "get-invoice", mayHaveActed: false, failure: { kind: "refused", details: { providerCode: "4002" } } });
      expect(payout.recordedCalls).toEqual([]);
      expect(await disbursementsUnder(sim, payout.payoutId)).toEqual([]);
    } finally {
      receiver.state.down = false;
    }
  });

  it("refuses a wallet provider B does not send to, without calling it", async () => {
    const payout = request({ recipient: { phone: { number: "96000000", country: "ne" }, operator: "airtel" } });
    const error = await payoutErrorOf(payouts.send(deps, payout));
    expect(error).toMatchObject({ step: "get-invoice", mayHaveActed: false, failure: { kind: "refused" } });
    expect(await disbursementsUnder(sim, payout.payoutId)).toEqual([]);
  });

  it("sends a Togocel (T-Money) wallet as t-money-togo to its national number, and declares the 14 wallets of the table in XOF", async () => {
    const payout = request({ amount: 200, recipient: { phone: { number: "90112233", country: "tg" }, operator: "togocel" } });
    await payouts.send(deps, payout);
    expect(await disbursementsUnder(sim, payout.payoutId)).toMatchObject([{ withdraw_mode: "t-money-togo", account_alias: "90112233" }]);
    expect(payouts.methods).toContainEqual({ operator: "free", country: "sn", currency: "XOF" });
    expect(payouts.methods).toHaveLength(14);
    expect(payouts.limits).toEqual({ minAmount: 200, maxAmount: null, perRecipient: null });
  });
});

describe("sandbox amount rules", () => {
  it("waits for the console between 1000 and 5000: Send sends it", async () => {
    const payout = request({ amount: 3000 });
    const report = await payouts.send(deps, payout);
    const token = report.providerPayoutId;
    await Bun.sleep(250);
    expect(await payouts.read(deps, { ...payout, providerPayoutId: token })).toMatchObject({ state: "pending", notSentYet: false });
    expect(await disbursementsUnder(sim, payout.payoutId)).toMatchObject([{ awaiting_console: true }]);
    expect((await pressDisbursement(sim, token, "send")).status).toBe(200);
    expect(await payouts.read(deps, { ...payout, providerPayoutId: token })).toMatchObject({ state: "sent", providerStatus: "success" });
  });

  it("waits for the console between 1000 and 5000: Fail fails it", async () => {
    const payout = request({ amount: 5000 });
    const { providerPayoutId: token } = await payouts.send(deps, payout);
    expect((await pressDisbursement(sim, token, "fail")).status).toBe(200);
    expect(await payouts.read(deps, { ...payout, providerPayoutId: token })).toMatchObject({ state: "failed", providerStatus: "failed", sentAt: null });
    await waitUntil(() => callbacksOf(token).find((callback) => callback.fields.status === "failed"), { what: "the failure's callback" });
  });

  it("fails above 5000", async () => {
    const payout = request({ amount: 5001 });
    const { providerPayoutId: token } = await payouts.send(deps, payout);
    await waitUntil(async () => (await payouts.read(deps, { ...payout, providerPayoutId: token }))?.state === "failed", { what: "the payout to fail" });
  });
});

describe("providerB.payouts.read", () => {
  it("answers null for a payout without a token: get-invoice moves no money", async () => {
    expect(await payouts.read(deps, { ...request(), providerPayoutId: null })).toBeNull();
  });

  it("throws the refusal for a token provider B does not know", async () => {
    const error = await rejectionOf(payouts.read(deps, { ...request(), providerPayoutId: "unknown-token" }));
    expect(error).toBeInstanceOf(ProviderCallError);
    expect(error).toMatchObject({ kind: "refused" });
  });
});

describe("providerB.payouts.balances", () => {
  it("answers one balance per country, debited by what was sent from it", async () => {
    const before = await payouts.balances!(deps, tenantId, "sandbox", account);
    expect(before.map((balance) => balance.label).sort()).toEqual(["bf", "bj", "ci", "ml", "sn", "tg"]);
    expect(before.every((balance) => balance.currency === "XOF" && Number.isInteger(balance.amount))).toBe(true);
    const payout = request({ amount: 700, recipient: { phone: { number: "0161000000", country: "bj" }, operator: "mtn" } });
    await payouts.send(deps, payout);
    const after = await payouts.balances!(deps, tenantId, "sandbox", account);
    const bj = (balances: typeof before) => balances.find((balance) => balance.label === "bj")!.amount;
    expect(bj(after)).toBe(bj(before) - 700);
  });
});
