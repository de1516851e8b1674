/**
 * Provider A's `payout.sent` / `payout.failed` webhooks at the gateway (`POST /providerA/webhook/{environment}`):
 * signed like the transactions' ones, checked with the account's webhook secret, then handed to the domain,
 * which reads the payout again from provider A — the body is never applied. A gateway on a real port, the
 * simulator sending its webhooks to it over HTTP; the payout row is written as the domain writes it, before
 * the provider is called.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ulid } from "ulid";
import { providerA, signProviderAWebhook } from "../../../src/providers/providerA/mod.ts";
import { createProviderASimulator, type ProviderASimulator } from "../../../src/providers/providerA/simulator/mod.ts";
import type { PayoutRow } from "../../../src/db/schema.ts";
import type { ProviderAccountRef } from "../../../src/providers/provider.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import type { Json } from "../../support/json.ts";
import { waitUntil } from "../../support/wait.ts";

let simulator: ProviderASimulator;
let simServer: ReturnType<typeof Bun.serve>;
let simBase: string;
let account: { secretKey: string; webhookSecret: string };
let tg: TestGateway;
let base: string;
let tenantId: string;

/** A payout row as the domain writes it before calling the provider; then sent through the adapter, its id stored by `recorded`. */
async function sendPayout(
  amount: number,
  on: { tenantId: string; account: ProviderAccountRef } = { tenantId, account: { accountId: "service", credentialVersion: null } },
): Promise<{ id: string; providerPayoutId: string }> {
  const id = `po_${ulid()}`;
  const db = tg.gateway.deps.db;
  await db
    .insertInto("payouts")
    .values({
      id,
      tenant_id: on.tenantId,
      environment: "sandbox",
      purpose: "payout",
      payment_id: null,
      provider: "providerA",
      provider_account: on.account.accountId,
      credential_version: on.account.credentialVersion,
      operator: "mtn",
      country: "bj",
      phone_number: `9${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`,
      recipient: { firstname: "Awa" },
      amount,
      currency: "XOF",
      description: "Supplier",
      reason: null,
      metadata: null,
    })
    .execute();
  const row = await db.selectFrom("payouts").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
  const request = {
    payoutId: id,
    tenantId: on.tenantId,
    environment: "sandbox" as const,
    account: on.account,
    providerPayoutId: null,
    amount,
    currency: "XOF" as const,
    description: row.description,
    recipient: { phone: { number: row.phone_number, country: "bj" }, operator: "mtn" },
    recorded: async (started: { providerPayoutId: string; providerStatus: string }) => {
      await db
        .updateTable("payouts")
        .set({ provider_payout_id: started.providerPayoutId, provider_status: started.providerStatus })
        .where("id", "=", id)
        .execute();
    },
  };
  const report = await providerA.payouts!.send(tg.gateway.deps, request);
  return { id, providerPayoutId: report.providerPayoutId };
}

const rowOf = (id: string): Promise<PayoutRow> => tg.gateway.deps.db.selectFrom("payouts").selectAll().where("id", "=", id).executeTakeFirstOrThrow();

async function postWebhook(body: Json, signature: string): Promise<Response> {
  return fetch(`${base}/providerA/webhook/sandbox`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-fedapay-signature": signature },
    body: JSON.stringify(body),
  });
}

function signed(body: Json, secret = account.webhookSecret): string {
  return signProviderAWebhook(secret, Math.floor(Date.now() / 1000), JSON.stringify(body));
}

beforeAll(async () => {
  simulator = createProviderASimulator({ approveDelayMs: 60, webhookRetryDelaysMs: [100, 200] });
  simServer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: simulator.fetch });
  simBase = simServer.url.toString().replace(/\/$/, "");
  account = (await (await fetch(`${simBase}/_sim/accounts`, { method: "POST" })).json()) as typeof account;
  tg = await startTestGateway({
    PROVIDER_A_SANDBOX_URL: simBase,
    PROVIDER_A_SANDBOX_SECRET_KEY: account.secretKey,
    PROVIDER_A_SANDBOX_WEBHOOK_SECRET: account.webhookSecret,
    PROVIDER_TIMEOUT_MS: "2000",
  });
  base = (await tg.gateway.start()).url!;
  // Payouts written by SQL and sent through the port, with no collection behind them: not audited.
  tg.database.audited = false;
  tenantId = await tg.insertTenant();
  await fetch(`${simBase}/_sim/accounts/${account.secretKey}/webhook`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url: `${base}/providerA/webhook/sandbox` }),
  });
}, 60_000);

afterAll(async () => {
  simulator?.close();
  await tg?.close();
  await simServer?.stop(true);
});

describe("POST /providerA/webhook/{environment} — payout events", () => {
  it("takes the simulator's signed payout.sent and the domain reads the payout sent from provider A", async () => {
    const { id, providerPayoutId } = await sendPayout(500);
    const row = await waitUntil(async () => ((await rowOf(id)).state === "sent" ? rowOf(id) : undefined), { what: "the payout sent", timeoutMs: 8_000 });
    expect(row).toMatchObject({ provider_payout_id: providerPayoutId, provider_status: "sent" });
    // The webhook's answer may still be on its way when the payout reads sent (the sync step can read it first).
    const delivery = await waitUntil(
      async () => {
        const log = (await (await fetch(`${simBase}/_sim/accounts/${account.secretKey}/webhook`)).json()) as Json;
        return (log.deliveries as Json[]).find((d) => d.event === "payout.sent" && d.payoutId === Number(providerPayoutId) && d.status !== "pending");
      },
      { what: "the payout.sent webhook answered", timeoutMs: 8_000 },
    );
    expect(delivery).toMatchObject({ status: "delivered", lastResponseStatus: 200 });
  });

  it("takes payout.failed the same way, with the provider's error code", async () => {
    const { id } = await sendPayout(7_000);
    const row = await waitUntil(async () => ((await rowOf(id)).state === "failed" ? rowOf(id) : undefined), { what: "the payout failed", timeoutMs: 8_000 });
    expect(row.failure_code).toBe("PAYOUT_DELIVERY_FAILED");
  });

  it("refuses a payout webhook with a bad signature (401) and moves nothing", async () => {
    const { id, providerPayoutId } = await sendPayout(2_000);
    const body = { name: "payout.sent", entity: { id: Number(providerPayoutId), merchant_reference: id, status: "sent" } };
    for (const signature of [signed(body, "wh_sandbox_not-the-secret"), "t=1,s=00", ""]) {
      const response = await postWebhook(body, signature);
      expect(response.status).toBe(401);
      expect(((await response.json()) as Json).message).toBe("Invalid provider A webhook signature");
    }
    expect((await rowOf(id)).state).toBe("pending");
  });

  it("never applies the body: a signed payout.sent for a payout still processing at provider A leaves it pending", async () => {
    const { id, providerPayoutId } = await sendPayout(3_000);
    const body = { name: "payout.sent", entity: { id: Number(providerPayoutId), merchant_reference: id, status: "sent", sent_at: new Date().toISOString() } };
    const response = await postWebhook(body, signed(body));
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ received: true });
    const row = await rowOf(id);
    expect(row.state).toBe("pending");
    expect(["started", "processing"]).toContain(row.provider_status!);
  });

  it("answers 200 to a signed webhook about a payout it does not know", async () => {
    const body = { name: "payout.failed", entity: { id: 424242, merchant_reference: `po_${ulid()}`, status: "failed" } };
    const response = await postWebhook(body, signed(body));
    expect(response.status).toBe(200);
    const foreign = { name: "payout.sent", entity: { id: 424243, merchant_reference: "someone-else's-reference", status: "sent" } };
    expect((await postWebhook(foreign, signed(foreign))).status).toBe(200);
  });
});

describe("payouts on a tenant's own provider A account", () => {
  let own: { secretKey: string; webhookSecret: string };
  let ownerId: string;
  let ownAccount: ProviderAccountRef;

  beforeAll(async () => {
    own = (await (await fetch(`${simBase}/_sim/accounts`, { method: "POST" })).json()) as typeof own;
    ownerId = await tg.insertTenant();
    const stored = await fetch(`${base}/tenants/${ownerId}/credentials/providerA`, {
      method: "PUT",
      headers: { authorization: `Bearer ${await tg.tenantToken(ownerId)}`, "content-type": "application/json" },
      body: JSON.stringify({ environment: "sandbox", secretKey: own.secretKey, webhookSecret: own.webhookSecret }),
    });
    expect(stored.status).toBe(200);
    await fetch(`${simBase}/_sim/accounts/${own.secretKey}/webhook`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: `${base}/providerA/webhook/sandbox/${ownerId}` }),
    });
    ownAccount = await providerA.accountFor(tg.gateway.deps, ownerId, "sandbox");
    expect(ownAccount.accountId).not.toBe("service");
  });

  it("sends on the tenant's account, and its signed payout.sent on the tenant's route moves the payout", async () => {
    const { id } = await sendPayout(400, { tenantId: ownerId, account: ownAccount });
    const atOwn = (await (await fetch(`${simBase}/v1/payouts/merchant/${id}`, { headers: { authorization: `Bearer ${own.secretKey}` } })).json()) as Json;
    expect(atOwn["v1/payout"].merchant_reference).toBe(id);
    await waitUntil(async () => (await rowOf(id)).state === "sent", { what: "the tenant's payout sent", timeoutMs: 8_000 });
  });

  it("refuses on the tenant's route a payout webhook signed with the service account's secret", async () => {
    const { id, providerPayoutId } = await sendPayout(2_000, { tenantId: ownerId, account: ownAccount });
    const body = { name: "payout.sent", entity: { id: Number(providerPayoutId), merchant_reference: id, status: "sent" } };
    const response = await fetch(`${base}/providerA/webhook/sandbox/${ownerId}`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-fedapay-signature": signed(body, account.webhookSecret) },
      body: JSON.stringify(body),
    });
    expect(response.status).toBe(401);
  });

  it("gives the balances of the tenant's own account", async () => {
    await fetch(`${simBase}/_sim/accounts/${own.secretKey}/balances`, { method: "POST", body: JSON.stringify({ mode: "sbin", amount: 12_345 }) });
    const balances = await providerA.payouts!.balances!(tg.gateway.deps, ownerId, "sandbox", ownAccount);
    expect(balances).toContainEqual({ currency: "XOF", amount: 12_345, label: "sbin" });
  });
});
