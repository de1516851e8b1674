/**
 * Provider B over real HTTP (issue 6): `POST /providerB/checkout`, the IPN at `POST /providerB/webhook`,
 * the `ipn` and `providerB-sync` jobs and the sweeper, against the standalone provider B simulator. Only
 * 127.0.0.1 is contacted.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHash } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { encodePhpForm } from "../../../src/providers/providerB/simulator/php-form.ts";
import { rematchOrphans } from "../../../src/services/ipn/orphans.ts";
import {
  addWebhookEndpoint,
  createTestDatabase,
  startRigGateway,
  startSimulator,
  type RigGateway,
  type SimulatorServer,
} from "../../support/provider-b-rig.ts";
import type { TestDatabase } from "../../support/db.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";
import type { Json } from "../../support/json.ts";

const checkoutBody = (over: Json = {}) => ({
  amount: 5000,
  description: "Commande 42",
  returnUrl: "https://shop.example/merci",
  cancelUrl: "https://shop.example/panier",
  customer: { name: "Awa Diop", email: "awa@example.com", phone: "+221770000000" },
  customData: { orderRef: "ORD-42", quantity: 3, gift: true },
  merchantReference: "ORD-42",
  ...over,
});

let sim: SimulatorServer;
let database: TestDatabase;
let gw: RigGateway;
let receiver: WebhookReceiver;

async function checkout(tenantId: string, over: Json = {}, headers: Record<string, string> = {}): Promise<Json> {
  const response = await gw.call("POST", "/providerB/checkout", tenantId, checkoutBody(over), headers);
  const body = (await response.json()) as Json;
  expect(response.status, JSON.stringify(body)).toBe(200);
  return body;
}

async function paymentOf(tenantId: string, paymentId: string): Promise<Json> {
  return (await (await gw.call("GET", `/payments/${paymentId}`, tenantId)).json()) as Json;
}

async function eventsOf(paymentId: string) {
  return gw.gateway.deps.db.selectFrom("events").selectAll().where("payment_id", "=", paymentId).execute();
}

/** What provider B confirms for the invoice now (its confirm answer, read with the account's keys). */
async function confirmOf(keys: Json, token: string): Promise<Json> {
  const confirm = await fetch(`${sim.url}/sandbox-api/v1/checkout-invoice/confirm/${token}`, {
    headers: { "PAYDUNYA-MASTER-KEY": keys.masterKey, "PAYDUNYA-PRIVATE-KEY": keys.privateKey, "PAYDUNYA-TOKEN": keys.token },
  });
  return (await confirm.json()) as Json;
}

/** The IPN provider B would send for the invoice now (the confirm answer, form-encoded). */
async function ipnBodyOf(keys: Json, token: string): Promise<string> {
  return encodePhpForm({ data: await confirmOf(keys, token) });
}

const postIpn = (body: string, type = "application/x-www-form-urlencoded") =>
  fetch(`${gw.url}/providerB/webhook`, { method: "POST", headers: { "content-type": type }, body });

beforeAll(async () => {
  sim = await startSimulator();
  database = await createTestDatabase();
  receiver = await startReceiver();
  gw = await startRigGateway({ sim, database, workerOptions: { sweepEveryMs: 60_000 } });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await sim?.stop();
  await receiver?.stop();
  await database?.dispose();
});

describe("POST /providerB/checkout", () => {
  it("creates a sandbox invoice with the tenant's credentials and records a pending checkout", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const answer = await checkout(tenantId);
    expect(answer.response_code).toBe("00");
    expect(answer.response_text).toBe(`${sim.url}/sandbox-checkout/invoice/${answer.token}`);
    expect(answer.paymentId).toMatch(/^pay_[0-9A-Z]{26}$/);
    const payment = await paymentOf(tenantId, answer.paymentId);
    expect(payment).toMatchObject({
      provider: "providerB",
      kind: "checkout",
      state: "pending",
      providerTransactionId: answer.token,
      amount: 5000,
      currency: "XOF",
    });
    expect(payment.customData).toEqual({ orderRef: "ORD-42", quantity: 3, gift: true });
    expect(payment.merchantReference).toBe("ORD-42");
    const row = await gw.gateway.deps.db.selectFrom("payments").selectAll().where("id", "=", answer.paymentId).executeTakeFirstOrThrow();
    expect(row.credential_version).toBe(1);
    expect(row.provider_account).toMatch(/^pcr_/);
    // The invoice at provider B carries our callback and our payment id.
  });

  it("requires x-tenant-id (400) and a bearer token (401)", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const token = await gw.tenantToken(tenantId);
    const noTenant = await fetch(`${gw.url}/providerB/checkout`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify(checkoutBody()),
    });
    expect(noTenant.status).toBe(400);
    const noToken = await fetch(`${gw.url}/providerB/checkout`, {
      method: "POST",
      headers: { "x-tenant-id": tenantId, "content-type": "application/json" },
      body: JSON.stringify(checkoutBody()),
    });
    expect(noToken.status).toBe(401);
  });

  it("answers 424 naming the environment when the tenant has no credentials there", async () => {
    const created = await fetch(`${gw.url}/tenants`, {
      method: "POST",
      headers: { authorization: `Bearer ${await gw.adminToken()}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Nue" }),
    });
    const { tenant } = (await created.json()) as Json;
    const response = await gw.call("POST", "/providerB/checkout", tenant.id, checkoutBody());
    expect(response.status).toBe(424);
    const body = (await response.json()) as Json;
    expect(body.code).toBe("not_configured");
    expect(body.message).toContain("sandbox");
  });

  it("turns a provider refusal into 422 with providerResponseCode", async () => {
    const { tenantId, keys } = await gw.tenantWithAccount(sim);
    await gw.call("PUT", `/tenants/${tenantId}/credentials/providerB`, tenantId, { ...keys, privateKey: "wrong", environment: "sandbox" });
    const response = await gw.call("POST", "/providerB/checkout", tenantId, checkoutBody());
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ code: "provider_refused", providerResponseCode: "1001", message: "Invalid Private Key Specified" });
  });

  it("validates the body with the contract's 400 shape", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const response = await gw.call("POST", "/providerB/checkout", tenantId, checkoutBody({ amount: 0, returnUrl: "ftp://x", customer: {} }));
    expect(response.status).toBe(400);
    const body = (await response.json()) as Json;
    expect(Array.isArray(body.message)).toBe(true);
    expect(body.message.length).toBeGreaterThanOrEqual(3);
  });

  it("replays the first answer for the same Idempotency-Key", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const first = await checkout(tenantId, {}, { "idempotency-key": "order-42" });
    const again = await gw.call("POST", "/providerB/checkout", tenantId, checkoutBody(), { "idempotency-key": "order-42" });
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(((await again.json()) as Json).paymentId).toBe(first.paymentId);
    const count = await gw.gateway.deps.db
      .selectFrom("payments")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .where("tenant_id", "=", tenantId)
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });
});

describe("a complete sandbox payment", () => {
  it("checkout, pay on the hosted page, IPN, and a signed payment.completed at the tenant's webhook", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const secret = await addWebhookEndpoint(gw, tenantId, `${receiver.url}/complete`);
    const answer = await checkout(tenantId);
    expect((await sim.press(answer.token, "pay", { payment_method: "wave-senegal" })).status).toBe(200);
    const receipt = await waitUntil(() => receiver.receipts.find((r) => r.path === "/complete"), { what: "the tenant's webhook", timeoutMs: 10_000 });
    const event = new Webhook(secret).verify(receipt.body, receipt.headers) as Json;
    expect(event).toMatchObject({ type: "payment.completed", tenantId, environment: "sandbox" });
    expect(event.data).toMatchObject({
      paymentId: answer.paymentId,
      provider: "providerB",
      kind: "checkout",
      providerTransactionId: answer.token,
      status: "completed",
      amount: 5000,
      currency: "XOF",
      paymentMethod: "wave-senegal",
      customData: { orderRef: "ORD-42", quantity: 3, gift: true },
    });
    expect(event.data.receiptUrl).toContain(answer.token);
    expect(await paymentOf(tenantId, answer.paymentId)).toMatchObject({ state: "succeeded", providerStatus: "completed", paymentMethod: "wave-senegal" });
    // Stored without its hash.
    const stored = await gw.gateway.deps.db.selectFrom("ipn_messages").selectAll().where("payment_id", "=", answer.paymentId).execute();
    expect(stored.length).toBe(1);
    expect(stored[0]!.state).toBe("processed");
    expect(JSON.stringify(stored[0]!.body)).not.toContain("hash");
  }, 20_000);

  it("records cancelled, then completed when the customer pays after cancelling", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const answer = await checkout(tenantId);
    await sim.press(answer.token, "cancel");
    await waitUntil(async () => (await paymentOf(tenantId, answer.paymentId)).state === "cancelled", { what: "cancelled", timeoutMs: 10_000 });
    await sim.press(answer.token, "pay");
    await waitUntil(async () => (await paymentOf(tenantId, answer.paymentId)).state === "succeeded", { what: "completed", timeoutMs: 10_000 });
    expect((await eventsOf(answer.paymentId)).map((e) => e.type).sort()).toEqual(["payment.cancelled", "payment.completed"]);
  }, 20_000);

  it("attributes each IPN to the right tenant when two tenants have different credentials", async () => {
    const a = await gw.tenantWithAccount(sim);
    const b = await gw.tenantWithAccount(sim);
    await addWebhookEndpoint(gw, a.tenantId, `${receiver.url}/tenant-a`);
    await addWebhookEndpoint(gw, b.tenantId, `${receiver.url}/tenant-b`);
    const payA = await checkout(a.tenantId, { amount: 1000 });
    const payB = await checkout(b.tenantId, { amount: 2000 });
    await Promise.all([sim.press(payA.token, "pay"), sim.press(payB.token, "pay")]);
    const gotA = await waitUntil(() => receiver.receipts.find((r) => r.path === "/tenant-a"), { what: "A's event", timeoutMs: 10_000 });
    const gotB = await waitUntil(() => receiver.receipts.find((r) => r.path === "/tenant-b"), { what: "B's event", timeoutMs: 10_000 });
    expect(JSON.parse(gotA.body)).toMatchObject({ tenantId: a.tenantId, data: { paymentId: payA.paymentId, amount: 1000 } });
    expect(JSON.parse(gotB.body)).toMatchObject({ tenantId: b.tenantId, data: { paymentId: payB.paymentId, amount: 2000 } });
  }, 20_000);

  it("the same IPN 50 times at once records one completion and one delivery per endpoint", async () => {
    const { tenantId, keys } = await gw.tenantWithAccount(sim);
    await addWebhookEndpoint(gw, tenantId, `${receiver.url}/fifty-1`);
    await addWebhookEndpoint(gw, tenantId, `${receiver.url}/fifty-2`);
    const answer = await checkout(tenantId);
    await sim.press(answer.token, "pay");
    const body = await ipnBodyOf(keys, answer.token);
    const answers = await Promise.all(Array.from({ length: 50 }, () => postIpn(body)));
    expect(answers.map((r) => r.status)).toEqual(Array(50).fill(200));
    await waitUntil(() => receiver.receipts.filter((r) => r.path.startsWith("/fifty-")).length >= 2, { what: "two deliveries", timeoutMs: 10_000 });
    await Bun.sleep(1_000);
    expect(receiver.receipts.filter((r) => r.path === "/fifty-1").length).toBe(1);
    expect(receiver.receipts.filter((r) => r.path === "/fifty-2").length).toBe(1);
    expect((await eventsOf(answer.paymentId)).length).toBe(1);
  }, 20_000);

  it("refuses a forged IPN (the hash of another master key) with 401 and changes nothing", async () => {
    const { tenantId, keys } = await gw.tenantWithAccount(sim);
    const answer = await checkout(tenantId);
    const confirm = await confirmOf(keys, answer.token);
    const forged = { ...confirm, status: "completed", hash: createHash("sha512").update("another-master-key").digest("hex") };
    const response = await postIpn(encodePhpForm({ data: forged }));
    expect(response.status).toBe(401);
    expect(((await response.json()) as Json).code).toBe("unauthorized");
    expect((await paymentOf(tenantId, answer.paymentId)).state).toBe("pending");
    expect(await gw.gateway.deps.db.selectFrom("ipn_messages").selectAll().where("token", "=", answer.token).execute()).toEqual([]);
  });

  it("follows the confirm when a correctly hashed IPN claims another status", async () => {
    const { tenantId, keys } = await gw.tenantWithAccount(sim);
    const answer = await checkout(tenantId);
    const body = (await ipnBodyOf(keys, answer.token)).replace("data%5Bstatus%5D=pending", "data%5Bstatus%5D=completed");
    expect((await postIpn(body)).status).toBe(200);
    await waitUntil(
      async () =>
        (await gw.gateway.deps.db.selectFrom("ipn_messages").select("state").where("token", "=", answer.token).executeTakeFirst())?.state === "processed",
      { what: "processed", timeoutMs: 5_000 },
    );
    expect((await paymentOf(tenantId, answer.paymentId)).state).toBe("pending");
    expect(await eventsOf(answer.paymentId)).toEqual([]);
  });

  it("changes nothing and raises an alert when the confirmed amount differs from our record", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const answer = await checkout(tenantId);
    await gw.gateway.deps.db.updateTable("payments").set({ amount: 4000 }).where("id", "=", answer.paymentId).execute();
    await sim.press(answer.token, "pay");
    await waitUntil(() => gw.logs.find((l) => l.alert === "providerB_confirm_mismatch" && l.paymentId === answer.paymentId), {
      what: "the alert",
      timeoutMs: 10_000,
    });
    expect((await paymentOf(tenantId, answer.paymentId)).state).toBe("pending");
    expect(await eventsOf(answer.paymentId)).toEqual([]);
  }, 20_000);

  it("verifies with the credential version of the checkout after the tenant replaced its credentials", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const answer = await checkout(tenantId);
    const newKeys = await sim.account();
    const put = await gw.call("PUT", `/tenants/${tenantId}/credentials/providerB`, tenantId, { ...newKeys, environment: "sandbox" });
    expect(((await put.json()) as Json).version).toBe(2);
    await sim.press(answer.token, "pay");
    await waitUntil(async () => (await paymentOf(tenantId, answer.paymentId)).state === "succeeded", { what: "completed", timeoutMs: 10_000 });
  }, 20_000);
});

describe("POST /providerB/webhook bodies", () => {
  it("accepts data=<json> and JSON bodies, answers probes and unknown tokens 200, refuses other types with 415", async () => {
    const { tenantId, keys } = await gw.tenantWithAccount(sim);
    const answer = await checkout(tenantId);
    await sim.press(answer.token, "pay");
    const data = await confirmOf(keys, answer.token);
    expect((await postIpn(`data=${encodeURIComponent(JSON.stringify(data))}`)).status).toBe(200);
    expect((await postIpn(JSON.stringify({ data }), "application/json")).status).toBe(200);
    expect((await postIpn(JSON.stringify(data), "application/json")).status).toBe(200);
    const probe = await postIpn("");
    expect(probe.status).toBe(200);
    expect(await probe.json()).toEqual({ received: true });
    expect((await postIpn(encodePhpForm({ data: { ...data, invoice: { token: "test_unknown000" } } }))).status).toBe(200);
    const orphan = await gw.gateway.deps.db.selectFrom("ipn_messages").selectAll().where("token", "=", "test_unknown000").executeTakeFirstOrThrow();
    expect(orphan.state).toBe("orphan");
    expect(orphan.expires_at!.getTime()).toBeGreaterThan(Date.now() + 6 * 24 * 3600 * 1000);
    expect((await postIpn("x", "text/plain")).status).toBe(415);
    await waitUntil(async () => (await paymentOf(tenantId, answer.paymentId)).state === "succeeded", { what: "completed", timeoutMs: 10_000 });
    expect((await eventsOf(answer.paymentId)).length).toBe(1);
  }, 20_000);

  it("re-matches an orphan IPN once its checkout appears", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const answer = await checkout(tenantId);
    const db = gw.gateway.deps.db;
    // The IPN outruns our insert: hide the token while it arrives.
    await db.updateTable("payments").set({ provider_transaction_id: null }).where("id", "=", answer.paymentId).execute();
    expect((await sim.press(answer.token, "pay")).status).toBe(200);
    await waitUntil(
      async () => (await db.selectFrom("ipn_messages").select("state").where("token", "=", answer.token).executeTakeFirst())?.state === "orphan",
      { what: "the orphan", timeoutMs: 5_000 },
    );
    await db.updateTable("payments").set({ provider_transaction_id: answer.token }).where("id", "=", answer.paymentId).execute();
    expect(await rematchOrphans(gw.gateway.deps, { token: answer.token })).toBe(1);
    await waitUntil(async () => (await paymentOf(tenantId, answer.paymentId)).state === "succeeded", { what: "completed", timeoutMs: 10_000 });
  }, 20_000);
});

describe("the receipt on the payment record (issue 6)", () => {
  it("stores the receipt, payment method and customer as confirmed, and shows them in the payment view", async () => {
    const { tenantId, keys } = await gw.tenantWithAccount(sim);
    const answer = await checkout(tenantId);
    const pending = await paymentOf(tenantId, answer.paymentId);
    expect(pending).toMatchObject({ state: "pending", receiptUrl: null, receiptIdentifier: null, providerReference: null });
    const paid = await sim.press(answer.token, "pay", {
      payment_method: "orange-money-senegal",
      customer: { name: "Awa N. Diop", phone: "+221771112233", email: "awa.diop@example.com" },
    });
    expect(paid.status).toBe(200);
    const settled = await waitUntil(
      async () => {
        const view = await paymentOf(tenantId, answer.paymentId);
        return view.state === "succeeded" ? view : undefined;
      },
      { what: "the checkout completed", timeoutMs: 10_000 },
    );
    // What provider B confirms now is what the record keeps.
    const confirm = await confirmOf(keys, answer.token);
    expect(confirm.receipt_url).toContain(answer.token);
    expect(settled).toMatchObject({
      paymentMethod: "orange-money-senegal",
      receiptUrl: confirm.receipt_url,
      receiptIdentifier: confirm.receipt_identifier,
      providerReference: confirm.provider_reference,
      customer: { name: "Awa N. Diop", phone: "+221771112233", email: "awa.diop@example.com" },
    });
    expect(typeof settled.receiptIdentifier).toBe("string");
    // The same view in the list.
    const list = (await (await gw.call("GET", `/payments?providerTransactionId=${answer.token}`, tenantId)).json()) as Json;
    expect(list.data[0]).toMatchObject({ id: answer.paymentId, receiptUrl: confirm.receipt_url, receiptIdentifier: confirm.receipt_identifier });
  }, 20_000);
});

describe("forged IPNs are rate-limited (issue 6, point 4)", () => {
  it("answers 401 up to the budget for one token, then 429, and nothing changes", async () => {
    const { tenantId, keys } = await gw.tenantWithAccount(sim);
    const answer = await checkout(tenantId);
    const confirm = await confirmOf(keys, answer.token);
    const forged = encodePhpForm({ data: { ...confirm, status: "completed", hash: createHash("sha512").update("not-the-master-key").digest("hex") } });
    // The budget is 20 wrong hashes, then one a second. Thirty at once: 20 (and the few the refill lets
    // through while they are answered) are checked and refused, the rest are not even checked.
    const statuses = await Promise.all(Array.from({ length: 30 }, async () => (await postIpn(forged)).status));
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    const checked = statuses.filter((s) => s === 401).length;
    expect(checked).toBeGreaterThanOrEqual(20);
    expect(30 - checked).toBeGreaterThanOrEqual(5);
    expect((await paymentOf(tenantId, answer.paymentId)).state).toBe("pending");
    expect(await gw.gateway.deps.db.selectFrom("ipn_messages").selectAll().where("token", "=", answer.token).execute()).toEqual([]);
  });
});
