// A direct payment's sync chain and its sweeper clause (contract §8), on the queue the environment gives
// (BullMQ when REDIS_URL is set, the in-process driver otherwise; never started, so jobs stay queued).
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ulid } from "ulid";
import { createJobQueue, type JobQueue } from "../../../src/jobs/mod.ts";
import { DIRECT_PAYMENT_SYNC, sweepDirectPaymentSyncs } from "../../../src/services/direct-payments/sync-jobs.ts";
import { syncQueueOf } from "../../../src/jobs/queues.ts";
import { createTestDatabase, insertDirectPayment, type TestDatabase } from "../../support/db.ts";
import { deleteKeysUnderPrefix, testQueuePrefix } from "../../support/redis.ts";

const REDIS_URL = process.env.REDIS_URL;
const prefix = testQueuePrefix();
let database: TestDatabase;
let queue: JobQueue;
const logger = { warn() {}, error() {}, info() {}, debug() {} } as never;
const NOW = new Date("2026-03-01T12:00:00.000Z");
const deps = () => ({ db: database.db, queue, logger, now: () => NOW });

beforeAll(async () => {
  database = await createTestDatabase();
  queue = createJobQueue({ redisUrl: REDIS_URL, prefix });
});

afterAll(async () => {
  await queue?.close();
  if (REDIS_URL) await deleteKeysUnderPrefix(REDIS_URL, prefix);
  await database?.dispose();
});

async function pendingPayment(tenantId: string, ageMs: number, provider = "providerA") {
  const createdAt = new Date(NOW.getTime() - ageMs);
  return insertDirectPayment(database.db, tenantId, Math.floor(Math.random() * 1e9), { created_at: createdAt, updated_at: createdAt, provider });
}

describe("the sweeper's clause of direct payments", () => {
  it("re-creates a lost chain at its due step, on the payment's provider's queue, once; leaves held and expired ones alone", async () => {
    const tenantId = `ten_${ulid()}`;
    await database.db.insertInto("tenants").values({ id: tenantId, name: "Sweep", store_name: "Sweep Store" }).execute();
    const lost = await pendingPayment(tenantId, 40_000); // past the 30 s step: step 3 (1 min) is the one due next
    const lostC = await pendingPayment(tenantId, 6_000, "providerC"); // past the first step
    const held = await pendingPayment(tenantId, 2_000); // its first step may be held by the process that made it
    const expired = await pendingPayment(tenantId, 25 * 3_600_000); // its chain has ended: stuck, for the operator
    const settled = await pendingPayment(tenantId, 40_000);
    await database.db.updateTable("payments").set({ state: "succeeded" }).where("id", "=", settled.id).execute();

    const first = await sweepDirectPaymentSyncs(deps());
    expect(first).toEqual({ due: 2, enqueued: 2 });
    const has = (provider: string, id: string, step: number) => queue.has(syncQueueOf(provider), DIRECT_PAYMENT_SYNC.jobId(id, step));
    expect(await has("providerA", lost.id, 3)).toBe(true);
    expect(await has("providerC", lostC.id, 1)).toBe(true);
    expect(await has("providerA", lostC.id, 1)).toBe(false);
    for (const step of [0, 1]) expect(await has("providerA", held.id, step)).toBe(false);

    // The chains are live now: the next sweep adds nothing.
    expect(await sweepDirectPaymentSyncs(deps())).toEqual({ due: 2, enqueued: 0 });
    expect(expired.state).toBe("pending");
  });
});

describe("the sweeper's clause and a clock ahead", () => {
  it("sweeps at once a payment dated ahead by a process whose clock was (its own first step may have been lost), not one a few seconds ahead", async () => {
    const tenantId = `ten_${ulid()}`;
    await database.db.insertInto("tenants").values({ id: tenantId, name: "Ahead", store_name: "Ahead Store" }).execute();
    // Made on an API node 184 s ahead (the fault campaign's clock jump) whose enqueue of its first step failed.
    const ahead = await pendingPayment(tenantId, -184_000);
    // Within the first step's 5 s, either way: its creator's own enqueue may still be under way.
    const slightlyAhead = await pendingPayment(tenantId, -2_000);
    const has = (id: string, step: number) => queue.has(syncQueueOf("providerA"), DIRECT_PAYMENT_SYNC.jobId(id, step));

    const { enqueued } = await sweepDirectPaymentSyncs(deps());
    expect(enqueued).toBe(1);
    expect(await has(ahead.id, 0)).toBe(true);
    for (const step of [0, 1]) expect(await has(slightlyAhead.id, step)).toBe(false);
    // Its chain is live now: the next sweep adds nothing for it.
    expect((await sweepDirectPaymentSyncs(deps())).enqueued).toBe(0);
  });
});
