/**
 * A hosted checkout is created once at provider B for one `Idempotency-Key` when its payment was recorded but its
 * answer never stored (issue 28, the idempotency window, for money in): the API process died before storing it,
 * the key's lock ran out or was taken over, or a 5xx after the insert freed the key. Before migration 0034 the
 * retry created a second invoice at provider B and a second payment; now the payment keeps the key, and the
 * retry answers it — the same token and invoice page — from the row, without calling provider B.
 *
 * Provider B's own books (`GET /_sim/invoices`) and the merchant's payments are what is asserted.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createCheckout } from "../../../src/services/checkout/create-checkout.ts";
import type { TestDatabase } from "../../support/db.ts";
import { createTestDatabase, startRigGateway, startSimulator, type RigGateway, type SimulatorServer } from "../../support/provider-b-rig.ts";

type Body = Record<string, any>;

let sim: SimulatorServer;
let database: TestDatabase;
let gw: RigGateway;

const checkoutBody = (description: string) => ({
  amount: 5000,
  description,
  returnUrl: "https://shop.example/merci",
  cancelUrl: "https://shop.example/panier",
  customer: { name: "Awa Diop" },
  customData: { order: description },
});

async function checkout(tenantId: string, body: unknown, key: string): Promise<{ status: number; body: Body; replayed: boolean }> {
  const response = await gw.call("POST", "/providerB/checkout", tenantId, body, { "idempotency-key": key });
  return { status: response.status, body: (await response.json()) as Body, replayed: response.headers.get("idempotent-replayed") === "true" };
}

/** What a process killed after the insert and before storing the answer leaves: the key in flight, its lock run out. */
async function answerNeverStored(key: string): Promise<void> {
  const updated = await gw.gateway.deps.db
    .updateTable("idempotency_keys")
    .set({ state: "in_flight", response_status: null, response_body: null, response_headers: null, locked_until: new Date(Date.now() - 1_000) })
    .where("key", "=", key)
    .executeTakeFirst();
  expect(updated.numUpdatedRows).toBe(1n);
}

/** Provider B's own books: the invoices made with this description (in their custom data). */
async function invoicesOf(description: string): Promise<Body[]> {
  const books = (await (await fetch(`${sim.url}/_sim/invoices`)).json()) as { invoices: Body[] };
  return books.invoices.filter((i) => i.custom_data?.order === description);
}

async function paymentsOf(tenantId: string): Promise<{ id: string; provider_transaction_id: string | null }[]> {
  return gw.gateway.deps.db.selectFrom("payments").select(["id", "provider_transaction_id"]).where("tenant_id", "=", tenantId).execute();
}

beforeAll(async () => {
  sim = await startSimulator();
  database = await createTestDatabase();
  gw = await startRigGateway({ sim, database, workers: false });
}, 60_000);

afterAll(async () => {
  await gw?.close();
  await sim?.stop();
  await database?.dispose();
});

describe("POST /providerB/checkout in the idempotency window", () => {
  it("a checkout whose answer was never stored: the retries with the key answer the same invoice, created once", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const description = `Commande ${crypto.randomUUID().slice(0, 8)}`;
    const key = `checkout-${crypto.randomUUID()}`;
    const first = await checkout(tenantId, checkoutBody(description), key);
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    await answerNeverStored(key);

    const retries = await Promise.all([checkout(tenantId, checkoutBody(description), key), checkout(tenantId, checkoutBody(description), key)]);
    for (const r of retries) expect([200, 409], JSON.stringify(r.body)).toContain(r.status);
    expect(retries.some((r) => r.status === 200)).toBe(true);
    for (const r of retries.filter((x) => x.status === 200)) expect(r.body).toEqual(first.body);
    expect((await checkout(tenantId, checkoutBody(description), key)).body).toEqual(first.body);

    expect((await invoicesOf(description)).map((i) => i.token)).toEqual([first.body.token]);
    expect(await paymentsOf(tenantId)).toEqual([{ id: first.body.paymentId, provider_transaction_id: first.body.token }]);
    // What the customer does next is the invoice's page, shown by the payment too.
    const shown = (await (await gw.call("GET", `/payments/${first.body.paymentId}`, tenantId)).json()) as Body;
    expect(shown.nextAction).toMatchObject({ type: "open_url", url: first.body.response_text });

    // The idempotency layer's row gone (a 5xx after the insert freed it, or purged): the same body answers the checkout, another is 422.
    await gw.gateway.deps.db.deleteFrom("idempotency_keys").where("key", "=", key).execute();
    const same = await checkout(tenantId, checkoutBody(description), key);
    expect(same.status, JSON.stringify(same.body)).toBe(200);
    expect(same.replayed).toBe(false);
    expect(same.body).toEqual(first.body);
    await gw.gateway.deps.db.deleteFrom("idempotency_keys").where("key", "=", key).execute();
    const other = await checkout(tenantId, { ...checkoutBody(description), amount: 5100 }, key);
    expect(other.status, JSON.stringify(other.body)).toBe(422);
    expect(other.body.code).toBe("idempotency_mismatch");
    expect(await invoicesOf(description)).toHaveLength(1);
    expect(await paymentsOf(tenantId)).toHaveLength(1);
  }, 30_000);

  it("runs of one keyed checkout at once (as the idempotency layer lets through after takeovers) record one payment, answered to all", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const description = `Commande ${crypto.randomUUID().slice(0, 8)}`;
    const key = { key: `runs-${crypto.randomUUID()}`, path: "/providerB/checkout" };
    const scope = { tenantId, environment: "sandbox" as const };
    const answers = await Promise.all(Array.from({ length: 5 }, () => createCheckout(gw.gateway.deps, scope, checkoutBody(description), key)));
    expect(new Set(answers.map((a) => JSON.stringify(a))).size).toBe(1);
    expect(await paymentsOf(tenantId)).toEqual([{ id: answers[0]!.paymentId, provider_transaction_id: answers[0]!.token }]);
    // Runs that all looked before any was recorded each created an invoice at provider B: only the recorded one was
    // answered (shown to anyone), the others stay unpaid. A run after the record creates none.
    const made = (await invoicesOf(description)).length;
    expect(made).toBeGreaterThanOrEqual(1);
    expect((await createCheckout(gw.gateway.deps, scope, checkoutBody(description), key)).paymentId).toBe(answers[0]!.paymentId);
    expect(await invoicesOf(description)).toHaveLength(made);
  }, 30_000);
});
