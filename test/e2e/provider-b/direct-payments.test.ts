/**
 * Provider B's direct payments (SoftPay, issue 16 point 1) through the domain over real HTTP: a payment made
 * by `collectByPush` on a tenant's provider B account against the standalone simulator, completed by the
 * invoice's IPN (`POST /providerB/webhook`, the `ipn` job) or — when the IPN is lost — by the direct
 * payment sync chain (`readPayment`), failed above 5000, a Wave payment paid on the simulator's page, and
 * the simulator's fault switch seen as the domain's answers. Only 127.0.0.1 is contacted.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ProviderError } from "../../../src/errors.ts";
import type { PaymentMethodCapability } from "../../../src/providers/provider.ts";
import { collectByPush, type PushCollection } from "../../../src/services/direct-payments/collect-by-push.ts";
import { freePort } from "../../support/ports.ts";
import { createTestDatabase, startRigGateway, type RigGateway, type SimulatorServer } from "../../support/provider-b-rig.ts";
import type { TestDatabase } from "../../support/db.ts";
import { waitUntil } from "../../support/wait.ts";
import { startPayoutSimulator } from "../../providers/providerB/payouts-rig.ts";

let sim: SimulatorServer;
let database: TestDatabase;
let gw: RigGateway;
/** A gateway whose IPNs go to a dead port: only the sync chain can settle its payments. */
let deaf: RigGateway;
let deafDatabase: TestDatabase;

beforeAll(async () => {
  sim = startPayoutSimulator(100);
  database = await createTestDatabase();
  deafDatabase = await createTestDatabase();
  gw = await startRigGateway({ sim, database, workerOptions: { sweepEveryMs: 60_000 }, env: { PROVIDER_TIMEOUT_MS: "2500" } });
  deaf = await startRigGateway({ sim, database: deafDatabase, publicBaseUrl: `http://127.0.0.1:${await freePort()}`, workerOptions: { sweepEveryMs: 60_000 } });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await deaf?.close();
  await sim?.stop();
  await database?.dispose();
  await deafDatabase?.dispose();
});

function methodOf(rig: RigGateway, operator: string, country: string): PaymentMethodCapability {
  const method = rig.gateway.deps.providers.get("providerB").capabilities.methods.find((m) => m.operator === operator && m.country === country);
  if (!method) throw new Error(`provider B does not list ${operator} ${country}`);
  return method;
}

function collection(rig: RigGateway, tenantId: string, over: Partial<PushCollection> & { operator: string; country: string; number: string }): PushCollection {
  const { operator, country, number, ...rest } = over;
  return {
    tenantId,
    environment: "sandbox",
    provider: rig.gateway.deps.providers.get("providerB"),
    method: methodOf(rig, operator, country),
    amount: 500,
    description: "Commande 42",
    phone: { number, country },
    customer: { firstname: "Awa", lastname: "Diop", email: "awa@example.com" },
    callbackUrl: undefined,
    ...rest,
  };
}

const rowOf = (rig: RigGateway, id: string) => rig.gateway.deps.db.selectFrom("payments").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
const eventsOf = (rig: RigGateway, id: string) => rig.gateway.deps.db.selectFrom("events").select("type").where("payment_id", "=", id).execute();

async function settled(rig: RigGateway, id: string, timeoutMs = 8_000) {
  return waitUntil(
    async () => {
      const row = await rowOf(rig, id);
      return row.state === "pending" ? undefined : row;
    },
    { what: `payment ${id} to settle`, timeoutMs },
  );
}

describe("provider B direct payments through collectByPush", () => {
  it("completes an MTN Benin push below 1000 by the invoice's IPN, with one payment.completed, and knows who paid", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const started = await collectByPush(gw.gateway.deps, collection(gw, tenantId, { operator: "mtn", country: "bj", number: "+2290197000000" }));
    const pending = await rowOf(gw, started.paymentId);
    expect(pending).toMatchObject({
      provider: "providerB",
      kind: "direct_payment",
      provider_transaction_id: started.providerPaymentId,
      payment_method: "mtn-benin",
    });
    const row = await settled(gw, started.paymentId);
    expect(row.state).toBe("succeeded");
    expect(row.provider_status).toBe("completed");
    // The payment may be settled by the sync chain's first read while its IPN is still being processed.
    const ipn = await waitUntil(
      async () => {
        const rows = await gw.gateway.deps.db
          .selectFrom("ipn_messages")
          .select(["state", "payment_id"])
          .where("token", "=", started.providerPaymentId)
          .execute();
        return rows.every((r) => r.state !== "received") && rows.length > 0 ? rows : undefined;
      },
      { what: "the IPN processed", timeoutMs: 10_000 },
    );
    expect(ipn).toEqual([{ state: "processed", payment_id: started.paymentId }]);
    expect((await eventsOf(gw, started.paymentId)).map((e) => e.type)).toEqual(["payment.completed"]);
    expect(gw.gateway.deps.providers.get("providerB").payerOf!(row)).toEqual({
      phone: { number: "0197000000", country: "bj" },
      operator: "mtn",
      firstname: "Awa",
      lastname: "Diop",
      email: "awa@example.com",
    });
    const shown = (await (await gw.call("GET", `/payments/${started.paymentId}`, tenantId)).json()) as { status?: string; state?: string };
    expect(JSON.stringify(shown)).toContain("succeeded");
  });

  it("fails a payment above 5000 by the IPN, with payment.failed", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const started = await collectByPush(gw.gateway.deps, collection(gw, tenantId, { operator: "moov", country: "ci", number: "+2250101020304", amount: 7000 }));
    const row = await settled(gw, started.paymentId);
    expect(row.state).toBe("failed");
    expect(row.failure_code).toBe("insufficient_funds");
    expect((await eventsOf(gw, started.paymentId)).map((e) => e.type)).toEqual(["payment.failed"]);
  });

  it("answers a Wave Senegal payment's URL; paid on the simulator's page, it completes by the IPN", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const provider = gw.gateway.deps.providers.get("providerB");
    // The URL the customer opens is the provider's answer: read it as the port gives it.
    let redirectUrl: string | undefined;
    const wrapped = {
      ...provider,
      startCollection: async (deps: never, request: never) => {
        const started = await provider.startCollection(deps, request);
        redirectUrl = started.redirectUrl;
        return started;
      },
    };
    const started = await collectByPush(gw.gateway.deps, {
      ...collection(gw, tenantId, { operator: "wave", country: "sn", number: "+221771234567", amount: 2000 }),
      provider: wrapped,
    });
    expect(redirectUrl).toStartWith(`${sim.url}/softpay/pay/${started.providerPaymentId}`);
    const page = await (await fetch(redirectUrl!)).text();
    expect(page).toContain("2 000 FCFA");
    expect((await rowOf(gw, started.paymentId)).state).toBe("pending");
    const action = /formaction="([^"]+\/pay)"/.exec(page)![1]!;
    const pressed = await fetch(new URL(action, redirectUrl), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "payment_method=wave-senegal",
    });
    expect(pressed.status).toBe(200);
    expect((await settled(gw, started.paymentId)).state).toBe("succeeded");
  });

  it("keeps a payment of 1000 to 5000 pending until the console approves it", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const started = await collectByPush(
      gw.gateway.deps,
      collection(gw, tenantId, { operator: "togocel", country: "tg", number: "+22890112233", amount: 2500 }),
    );
    const console_ = await (await fetch(`${sim.url}/console`)).text();
    expect(console_).toContain(started.providerPaymentId);
    expect((await rowOf(gw, started.paymentId)).state).toBe("pending");
    const approved = await fetch(`${sim.url}/_sim/softpay/${started.providerPaymentId}/approve`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "",
      redirect: "manual",
    });
    expect(approved.status).toBe(303);
    expect(approved.headers.get("location")).toStartWith("../../../console?paid=completed");
    expect((await settled(gw, started.paymentId)).state).toBe("succeeded");
  });

  it("settles a payment whose IPN never arrives by the sync chain (readPayment)", async () => {
    const { tenantId } = await deaf.tenantWithAccount(sim);
    const started = await collectByPush(deaf.gateway.deps, collection(deaf, tenantId, { operator: "free", country: "sn", number: "+221761234567" }));
    const row = await settled(deaf, started.paymentId, 12_000);
    expect(row.state).toBe("succeeded");
    expect(await deaf.gateway.deps.db.selectFrom("ipn_messages").select("id").where("token", "=", started.providerPaymentId).execute()).toEqual([]);
    expect((await eventsOf(deaf, started.paymentId)).map((e) => e.type)).toEqual(["payment.completed"]);
  }, 20_000);

  it("answers the fault switch: a refusal 422 and a dropped connection 502 fail the payment; a timeout after the push leaves it to complete once", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const next = (body: unknown) => fetch(`${sim.url}/_sim/softpay/next`, { method: "POST", body: JSON.stringify(body) });
    const attempt = (number: string) => collectByPush(gw.gateway.deps, collection(gw, tenantId, { operator: "mtn", country: "ci", number })).catch((e) => e);

    await next({ answer: "refuse" });
    const refused = await attempt("+2250501020301");
    expect(refused).toBeInstanceOf(ProviderError);
    expect(refused.status).toBe(422);
    await next({ answer: "unreachable" });
    const dropped = await attempt("+2250501020302");
    expect(dropped).toBeInstanceOf(ProviderError);
    expect(dropped.status).toBe(502);
    const failed = await gw.gateway.deps.db
      .selectFrom("payments")
      .select(["state", "failure_code"])
      .where("tenant_id", "=", tenantId)
      .orderBy("created_at")
      .execute();
    expect(failed).toEqual([
      { state: "failed", failure_code: "provider_refused" },
      { state: "failed", failure_code: "provider_unreachable" },
    ]);

    await next({ answer: "timeout_after", delayMs: 4_000 });
    const late = await attempt("+2250501020303");
    expect(late).toBeInstanceOf(ProviderError);
    expect(late.status).toBe(504);
    // The answer names the payment: it may have reached the phone, so it is followed, never failed.
    const id = (late as ProviderError).extras.paymentId!;
    expect((await rowOf(gw, id)).state).not.toBe("failed");
    const row = await settled(gw, id);
    expect(row.state).toBe("succeeded");
    expect((await eventsOf(gw, id)).map((e) => e.type)).toEqual(["payment.completed"]);
  }, 20_000);
});

describe("POST /payments to provider B (the README's sandbox walkthroughs)", () => {
  it("sends a Wave Senegal payment to provider B and answers the URL the customer opens; paid there, it completes", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const created = await gw.call(
      "POST",
      "/payments",
      tenantId,
      { amount: 2000, description: "Commande 42", operator: "wave", customer: { phone: { number: "+221771234567", country: "sn" }, firstname: "Awa" } },
      { "idempotency-key": "wave-1" },
    );
    const body = (await created.json()) as { id: string; provider: string; state: string; nextAction: { type: string; url?: string } };
    expect(created.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ provider: "providerB", state: "pending", nextAction: { type: "open_url" } });
    const url = body.nextAction.url!;
    expect(url).toStartWith(`${sim.url}/softpay/pay/`);
    const page = await (await fetch(url)).text();
    const action = /formaction="([^"]+\/pay)"/.exec(page)![1]!;
    await fetch(new URL(action, url), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "payment_method=wave-senegal",
    });
    expect((await settled(gw, body.id)).state).toBe("succeeded");
  });

  it("takes an Orange Money Côte d'Ivoire payment with the sandbox code 123456, and refuses another code with the provider's message", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const pay = (otp: string, key: string) =>
      gw.call(
        "POST",
        "/payments",
        tenantId,
        { amount: 500, description: "Commande 43", operator: "orange", otp, customer: { phone: { number: "+2250701020304", country: "ci" } } },
        { "idempotency-key": key },
      );
    const good = await pay("123456", "om-ci-1");
    const body = (await good.json()) as { id: string; provider: string; state: string };
    expect(good.status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({ provider: "providerB", state: "pending" });
    expect((await settled(gw, body.id)).state).toBe("succeeded");
    const bad = await pay("654321", "om-ci-2");
    const refused = (await bad.json()) as { message: unknown };
    expect(bad.status, JSON.stringify(refused)).toBe(422);
    expect(JSON.stringify(refused.message)).toContain("Invalid or expired OTP code!");
  });
});
