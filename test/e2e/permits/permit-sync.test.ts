/**
 * A lost permit IPN is not a lost permit (contract §8, `providerB-sync`): provider B's IPN never arrives
 * (it posts to a port where nothing listens), yet the permit the customer authorised becomes `active` —
 * confirmed with provider B by the permit's sync chain, or by the chain the sweeper re-creates after a
 * restart — with `permit.activated` delivered through the webhook engine. Over real HTTP against the
 * standalone provider B simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { sweepProviderB } from "../../../src/services/ipn/sweep-provider-b.ts";
import { syncQueueOf } from "../../../src/jobs/queues.ts";
import { PERMIT_SYNC } from "../../../src/services/permits/permit-sync.ts";
import type { TestDatabase } from "../../support/db.ts";
import { createPermit, permitControl } from "../../support/permit-rig.ts";
import { createTestDatabase, startRigGateway, startSimulator, type SimulatorServer } from "../../support/provider-b-rig.ts";
import { testClock } from "../../support/renewal-rig.ts";
import { freePort } from "../../support/ports.ts";
import { waitUntil } from "../../support/wait.ts";
import { virtualTime } from "../../support/virtual-time.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

/** The provider B queue a permit's sync chain runs on. */
const PROVIDER_B_SYNC_QUEUE = syncQueueOf("providerB");

let sim: SimulatorServer;
let receiver: WebhookReceiver;

beforeAll(async () => {
  sim = await startSimulator();
  receiver = await startReceiver();
});
afterAll(async () => {
  await sim?.stop();
  await receiver?.stop();
});

const simControl = (token: string, verb: string) => permitControl(sim, token, verb);

async function permitRow(db: TestDatabase, permitId: string) {
  return db.db.selectFrom("permits").selectAll().where("id", "=", permitId).executeTakeFirstOrThrow();
}

async function eventTypes(db: TestDatabase, permitId: string): Promise<string[]> {
  const rows = await db.db.selectFrom("events").select(["type", "data"]).orderBy("id").execute();
  return rows.filter((row) => row.data.permitId === permitId).map((row) => row.type);
}

describe("a pending permit whose IPN is lost", () => {
  it("is confirmed by its providerB-sync chain: authorised → active with permit.activated delivered; declined → declined", async () => {
    const db = await createTestDatabase();
    // Provider B posts its IPNs to a port where nothing listens: they never arrive. The gateway runs on virtual time.
    const time = virtualTime();
    const gw = await startRigGateway({ sim, database: db, publicBaseUrl: `http://127.0.0.1:${await freePort()}`, time });
    try {
      const { tenantId } = await gw.tenantWithAccount(sim);
      const hook = await gw.call("POST", "/webhooks", tenantId, { url: `${receiver.url}/sync-activated`, events: ["permit.activated"] });
      expect(hook.status).toBe(200);
      const authorised = await createPermit(gw, tenantId);
      const declined = await createPermit(gw, tenantId);
      // The chain's first step is queued at creation (5 s after it).
      expect(await gw.gateway.deps.queue.has(PROVIDER_B_SYNC_QUEUE, PERMIT_SYNC.jobId(authorised.permitId, 0))).toBe(true);
      expect((await simControl(authorised.token, "authorize")).status).toBe(200);
      expect((await simControl(declined.token, "decline")).status).toBe(200);
      await time.advance(4_999);
      expect((await permitRow(db, authorised.permitId)).status).toBe("pending");

      await time.advance(1);
      await waitUntil(async () => (await permitRow(db, authorised.permitId)).status === "active", {
        what: "the sync to activate the permit",
        timeoutMs: 15_000,
        intervalMs: 50,
      });
      await waitUntil(async () => (await permitRow(db, declined.permitId)).status === "declined", {
        what: "the sync to record the decline",
        timeoutMs: 15_000,
        intervalMs: 50,
      });
      const active = await permitRow(db, authorised.permitId);
      expect(active.activated_at).not.toBeNull();
      expect(active.payment_method).toBeTruthy();
      // No IPN ever reached the gateway: the sync did it, through the IPN's own code (one event each).
      expect(await db.db.selectFrom("ipn_messages").select("id").where("permit_id", "in", [authorised.permitId, declined.permitId]).execute()).toEqual([]);
      expect(await eventTypes(db, authorised.permitId)).toEqual(["permit.activated"]);
      expect(await eventTypes(db, declined.permitId)).toEqual(["permit.declined"]);

      const receipt = await waitUntil(() => receiver.receipts.find((r) => r.path === "/sync-activated"), {
        what: "permit.activated delivered",
        timeoutMs: 10_000,
      });
      expect(JSON.parse(receipt.body)).toMatchObject({
        type: "permit.activated",
        tenantId,
        data: { permitId: authorised.permitId, status: "active", customData: { plan: "gold", seats: 3 } },
      });
      // The chain stops once the permit is no longer pending.
      await Bun.sleep(300);
      const live = await Promise.all([0, 1, 2].map((step) => gw.gateway.deps.queue.has(PROVIDER_B_SYNC_QUEUE, PERMIT_SYNC.jobId(authorised.permitId, step))));
      expect(live).toEqual([false, false, false]);
    } finally {
      await gw.close();
      await db.dispose();
    }
  }, 40_000);

  it("keeps the chain going while the customer has not decided, and the permit stays pending", async () => {
    const db = await createTestDatabase();
    const time = virtualTime();
    const gw = await startRigGateway({ sim, database: db, publicBaseUrl: `http://127.0.0.1:${await freePort()}`, time });
    try {
      const { tenantId } = await gw.tenantWithAccount(sim);
      const { permitId } = await createPermit(gw, tenantId);
      // Step 0 (5 s) confirms "pending" and queues step 1 (15 s), which confirms it again and queues step 2 (30 s).
      await time.advance(5_000);
      await waitUntil(() => gw.gateway.deps.queue.has(PROVIDER_B_SYNC_QUEUE, PERMIT_SYNC.jobId(permitId, 1)), {
        what: "the second step queued",
        timeoutMs: 12_000,
        intervalMs: 50,
      });
      await time.advance(10_000);
      await waitUntil(() => gw.gateway.deps.queue.has(PROVIDER_B_SYNC_QUEUE, PERMIT_SYNC.jobId(permitId, 2)), {
        what: "the third step queued",
        timeoutMs: 12_000,
        intervalMs: 50,
      });
      expect((await permitRow(db, permitId)).status).toBe("pending");
      expect(await eventTypes(db, permitId)).toEqual([]);
    } finally {
      await gw.close();
      await db.dispose();
    }
  }, 30_000);

  it("is confirmed by the chain the sweeper re-creates when its sync job is missing (a restart lost the queue), within 24 h", async () => {
    const db = await createTestDatabase();
    const deadPort = `http://127.0.0.1:${await freePort()}`;
    // The first gateway runs no job and "crashes" with its queue (and the chain's first step in it).
    const first = await startRigGateway({ sim, database: db, workers: false, publicBaseUrl: deadPort });
    const { tenantId } = await first.tenantWithAccount(sim);
    const { permitId, token } = await createPermit(first, tenantId);
    // Another pending permit, made over 24 h ago: its chain has ended, the sweeper leaves it alone.
    const old = await createPermit(first, tenantId);
    await db.db
      .updateTable("permits")
      .set({ created_at: new Date(Date.now() - 25 * 3600_000) })
      .where("id", "=", old.permitId)
      .execute();
    await first.close();
    expect((await simControl(token, "authorize")).status).toBe(200);
    expect((await permitRow(db, permitId)).status).toBe("pending");

    // The restarted gateway, two minutes later: a new process, an empty queue, the same database.
    const clock = testClock(new Date(Date.now() + 120_000));
    const second = await startRigGateway({ sim, database: db, workers: true, publicBaseUrl: deadPort, now: clock.now });
    try {
      expect((await sweepProviderB(second.gateway.deps)).permitSyncsEnqueued).toBe(1);
      await waitUntil(async () => (await permitRow(db, permitId)).status === "active", {
        what: "the swept sync to activate the permit",
        timeoutMs: 10_000,
        intervalMs: 100,
      });
      expect(await eventTypes(db, permitId)).toEqual(["permit.activated"]);
      expect((await sweepProviderB(second.gateway.deps)).permitSyncsEnqueued).toBe(0);
      expect((await permitRow(db, old.permitId)).status).toBe("pending");
    } finally {
      await second.close();
      await db.dispose();
    }
  }, 40_000);
});
