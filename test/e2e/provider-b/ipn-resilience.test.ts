/**
 * Lost IPNs are not lost payments (issue 6, 4b and 5): the gateway down while provider B sends the IPN,
 * an IPN that never arrives, and a crash between storing an IPN and processing it. Over real HTTP against
 * the standalone provider B simulator.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "bun:test";
import { sweepProviderB } from "../../../src/services/ipn/sweep-provider-b.ts";
import { createTestDatabase, startRigGateway, startSimulator, type RigGateway, type SimulatorServer } from "../../support/provider-b-rig.ts";
import type { TestDatabase } from "../../support/db.ts";
import { freePort } from "../../support/ports.ts";
import { waitUntil } from "../../support/wait.ts";
import type { Json } from "../../support/json.ts";
import { virtualTime } from "../../support/virtual-time.ts";

const body = {
  amount: 2500,
  description: "Abonnement",
  returnUrl: "https://shop.example/ok",
  cancelUrl: "https://shop.example/ko",
  customer: { name: "Moussa Ba" },
  customData: { plan: "pro", seats: 2 },
};

let sim: SimulatorServer;
const open: { gw?: RigGateway; db?: TestDatabase }[] = [];

beforeAll(async () => {
  sim = await startSimulator({ ipnRetryDelaysMs: [300, 600, 1000, 2000] });
});
afterEach(async () => {
  for (const { gw, db } of open.splice(0)) {
    await gw?.close();
    await db?.dispose();
  }
});
afterAll(async () => sim.stop());

async function paymentState(gw: RigGateway, paymentId: string): Promise<string> {
  const row = await gw.gateway.deps.db.selectFrom("payments").select("state").where("id", "=", paymentId).executeTakeFirstOrThrow();
  return row.state;
}

async function checkout(gw: RigGateway, tenantId: string): Promise<Json> {
  const response = await gw.call("POST", "/providerB/checkout", tenantId, body);
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

describe("lost IPNs are not lost payments", () => {
  it("the gateway is down when provider B sends the IPN, then up: the simulator's retry lands it", async () => {
    const db = await createTestDatabase();
    const gw = await startRigGateway({ sim, database: db });
    open.push({ gw, db });
    const { tenantId } = await gw.tenantWithAccount(sim);
    const answer = await checkout(gw, tenantId);
    await gw.down();
    await sim.press(answer.token, "pay");
    await Bun.sleep(500);
    const delivery = ((await (await fetch(`${sim.url}/_sim/ipns`)).json()) as Json).deliveries.find((d: Json) => d.token === answer.token);
    expect(delivery.delivered).toBe(false);
    gw.up();
    await waitUntil(async () => (await paymentState(gw, answer.paymentId)) === "succeeded", { what: "the retried IPN", timeoutMs: 8_000 });
    const after = ((await (await fetch(`${sim.url}/_sim/ipns`)).json()) as Json).deliveries.find((d: Json) => d.token === answer.token);
    expect(after.delivered).toBe(true);
    expect(after.attempts).toBeGreaterThan(1);
  }, 20_000);

  it("an IPN that never arrives: the providerB-sync job records the payment anyway", async () => {
    const db = await createTestDatabase();
    // provider B posts its IPNs to a port where nothing listens. The gateway runs on virtual time.
    const time = virtualTime();
    const gw = await startRigGateway({ sim, database: db, publicBaseUrl: `http://127.0.0.1:${await freePort()}`, time });
    open.push({ gw, db });
    const { tenantId } = await gw.tenantWithAccount(sim);
    const answer = await checkout(gw, tenantId);
    await sim.press(answer.token, "pay");
    // The first sync is 5 s after the checkout: nothing reads provider B before.
    await time.advance(4_999);
    expect(await paymentState(gw, answer.paymentId)).toBe("pending");
    await time.advance(1);
    await waitUntil(async () => (await paymentState(gw, answer.paymentId)) === "succeeded", { what: "the sync job", timeoutMs: 12_000, intervalMs: 50 });
    const events = await gw.gateway.deps.db.selectFrom("events").select("type").where("payment_id", "=", answer.paymentId).execute();
    expect(events.map((e) => e.type)).toEqual(["payment.completed"]);
    expect(await gw.gateway.deps.db.selectFrom("ipn_messages").selectAll().where("payment_id", "=", answer.paymentId).execute()).toEqual([]);
  }, 20_000);

  it("a crash between storing the IPN and processing it: the sweeper processes it after the restart", async () => {
    const db = await createTestDatabase();
    // The first gateway stores IPNs but never runs a job: it "crashes" with its queue.
    const first = await startRigGateway({ sim, database: db, workers: false });
    const { tenantId } = await first.tenantWithAccount(sim);
    const answer = await checkout(first, tenantId);
    await sim.press(answer.token, "pay");
    await waitUntil(
      async () => (await db.db.selectFrom("ipn_messages").select("state").where("payment_id", "=", answer.paymentId).executeTakeFirst())?.state === "received",
      { what: "the stored IPN", timeoutMs: 5_000 },
    );
    await first.close();
    expect(await db.db.selectFrom("payments").select("state").where("id", "=", answer.paymentId).executeTakeFirstOrThrow()).toEqual({ state: "pending" });

    // The restarted gateway: new process, new queue (nothing of the first one's jobs), same database.
    const second = await startRigGateway({ sim, database: db, workers: true });
    open.push({ gw: second, db });
    const report = await sweepProviderB(second.gateway.deps, { ipnMinAgeMs: 0 });
    expect(report.ipnsEnqueued).toBe(1);
    await waitUntil(async () => (await paymentState(second, answer.paymentId)) === "succeeded", { what: "the swept IPN", timeoutMs: 8_000 });
    // The sweeper also re-created the checkout's sync job, which may confirm the payment first: the IPN's
    // job then finds it settled and marks the IPN processed a moment later.
    const ipnState = async () =>
      (await db.db.selectFrom("ipn_messages").select("state").where("payment_id", "=", answer.paymentId).executeTakeFirstOrThrow()).state;
    await waitUntil(async () => (await ipnState()) === "processed", { what: "the swept IPN processed", timeoutMs: 5_000 });
    expect(await ipnState()).toBe("processed");
  }, 30_000);

  it("the sweeper re-creates a pending checkout's missing sync job", async () => {
    const db = await createTestDatabase();
    const first = await startRigGateway({ sim, database: db, workers: false });
    const { tenantId } = await first.tenantWithAccount(sim);
    const answer = await checkout(first, tenantId);
    await first.close();
    const second = await startRigGateway({ sim, database: db, workers: false });
    open.push({ gw: second, db });
    expect((await sweepProviderB(second.gateway.deps)).syncsEnqueued).toBe(1);
    expect((await sweepProviderB(second.gateway.deps)).syncsEnqueued).toBe(0);
    void answer;
  }, 20_000);
});
