// The direct payment's write-path shortcuts (issue 8): the apply with the row the caller read (a guarded
// update; one statement when the event has no target), and the first sync run held in-process.
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ulid } from "ulid";
import type { EventType, Payment } from "../../../src/db/schema.ts";
import type { JobQueue } from "../../../src/jobs/queue.ts";
import type { PaymentReport } from "../../../src/providers/provider.ts";
import { loadConfig } from "../../../src/config.ts";
import { createProviderRegistry } from "../../../src/providers/registry.ts";
import { createGatewayCaches } from "../../../src/services/caches.ts";
import { applyDirectPaymentUpdate, directPaymentEventData } from "../../../src/services/direct-payments/apply-update.ts";
import { createFirstSyncHold, releaseHeldFirstSyncs, TICK_MS } from "../../../src/services/direct-payments/first-sync.ts";
import { virtualTime } from "../../support/virtual-time.ts";
import { createTestDatabase, insertDirectPayment, type TestDatabase } from "../../support/db.ts";
import { TEST_ENV } from "../../support/gateway.ts";

let database: TestDatabase;
const added: { queue: string; jobId?: string; delayMs?: number }[] = [];
const queue = {
  driver: "memory",
  async add(queueName: string, _name: string, _data: unknown, opts?: { jobId?: string; delayMs?: number }) {
    added.push({ queue: queueName, jobId: opts?.jobId, delayMs: opts?.delayMs });
  },
} as unknown as JobQueue;
const logger = { warn() {}, error() {}, info() {}, debug() {} } as never;
// The first sync steps' hold waits on virtual time: a test moves it to the due time instead of sleeping.
const time = virtualTime();
const syncHold = createFirstSyncHold(time.timers);
const caches = createGatewayCaches();
const config = loadConfig(TEST_ENV);
const providers = createProviderRegistry();
const deps = () => ({ db: database.db, queue, logger, now: () => time.now(), syncHold, caches, config, providers });

/** `deps()` whose database counts the statements it runs (BEGIN and COMMIT aside). */
function countingDeps() {
  const counter = { statements: 0 };
  const db = database.db.withPlugin({
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      counter.statements++;
      return args.result;
    },
  });
  return { deps: { ...deps(), db }, counter };
}

async function newTenant(): Promise<string> {
  const id = `ten_${ulid()}`;
  await database.db.insertInto("tenants").values({ id, name: "Apply", store_name: "Apply Store" }).execute();
  return id;
}

let nextTransactionId = 41;

async function newPayment(tenantId: string, fields: { callback_url?: string } = {}): Promise<Payment> {
  const now = new Date();
  return insertDirectPayment(database.db, tenantId, nextTransactionId++, {
    credential_version: null,
    customer: { phone: "+22997000000", country: "bj" },
    callback_url: fields.callback_url ?? null,
    created_at: now,
    updated_at: now,
  });
}

/** Provider A's approval of a payment (`row` gives its transaction id). */
function approved(row: Payment): { kind: "provider"; report: PaymentReport } {
  return {
    kind: "provider",
    report: {
      providerPaymentId: row.provider_transaction_id!,
      reference: "trx_41",
      providerStatus: "approved",
      state: "succeeded",
      errorCode: null,
      approvedAt: new Date("2026-01-02T03:04:05.678Z"),
    },
  };
}

async function eventsOf(paymentId: string) {
  return database.db.selectFrom("events").selectAll().where("payment_id", "=", paymentId).execute();
}

async function deliveriesOf(eventId: string) {
  return database.db.selectFrom("deliveries").select(["endpoint_id", "target_url"]).where("event_id", "=", eventId).execute();
}

async function addEndpoint(
  tenantId: string,
  fields: { event_types: EventType[] | null; enabled?: boolean; environment?: "sandbox" | "live" },
): Promise<string> {
  const id = `whe_${ulid()}`;
  await database.db
    .insertInto("webhook_endpoints")
    .values({
      id,
      tenant_id: tenantId,
      environment: fields.environment ?? "sandbox",
      url: "https://example.com/hook",
      event_types: fields.event_types,
      enabled: fields.enabled ?? true,
    })
    .execute();
  return id;
}

beforeAll(async () => {
  database = await createTestDatabase();
}, 60_000);
afterAll(() => database.dispose(), 30_000);

describe("applying a provider read to the row the caller read", () => {
  it("without a target: moves the payment and records its event in one statement, as the locked path would", async () => {
    const tenantId = await newTenant();
    const seen = await newPayment(tenantId);
    const { deps: counted, counter } = countingDeps();
    const result = await applyDirectPaymentUpdate(counted, seen.id, approved(seen), seen);
    expect(counter.statements).toBe(1);
    expect(result.eventType).toBe("payment.completed");
    expect(result.row).toMatchObject({ state: "succeeded", provider_status: "approved", reference: "trx_41" });
    expect(result.row.approved_at?.toISOString()).toBe("2026-01-02T03:04:05.678Z");
    const events = await eventsOf(seen.id);
    expect(events.length).toBe(1);
    expect(events[0]).toMatchObject({ type: "payment.completed", tenant_id: tenantId, environment: "sandbox" });
    // The event data, computed before the statement, is what the stored row gives.
    const stored = await database.db.selectFrom("payments").selectAll().where("id", "=", seen.id).executeTakeFirstOrThrow();
    expect(events[0]!.data).toEqual(directPaymentEventData(stored));
    expect(events[0]!.created_at.getTime()).toBe(stored.updated_at.getTime());
    expect(await deliveriesOf(events[0]!.id)).toEqual([]);
  });

  it("delivers to exactly the endpoints recordEvent would choose, whatever path it takes", async () => {
    const cases: { name: string; endpoint: { event_types: EventType[] | null; enabled?: boolean; environment?: "sandbox" | "live" }; delivered: boolean }[] = [
      { name: "every type", endpoint: { event_types: null }, delivered: true },
      { name: "this type", endpoint: { event_types: ["payment.failed", "payment.completed"] }, delivered: true },
      { name: "other types", endpoint: { event_types: ["payment.failed"] }, delivered: false },
      { name: "disabled", endpoint: { event_types: null, enabled: false }, delivered: false },
      { name: "other environment", endpoint: { event_types: null, environment: "live" }, delivered: false },
    ];
    for (const c of cases) {
      const tenantId = await newTenant();
      const endpointId = await addEndpoint(tenantId, c.endpoint);
      // Twice: the first call may take the one-statement path, the second follows what the first learnt.
      for (let round = 0; round < 2; round++) {
        const seen = await newPayment(tenantId);
        await applyDirectPaymentUpdate(deps(), seen.id, approved(seen), seen);
        const events = await eventsOf(seen.id);
        expect(events.length).toBe(1);
        expect({ case: c.name, deliveries: await deliveriesOf(events[0]!.id) }).toEqual({
          case: c.name,
          deliveries: c.delivered ? [{ endpoint_id: endpointId, target_url: null }] : [],
        });
      }
    }
  });

  it("delivers to the payment's callback_url", async () => {
    const tenantId = await newTenant();
    const seen = await newPayment(tenantId, { callback_url: "https://example.com/callback" });
    await applyDirectPaymentUpdate(deps(), seen.id, approved(seen), seen);
    const events = await eventsOf(seen.id);
    expect(events.length).toBe(1);
    expect(await deliveriesOf(events[0]!.id)).toEqual([{ endpoint_id: null, target_url: "https://example.com/callback" }]);
  });

  it("decides again under the lock when the row moved on since it was read: one event, states only forward", async () => {
    const tenantId = await newTenant();
    const seen = await newPayment(tenantId);
    await applyDirectPaymentUpdate(deps(), seen.id, approved(seen), seen);
    // A stale reader (it read the row while pending) learns the same approval, then a decline.
    const again = await applyDirectPaymentUpdate(deps(), seen.id, approved(seen), seen);
    expect(again).toMatchObject({ eventType: null, row: { state: "succeeded" } });
    const declined = await applyDirectPaymentUpdate(
      deps(),
      seen.id,
      { kind: "provider", report: { ...approved(seen).report, providerStatus: "declined", state: "failed", approvedAt: null } },
      seen,
    );
    expect(declined).toMatchObject({ eventType: null, row: { state: "succeeded", provider_status: "approved" } });
    expect((await eventsOf(seen.id)).map((e) => e.type)).toEqual(["payment.completed"]);
  });

  it("records one event when the same news is applied concurrently", async () => {
    const tenantId = await newTenant();
    const seen = await newPayment(tenantId);
    await Promise.all(Array.from({ length: 6 }, (_, i) => applyDirectPaymentUpdate(deps(), seen.id, approved(seen), i % 2 === 0 ? seen : undefined)));
    expect((await eventsOf(seen.id)).map((e) => e.type)).toEqual(["payment.completed"]);
  });

  it("a read without news is one guarded update, with no event", async () => {
    const tenantId = await newTenant();
    const seen = await newPayment(tenantId);
    const { deps: counted, counter } = countingDeps();
    const result = await applyDirectPaymentUpdate(
      counted,
      seen.id,
      { kind: "provider", report: { ...approved(seen).report, providerStatus: "pending", state: "pending", approvedAt: null } },
      seen,
    );
    expect(counter.statements).toBe(1);
    expect(result.eventType).toBeNull();
    expect(result.row.state).toBe("pending");
    expect(result.row.provider_synced_at).not.toBeNull();
    expect(await eventsOf(seen.id)).toEqual([]);
  });
});

describe("the first sync step, held in-process", () => {
  it("is enqueued when due on the provider's sync queue, and not when the payment was settled here first", async () => {
    added.length = 0;
    const d = deps();
    // Made 5 s ago: the first step (5 s after creation) is due.
    const createdAt = new Date(time.now().getTime() - 5_000);
    d.syncHold.hold(d, { id: "pay_due", provider: "providerA", createdAt });
    d.syncHold.hold(d, { id: "pay_settled", provider: "providerA", createdAt });
    d.syncHold.hold(d, { id: "pay_other", provider: "providerC", createdAt });
    expect(d.syncHold.size).toBe(3);
    d.syncHold.settled("pay_settled");
    await time.advance(TICK_MS - 1);
    expect(d.syncHold.size).toBe(2);
    await time.advance(1);
    expect(d.syncHold.size).toBe(0);
    expect(added).toEqual([
      { queue: "providerA-sync", jobId: "pay_due.sync0", delayMs: 0 },
      { queue: "providerC-sync", jobId: "pay_other.sync0", delayMs: 0 },
    ]);
  });

  it("is enqueued at once, with the wait it has left, when the gateway releases what it holds", async () => {
    added.length = 0;
    const d = deps();
    d.syncHold.hold(d, { id: "pay_released", provider: "providerA", createdAt: time.now() });
    await time.advance(1_000);
    expect(await releaseHeldFirstSyncs(d)).toBe(1);
    expect(d.syncHold.size).toBe(0);
    expect(added.length).toBe(1);
    expect(added[0]).toMatchObject({ queue: "providerA-sync", jobId: "pay_released.sync0" });
    expect(added[0]!.delayMs).toBe(4_000);
  });

  it("is forgotten once an apply finds the payment final", async () => {
    added.length = 0;
    const tenantId = await newTenant();
    const seen = await newPayment(tenantId);
    syncHold.hold(deps(), { id: seen.id, provider: "providerA", createdAt: time.now() });
    expect(syncHold.size).toBe(1);
    await applyDirectPaymentUpdate(deps(), seen.id, approved(seen), seen);
    expect(syncHold.size).toBe(0);
    // Past the step's due time (5 s after creation): nothing was enqueued.
    await time.advance(5_000);
    expect(added).toEqual([]);
  });

  it("belongs to its gateway: another hold neither sees nor releases it", async () => {
    added.length = 0;
    const other = createFirstSyncHold(time.timers);
    syncHold.hold(deps(), { id: "pay_mine", provider: "providerA", createdAt: time.now() });
    expect(other.size).toBe(0);
    expect(await other.release()).toBe(0);
    expect(syncHold.size).toBe(1);
    expect(await syncHold.release()).toBe(1);
    expect(added.map((a) => a.jobId)).toEqual(["pay_mine.sync0"]);
  });
});

describe("a settled payment's first read again (settled-rereads.ts)", () => {
  it("is due the schedule's first step after its settlement when its provider can give it back outside the gateway, never otherwise", async () => {
    const tenantId = await newTenant();
    const ofA = await newPayment(tenantId);
    const ofB = await insertDirectPayment(database.db, tenantId, nextTransactionId++, { provider: "providerB", credential_version: null });
    for (const seen of [ofA, ofB]) {
      const { row } = await applyDirectPaymentUpdate(deps(), seen.id, approved(seen), seen);
      expect(row.state).toBe("succeeded");
    }
    const a = await database.db.selectFrom("payments").selectAll().where("id", "=", ofA.id).executeTakeFirstOrThrow();
    expect(a.reread_at!.getTime() - a.completed_at!.getTime()).toBe(config.settledRereadSchedule[0]!);
    const b = await database.db.selectFrom("payments").selectAll().where("id", "=", ofB.id).executeTakeFirstOrThrow();
    expect(b.reread_at).toBeNull();
    // A read that finds it still paid changes nothing of its schedule.
    await applyDirectPaymentUpdate(deps(), ofA.id, approved(a), a);
    expect((await database.db.selectFrom("payments").select("reread_at").where("id", "=", ofA.id).executeTakeFirstOrThrow()).reread_at).toEqual(a.reread_at);
  });
});
