/**
 * Provider A's payouts behind the port (`providerA.payouts`), over real HTTP against its simulator: a send
 * goes through create → recorded → start → read, resumes what an earlier call left (found by our id, never
 * created or started twice), reports a start whose answer was lost as "may have acted", reads by id or by
 * reference, and gives the balances. A small proxy between the adapter and the simulator loses or breaks
 * one chosen answer, as a network would.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ulid } from "ulid";
import { providerA } from "../../../src/providers/providerA/mod.ts";
import { createProviderASimulator, type ProviderASimulator, SANDBOX_PAYOUT_FAILURE_CODE } from "../../../src/providers/providerA/simulator/mod.ts";
import { type PayoutReport, type PayoutRequest, PayoutError, type Payouts } from "../../../src/providers/provider.ts";
import type { Deps } from "../../../src/services/deps.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { rejectionOf } from "../../support/errors.ts";
import type { Json } from "../../support/json.ts";
import { waitUntil } from "../../support/wait.ts";

const TIMEOUT_MS = 1_500;

/** What the proxy does to the next request matching `match`: answer after the timeout (it acted), fail with a 5xx (it did not). */
type Fault = { match: RegExp; kind: "lose_answer" | "fail5xx" };

let simulator: ProviderASimulator;
let simServer: ReturnType<typeof Bun.serve>;
let proxy: ReturnType<typeof Bun.serve>;
let simBase: string;
const faults: Fault[] = [];
const upstreamCalls: string[] = [];
let account: { secretKey: string; webhookSecret: string };
let tg: TestGateway;
let deps: Deps;
let payouts: Payouts;
const tenantId = `ten_${ulid()}`;

function startProxy() {
  return Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const call = `${request.method} ${url.pathname}`;
      upstreamCalls.push(call);
      const index = faults.findIndex((fault) => fault.match.test(call));
      const fault = index >= 0 ? faults.splice(index, 1)[0] : undefined;
      if (fault?.kind === "fail5xx") return new Response("Bad gateway", { status: 502 });
      const headers = new Headers(request.headers);
      headers.delete("host");
      const forwarded = await fetch(`${simBase}${url.pathname}${url.search}`, {
        method: request.method,
        headers,
        body: request.method === "GET" ? undefined : await request.arrayBuffer(),
      });
      const body = await forwarded.arrayBuffer();
      if (fault?.kind === "lose_answer") await Bun.sleep(TIMEOUT_MS * 3);
      return new Response(body, { status: forwarded.status, headers: { "content-type": "application/json" } });
    },
  });
}

/** A payout request on the service account; `recordedIds` collects what `recorded` was handed. */
function payoutRequest(overrides: Partial<PayoutRequest> = {}, recordedIds: string[] = []): PayoutRequest {
  return {
    payoutId: `po_${ulid()}`,
    tenantId,
    environment: "sandbox",
    account: { accountId: "service", credentialVersion: null },
    providerPayoutId: null,
    amount: 500,
    currency: "XOF",
    description: "Supplier payment",
    recipient: { phone: { number: `+2299${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`, country: "bj" }, operator: "mtn", firstname: "Awa" },
    async recorded(started) {
      recordedIds.push(started.providerPayoutId);
    },
    ...overrides,
  };
}

async function simulatorPayouts(): Promise<Json[]> {
  const response = await fetch(`${simBase}/v1/payouts`, { headers: { authorization: `Bearer ${account.secretKey}` } });
  return ((await response.json()) as Json)["v1/payouts"];
}

async function readUntil(request: PayoutRequest, providerPayoutId: string, state: PayoutReport["state"]): Promise<PayoutReport> {
  return waitUntil(
    async () => {
      const report = await payouts.read(deps, { ...request, providerPayoutId });
      return report?.state === state ? report : undefined;
    },
    { what: `payout ${providerPayoutId} ${state}`, timeoutMs: 5_000 },
  );
}

const startsOf = () => upstreamCalls.filter((call) => call === "PUT /v1/payouts/start").length;

beforeAll(async () => {
  simulator = createProviderASimulator({ approveDelayMs: 200, webhookRetryDelaysMs: [] });
  simServer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: simulator.fetch });
  simBase = simServer.url.toString().replace(/\/$/, "");
  proxy = startProxy();
  account = (await (await fetch(`${simBase}/_sim/accounts`, { method: "POST" })).json()) as typeof account;
  tg = await startTestGateway({
    PROVIDER_A_SANDBOX_URL: proxy.url.toString().replace(/\/$/, ""),
    PROVIDER_A_SANDBOX_SECRET_KEY: account.secretKey,
    PROVIDER_A_SANDBOX_WEBHOOK_SECRET: account.webhookSecret,
    PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
  });
  deps = tg.gateway.deps;
  payouts = providerA.payouts!;
}, 30_000);

afterAll(async () => {
  simulator?.close();
  await tg?.close();
  await simServer?.stop(true);
  await proxy?.stop(true);
});

describe("provider A capabilities for money out", () => {
  it("declares payouts and refunds, its payout modes by operator and country, and its documented limits", () => {
    expect(providerA.capabilities.payout).toBe(true);
    expect(providerA.capabilities.refund).toBe(true);
    expect(payouts.methods.map((m) => `${m.country}:${m.operator}:${m.currency}`).sort()).toEqual(
      ["bj:celtiis:XOF", "bj:moov:XOF", "bj:mtn:XOF", "ci:mtn:XOF", "tg:togocel:XOF"].sort(),
    );
    expect(payouts.limits).toEqual({ minAmount: 1, maxAmount: 1_000_000, perRecipient: { count: 3, windowHours: 24 } });
  });
});

describe("providerA.payouts.send", () => {
  it("creates, records the provider's id before starting, starts, and the payout ends sent", async () => {
    const recorded: string[] = [];
    const request = payoutRequest({}, recorded);
    const report = await payouts.send(deps, request);
    expect(recorded).toEqual([report.providerPayoutId]);
    expect(report.state).toBe("pending");
    expect(report.notSentYet).toBe(false);
    expect(["started", "processing"]).toContain(report.providerStatus);
    const sent = await readUntil(request, report.providerPayoutId, "sent");
    expect(sent).toMatchObject({ providerStatus: "sent", errorCode: null, fee: 0 });
    expect(sent.sentAt).toBeInstanceOf(Date);
    const atProvider = (await simulatorPayouts()).filter((p) => p.merchant_reference === request.payoutId);
    expect(atProvider).toHaveLength(1);
    expect(atProvider[0]).toMatchObject({ mode: "mtn_open", amount: 500, status: "sent", customer: { firstname: "Awa" } });
  });

  it("sends to each operator's payout mode (Celtiis Benin → sbin, Togocel → togocel, MTN CI → mtn_ci)", async () => {
    const cases = [
      { operator: "celtiis", country: "bj", number: "+22990000011", mode: "sbin" },
      { operator: "togocel", country: "tg", number: "+22890000011", mode: "togocel" },
      { operator: "mtn", country: "ci", number: "+2250700000011", mode: "mtn_ci" },
    ];
    for (const { operator, country, number, mode } of cases) {
      const request = payoutRequest({ recipient: { phone: { number, country }, operator } });
      await payouts.send(deps, request);
      expect((await simulatorPayouts()).find((p) => p.merchant_reference === request.payoutId)?.mode).toBe(mode);
    }
  });

  it("resumes a payout created before a crash: found by our id, recorded, started once — one payout at the provider", async () => {
    const request = payoutRequest();
    // The first call dies once the provider holds the payout (the domain could not store its id).
    const crash = await rejectionOf(payouts.send(deps, { ...request, recorded: () => Promise.reject(new Error("process killed")) }));
    expect((crash as Error).message).toBe("process killed");
    const held = (await simulatorPayouts()).filter((p) => p.merchant_reference === request.payoutId);
    expect(held).toHaveLength(1);
    expect(held[0]!.status).toBe("pending");

    const recorded: string[] = [];
    const report = await payouts.send(deps, { ...request, recorded: async (s) => void recorded.push(s.providerPayoutId) });
    expect(recorded).toEqual([String(held[0]!.id)]);
    expect(report.providerPayoutId).toBe(String(held[0]!.id));
    expect((await simulatorPayouts()).filter((p) => p.merchant_reference === request.payoutId)).toHaveLength(1);
    await readUntil(request, report.providerPayoutId, "sent");
  });

  it("reports a start whose answer was lost as may-have-acted, and a second send does not start it again", async () => {
    const recorded: string[] = [];
    const request = payoutRequest({}, recorded);
    faults.push({ match: /^PUT \/v1\/payouts\/start$/, kind: "lose_answer" });
    const startsBefore = startsOf();
    const error = await rejectionOf(payouts.send(deps, request), 5_000);
    expect(error).toBeInstanceOf(PayoutError);
    expect(error).toMatchObject({ step: "start", mayHaveActed: true, failure: { kind: "timeout" } });
    expect(recorded).toHaveLength(1);

    const again = await payouts.send(deps, { ...request, providerPayoutId: recorded[0]! });
    expect(again.providerPayoutId).toBe(recorded[0]!);
    expect(again.notSentYet).toBe(false);
    expect(startsOf() - startsBefore).toBe(1);
    expect((await simulatorPayouts()).filter((p) => p.merchant_reference === request.payoutId)).toHaveLength(1);
    await readUntil(request, recorded[0]!, "sent");
  });

  it("reports a create that failed as not acted (nothing was started)", async () => {
    faults.push({ match: /^POST \/v1\/payouts$/, kind: "fail5xx" });
    const error = await rejectionOf(payouts.send(deps, payoutRequest()));
    expect(error).toMatchObject({ name: "PayoutError", step: "create", mayHaveActed: false, failure: { kind: "server_error", status: 502 } });
  });

  it("refuses an operator provider A does not pay out to, before any call", async () => {
    const before = upstreamCalls.length;
    const error = await rejectionOf(payouts.send(deps, payoutRequest({ recipient: { phone: { number: "+221770000001", country: "sn" }, operator: "wave" } })));
    expect(error).toMatchObject({ name: "PayoutError", step: "create", mayHaveActed: false, failure: { kind: "refused" } });
    expect(upstreamCalls.length).toBe(before);
  });

  it("fails a payout above 5000 in the sandbox, with the provider's error code", async () => {
    const request = payoutRequest({ amount: 6_000 });
    const report = await payouts.send(deps, request);
    const failed = await readUntil(request, report.providerPayoutId, "failed");
    expect(failed).toMatchObject({ providerStatus: "failed", errorCode: SANDBOX_PAYOUT_FAILURE_CODE, sentAt: null });
  });

  it("keeps a payout of 1000 to 5000 processing until the console sends or fails it", async () => {
    const toSend = payoutRequest({ amount: 2_500 });
    const toFail = payoutRequest({ amount: 5_000 });
    const first = await payouts.send(deps, toSend);
    const second = await payouts.send(deps, toFail);
    const processing = await readUntil(toSend, first.providerPayoutId, "pending");
    expect(processing.notSentYet).toBe(false);
    await waitUntil(async () => (await payouts.read(deps, { ...toSend, providerPayoutId: first.providerPayoutId }))?.providerStatus === "processing", {
      what: "processing",
    });
    await Bun.sleep(200);
    expect((await payouts.read(deps, { ...toSend, providerPayoutId: first.providerPayoutId }))?.state).toBe("pending");
    expect((await fetch(`${simBase}/_sim/payouts/${first.providerPayoutId}/send`, { method: "POST" })).status).toBe(200);
    const failedFromConsole = await fetch(`${simBase}/_sim/payouts/${second.providerPayoutId}/fail`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ last_error_code: "WALLET_BLOCKED" }),
    });
    expect(failedFromConsole.status).toBe(200);
    expect(await payouts.read(deps, { ...toSend, providerPayoutId: first.providerPayoutId })).toMatchObject({ state: "sent" });
    expect(await payouts.read(deps, { ...toFail, providerPayoutId: second.providerPayoutId })).toMatchObject({ state: "failed", errorCode: "WALLET_BLOCKED" });
  });
});

describe("providerA.payouts: the provider's limits", () => {
  it("is refused above 1,000,000 XOF at create (the provider's 422, nothing acted)", async () => {
    const error = await rejectionOf(payouts.send(deps, payoutRequest({ amount: 1_000_001 })));
    expect(error).toMatchObject({ name: "PayoutError", step: "create", mayHaveActed: false, failure: { kind: "refused", status: 422 } });
    expect((error as PayoutError).failure.providerErrors).toEqual(["amount must be less than or equal to 1000000"]);
  });

  it("is refused at the fourth start to one number within 24 h (the payout stays pending, nothing acted)", async () => {
    const phone = { number: "+22996000042", country: "bj" };
    for (let i = 0; i < 3; i++) await payouts.send(deps, payoutRequest({ recipient: { phone, operator: "moov" } }));
    const recorded: string[] = [];
    const fourth = payoutRequest({ recipient: { phone, operator: "moov" } }, recorded);
    const error = await rejectionOf(payouts.send(deps, fourth));
    expect(error).toMatchObject({ name: "PayoutError", step: "start", mayHaveActed: false, failure: { kind: "refused", status: 422 } });
    expect((error as PayoutError).failure.providerErrors).toEqual(["phone_number has reached the limit of 3 payouts in 24 hours"]);
    expect(await payouts.read(deps, { ...fourth, providerPayoutId: recorded[0]! })).toMatchObject({ state: "pending", notSentYet: true });
  });
});

describe("providerA.payouts.read", () => {
  it("is null for a payout the provider never received (looked up by our id)", async () => {
    expect(await payouts.read(deps, payoutRequest())).toBeNull();
  });

  it("finds a payout by our id before its provider id is known, and by the provider id after", async () => {
    const request = payoutRequest();
    const report = await payouts.send(deps, request);
    const byReference = await payouts.read(deps, request);
    expect(byReference?.providerPayoutId).toBe(report.providerPayoutId);
    expect((await payouts.read(deps, { ...request, providerPayoutId: report.providerPayoutId }))?.providerPayoutId).toBe(report.providerPayoutId);
  });

  it("throws the provider call error when the provider cannot be read", async () => {
    faults.push({ match: /^GET \/v1\/payouts\/merchant\//, kind: "fail5xx" });
    expect(await rejectionOf(payouts.read(deps, payoutRequest()))).toMatchObject({ name: "ProviderCallError", kind: "server_error" });
  });
});

describe("providerA.payouts.balances", () => {
  it("gives one balance per mode: credited by approved payments and by hand, debited by sent payouts", async () => {
    const balancesNow = async () => payouts.balances!(deps, tenantId, "sandbox", { accountId: "service", credentialVersion: null });
    const of = (list: Awaited<ReturnType<typeof balancesNow>>, label: string) => list.find((b) => b.label === label)?.amount ?? 0;
    const before = await balancesNow();

    // A payment approved on mtn_ci (below 1000: approved by the sandbox).
    const auth = { authorization: `Bearer ${account.secretKey}`, "content-type": "application/json" };
    const trx = (await (
      await fetch(`${simBase}/v1/transactions`, {
        method: "POST",
        headers: auth,
        body: JSON.stringify({
          description: "in",
          amount: 700,
          currency: { iso: "XOF" },
          customer: { phone_number: { number: "+2250700000099", country: "ci" } },
        }),
      })
    ).json()) as Json;
    const { token } = (await (await fetch(`${simBase}/v1/transactions/${trx["v1/transaction"].id}/token`, { method: "POST", headers: auth })).json()) as Json;
    expect((await fetch(`${simBase}/v1/mtn_ci`, { method: "POST", headers: auth, body: JSON.stringify({ token }) })).status).toBe(200);
    await fetch(`${simBase}/_sim/accounts/${account.secretKey}/balances`, { method: "POST", body: JSON.stringify({ mode: "togocel", amount: 10_000 }) });
    const request = payoutRequest({ amount: 300, recipient: { phone: { number: "+22890000077", country: "tg" }, operator: "togocel" } });
    const report = await payouts.send(deps, request);
    await readUntil(request, report.providerPayoutId, "sent");

    const after = await waitUntil(
      async () => {
        const list = await balancesNow();
        return of(list, "mtn_ci") === of(before, "mtn_ci") + 700 ? list : undefined;
      },
      { what: "the approved payment credited" },
    );
    expect(of(after, "togocel")).toBe(of(before, "togocel") + 10_000 - 300);
    expect(after.every((b) => b.currency === "XOF")).toBe(true);
  });
});

describe("providerA.payerOf", () => {
  it("gives the phone a direct payment was pushed to, with its method's operator and country, and the customer's names", async () => {
    const tenant = await tg.insertTenant();
    const response = await tg.request("/providerA/direct-payment", {
      method: "POST",
      headers: { authorization: `Bearer ${await tg.tenantToken(tenant)}`, "content-type": "application/json" },
      body: JSON.stringify({
        description: "Order 7",
        amount: 500,
        payment_method: "mnoC",
        phone_number: { number: "+22990001122", country: "bj" },
        firstname: "Kossi",
        lastname: "Agbo",
      }),
    });
    expect(response.status).toBe(200);
    const { transactionId } = (await response.json()) as { transactionId: number };
    const payment = await deps.db.selectFrom("payments").selectAll().where("provider_transaction_id", "=", String(transactionId)).executeTakeFirstOrThrow();
    expect(providerA.payerOf!(payment)).toEqual({
      phone: { number: "+22990001122", country: "bj" },
      operator: "celtiis",
      firstname: "Kossi",
      lastname: "Agbo",
    });
    // Each method names its operator the way the payout methods do: a refund finds its way back.
    const payer = providerA.payerOf!({ ...payment, payment_method: "mnoA_ci", customer: { phone: "+2250700000001", country: "ci" } });
    expect(payer).toEqual({ phone: { number: "+2250700000001", country: "ci" }, operator: "mtn" });
    expect(payouts.methods).toContainEqual({ operator: payer!.operator, country: payer!.phone.country, currency: "XOF" });
  });

  it("is null for a payment without a phone or with a method it does not know", async () => {
    const payment = await deps.db.selectFrom("payments").selectAll().limit(1).executeTakeFirstOrThrow();
    expect(providerA.payerOf!({ ...payment, customer: null })).toBeNull();
    expect(providerA.payerOf!({ ...payment, customer: { email: "a@example.com" } })).toBeNull();
    expect(providerA.payerOf!({ ...payment, payment_method: "card" })).toBeNull();
    expect(providerA.payerOf!({ ...payment, payment_method: null })).toBeNull();
  });
});
