/**
 * "At least once, never lost" (contract §6, issue 4 point 5), on the BullMQ driver against the real
 * Redis: (a) a receiver that is down comes back and gets the event; (b) deleting every Redis key of the
 * queue mid-way loses nothing — the sweeper re-sends; (c) a worker process SIGKILLed mid-delivery is
 * replaced by another worker once its lease runs out; (d) an event that succeeded is never delivered
 * to the same endpoint again, whatever duplicates the queue, concurrent workers and the sweeper add.
 *
 * Without REDIS_URL, (a) and (d) run on the in-process driver and (b) is reported as skipped; (c) also
 * needs DATABASE_URL (a second process cannot open the test's PGlite database).
 */
import { describe, expect, it } from "bun:test";
import type { Environment } from "../../../src/db/schema.ts";
import { deliverOnce } from "../../../src/services/webhooks/deliver.ts";
import { deliveryJobId, WEBHOOKS_QUEUE } from "../../../src/jobs/queues.ts";
import { createEndpoint } from "../../../src/services/webhooks/endpoints.ts";
import { scheduleDeliveries } from "../../../src/services/webhooks/schedule-deliveries.ts";
import { runSweeper } from "../../../src/services/webhooks/sweeper.ts";
import { createNamedServerDatabase, startDeliveryGateway, type DeliveryGateway } from "../../support/delivery-gateway.ts";
import { deleteKeysUnderPrefix, testQueuePrefix } from "../../support/redis.ts";
import { freePort } from "../../support/ports.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

const REDIS_URL = process.env.REDIS_URL;
const DATABASE_URL = process.env.DATABASE_URL;
const SWEEP_EVERY_MS = 250;
const driver = REDIS_URL ? "BullMQ on Redis" : "in-process driver (set REDIS_URL for BullMQ)";

interface Scope {
  tenantId: string;
  environment: Environment;
}

async function tenantOf(dg: DeliveryGateway): Promise<Scope> {
  return { tenantId: (await dg.createTenant()).tenantId, environment: "sandbox" };
}

function rowsOf(dg: DeliveryGateway, ids: string[]) {
  return dg.deps.db.selectFrom("deliveries").selectAll().where("id", "in", ids).execute();
}

async function allSucceeded(dg: DeliveryGateway, ids: string[], timeoutMs: number, what: string): Promise<void> {
  await waitUntil(async () => (await rowsOf(dg, ids)).every((row) => row.state === "succeeded"), { what, timeoutMs, intervalMs: 50 });
}

/** Attempt rows per delivery id. */
async function attemptCounts(dg: DeliveryGateway, ids: string[]): Promise<Map<string, number>> {
  const rows = await dg.deps.db.selectFrom("delivery_attempts").select("delivery_id").where("delivery_id", "in", ids).execute();
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.delivery_id, (counts.get(row.delivery_id) ?? 0) + 1);
  return counts;
}

/** Every delivery got exactly one 2xx, and exactly as many requests as its logged attempts. */
async function expectDeliveredExactlyOnce(dg: DeliveryGateway, receiver: WebhookReceiver, ids: string[]): Promise<void> {
  const rows = await rowsOf(dg, ids);
  const endpoints = await dg.deps.db.selectFrom("webhook_endpoints").select(["id", "url"]).execute();
  const pathOf = new Map(endpoints.map((e) => [e.id, new URL(e.url).pathname]));
  const successes = receiver.successesByTarget();
  const attempts = await attemptCounts(dg, ids);
  for (const row of rows) {
    const path = pathOf.get(row.endpoint_id!)!;
    expect({ delivery: row.id, successes: successes.get(`${path} ${row.event_id}`) ?? 0 }).toEqual({ delivery: row.id, successes: 1 });
    expect({ delivery: row.id, requests: receiver.receiptsOf(row.event_id, path).length }).toEqual({ delivery: row.id, requests: attempts.get(row.id) ?? 0 });
  }
  expect(successes.size).toBe(ids.length);
}

/** Resolves when the child prints `ready`; rejects after `timeoutMs` or when its output ends first. */
async function childReady(stdout: ReadableStream<Uint8Array>, timeoutMs: number): Promise<void> {
  const reader = stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const timeout = Bun.sleep(timeoutMs).then(() => {
    throw new Error(`the child worker did not start within ${timeoutMs} ms`);
  });
  while (!text.includes("ready")) {
    const chunk = await Promise.race([reader.read(), timeout]);
    if (chunk.done) throw new Error("the child worker exited before it was ready");
    text += decoder.decode(chunk.value, { stream: true });
  }
  reader.releaseLock();
}

describe(`never lost — ${driver}`, () => {
  it("(a) a receiver down for the first attempts (not listening, then 503) gets the event once it is back", async () => {
    const dg = await startDeliveryGateway({ env: { WEBHOOK_RETRY_SCHEDULE: "300ms,300ms,300ms,300ms" }, workers: { sweepEveryMs: SWEEP_EVERY_MS } });
    let receiver: WebhookReceiver | undefined;
    try {
      const port = await freePort();
      const scope = await tenantOf(dg);
      await createEndpoint(dg.deps, { ...scope, url: `http://127.0.0.1:${port}/a` });
      const { eventId, deliveryIds } = await dg.record({ tenantId: scope.tenantId });
      await scheduleDeliveries(dg.deps, deliveryIds);
      const id = deliveryIds[0]!;
      await waitUntil(async () => (await rowsOf(dg, [id]))[0]!.attempts >= 1, { what: "the first attempt", timeoutMs: 3000 });

      receiver = await startReceiver({ syntheticEvents: true, port, respond: (_, i) => new Response(null, { status: i === 0 ? 503 : 200 }) });
      await allSucceeded(dg, [id], 5000, "the delivery once the receiver is back");
      const attempts = await dg.deps.db.selectFrom("delivery_attempts").selectAll().where("delivery_id", "=", id).orderBy("attempt").execute();
      expect(attempts.map((a) => [a.status, a.error])).toEqual([
        [null, "connection refused"],
        [503, null],
        [200, null],
      ]);
      expect(receiver.receiptsOf(eventId).map((r) => r.status)).toEqual([503, 200]);
    } finally {
      await receiver?.stop();
      await dg.close();
    }
  }, 20_000);

  it.skipIf(!REDIS_URL)(
    `(b) deleting every Redis key of the queue mid-way loses nothing: the sweeper re-sends${REDIS_URL ? "" : " (SKIPPED: set REDIS_URL)"}`,
    async () => {
      const dg = await startDeliveryGateway({ env: { WEBHOOK_RETRY_SCHEDULE: "1s,300ms,300ms" }, workers: { sweepEveryMs: SWEEP_EVERY_MS } });
      // Every event's first request fails: its second attempt then waits in Redis as a delayed job.
      const receiver = await startReceiver({ syntheticEvents: true, respond: (_, i) => new Response(null, { status: i === 0 ? 503 : 200 }) });
      try {
        const scope = await tenantOf(dg);
        for (const path of ["/b1", "/b2"]) await createEndpoint(dg.deps, { ...scope, url: `${receiver.url}${path}` });
        const scheduled: string[] = [];
        for (let i = 0; i < 10; i++) scheduled.push(...(await dg.record({ tenantId: scope.tenantId })).deliveryIds);
        await scheduleDeliveries(dg.deps, scheduled);
        await waitUntil(async () => (await rowsOf(dg, scheduled)).every((row) => row.attempts === 1), { what: "every first attempt", timeoutMs: 3000 });
        const live = async () => Promise.all(scheduled.map((id) => dg.deps.queue.has(WEBHOOKS_QUEUE, deliveryJobId(id, 2))));
        // (The next attempt is enqueued just after the first one's result is committed.)
        await waitUntil(async () => (await live()).every(Boolean), { what: "every second attempt waiting in Redis", timeoutMs: 2000 });
        // And some whose enqueue was lost altogether.
        const neverEnqueued: string[] = [];
        for (let i = 0; i < 5; i++) neverEnqueued.push(...(await dg.record({ tenantId: scope.tenantId })).deliveryIds);

        expect(await deleteKeysUnderPrefix(REDIS_URL!, dg.prefix)).toBeGreaterThan(0);
        expect((await live()).some(Boolean)).toBe(false);

        const all = [...scheduled, ...neverEnqueued];
        // Generous: the workers find their queue's keys gone and come back to it (BullMQ's own waits), and other
        // test files share the machine.
        await allSucceeded(dg, all, 20_000, "every delivery after the Redis keys were deleted");
        await Bun.sleep(3 * SWEEP_EVERY_MS);
        await expectDeliveredExactlyOnce(dg, receiver, all);
        expect(dg.logs.some((log) => log.msg === "sweeper re-enqueued deliveries whose job was missing")).toBe(true);
      } finally {
        await receiver.stop();
        await dg.close();
      }
    },
    45_000,
  );

  it.skipIf(!REDIS_URL || !DATABASE_URL)(
    `(c) a worker process SIGKILLed mid-delivery: another worker delivers once its lease runs out${REDIS_URL && DATABASE_URL ? "" : " (SKIPPED: needs REDIS_URL and DATABASE_URL)"}`,
    async () => {
      const database = await createNamedServerDatabase(DATABASE_URL!);
      const prefix = testQueuePrefix();
      const env = { WEBHOOK_TIMEOUT_MS: "1000", WEBHOOK_RETRY_SCHEDULE: "300ms" };
      let release: () => void = () => {};
      const held = new Promise<Response>((resolve) => (release = () => resolve(new Response("too late"))));
      const receiver = await startReceiver({ syntheticEvents: true, respond: (_, i) => (i === 0 ? held : new Response("ok")) });
      const parent = await startDeliveryGateway({ env, workers: { sweepEveryMs: SWEEP_EVERY_MS }, start: false, databaseUrl: database.url, prefix });
      const child = Bun.spawn(["bun", "test/support/delivery-worker-process.ts"], {
        env: { ...process.env, DATABASE_URL: database.url, REDIS_URL: REDIS_URL!, QUEUE_PREFIX: prefix, ...env, SWEEP_EVERY_MS: String(SWEEP_EVERY_MS) },
        stdout: "pipe",
        stderr: "inherit",
      });
      try {
        await childReady(child.stdout, 15_000);

        const scope = await tenantOf(parent);
        await createEndpoint(parent.deps, { ...scope, url: `${receiver.url}/c` });
        const { eventId, deliveryIds } = await parent.record({ tenantId: scope.tenantId });
        const id = deliveryIds[0]!;
        await scheduleDeliveries(parent.deps, deliveryIds);

        // Only the child runs workers: the request it sends is held by the receiver, then it dies.
        await waitUntil(() => receiver.receiptsOf(eventId).length === 1, { what: "the child's request", timeoutMs: 5000 });
        const leased = (await rowsOf(parent, [id]))[0]!;
        expect(leased.locked_until!.getTime()).toBeGreaterThan(Date.now());
        child.kill("SIGKILL");
        await child.exited;
        expect(child.signalCode).toBe("SIGKILL");

        await parent.startWorkers();
        await allSucceeded(parent, [id], 8000, "delivery by the surviving worker");
        const row = (await rowsOf(parent, [id]))[0]!;
        expect(row.delivered_at!.getTime()).toBeGreaterThanOrEqual(leased.locked_until!.getTime());
        expect(row.attempts).toBe(1);
        expect(receiver.receiptsOf(eventId).map((r) => r.status)).toEqual([null, 200]);
        expect(receiver.successesByTarget().get(`/c ${eventId}`)).toBe(1);
      } finally {
        child.kill("SIGKILL");
        release();
        await receiver.stop();
        await parent.close();
        await deleteKeysUnderPrefix(REDIS_URL!, prefix);
        await database.dispose();
      }
    },
    40_000,
  );

  it.skipIf(!DATABASE_URL)(
    `(e) two processes taking the leases of the same deliveries in opposite orders never deadlock${DATABASE_URL ? "" : " (SKIPPED: needs DATABASE_URL)"}`,
    async () => {
      const a = await startDeliveryGateway({ start: false });
      const b = await startDeliveryGateway({ start: false, database: a.database, prefix: a.prefix });
      const receiver = await startReceiver({ syntheticEvents: true, respond: async () => (await Bun.sleep(5), new Response(null, { status: 200 })) });
      try {
        const scope = await tenantOf(a);
        for (const path of ["/e1", "/e2", "/e3"]) await createEndpoint(a.deps, { ...scope, url: `${receiver.url}${path}` });
        const all: string[] = [];
        for (let round = 0; round < 10; round++) {
          const ids: string[] = [];
          for (let i = 0; i < 15; i++) ids.push(...(await a.record({ tenantId: scope.tenantId })).deliveryIds);
          all.push(...ids);
          // Each process takes its leases in one statement per turn of its event loop: one batch in the ids'
          // order, the other in reverse. A statement that waited for a row while holding others deadlocked.
          const settled = await Promise.allSettled([...ids.map((id) => deliverOnce(a.deps, id)), ...[...ids].reverse().map((id) => deliverOnce(b.deps, id))]);
          const errors = settled.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
          expect({ round, errors }).toEqual({ round, errors: [] });
        }
        await allSucceeded(a, all, 10_000, "every delivery of the ten rounds");
        await expectDeliveredExactlyOnce(a, receiver, all);
      } finally {
        await receiver.stop();
        await b.close();
        await a.close();
      }
    },
    60_000,
  );

  it("(d) an event that succeeded is never delivered twice to an endpoint: duplicate jobs, two workers, sweeps", async () => {
    const workers = { sweepEveryMs: 100, webhookConcurrency: 20 };
    const env = { WEBHOOK_RETRY_SCHEDULE: "100ms,100ms,100ms" };
    const a = await startDeliveryGateway({ env, workers });
    const b = await startDeliveryGateway({ env, workers, database: a.database, prefix: a.prefix });
    // Slow enough that attempts overlap; one request in three fails first, so retries join the race.
    let n = 0;
    const receiver = await startReceiver({
      syntheticEvents: true,
      respond: async (_, i) => (await Bun.sleep(20), new Response(null, { status: i === 0 && n++ % 3 === 0 ? 500 : 200 })),
    });
    try {
      const scope = await tenantOf(a);
      for (const path of ["/d1", "/d2", "/d3"]) await createEndpoint(a.deps, { ...scope, url: `${receiver.url}${path}` });
      const ids: string[] = [];
      for (let i = 0; i < 15; i++) ids.push(...(await a.record({ tenantId: scope.tenantId })).deliveryIds);
      expect(ids).toHaveLength(45);

      const volley = () =>
        Promise.all([
          scheduleDeliveries(a.deps, ids),
          scheduleDeliveries(b.deps, ids),
          scheduleDeliveries(a.deps, ids),
          ...ids.flatMap((id) => [
            // Ids the queue cannot de-duplicate: only the lease stands between them and a second send.
            a.deps.queue.add(WEBHOOKS_QUEUE, "deliver", { deliveryId: id, attempt: 1 }, { jobId: `${id}.dup-a` }),
            b.deps.queue.add(WEBHOOKS_QUEUE, "deliver", { deliveryId: id, attempt: 1 }, { jobId: `${id}.dup-b` }),
            deliverOnce(a.deps, id),
            deliverOnce(b.deps, id),
          ]),
          runSweeper(a.deps),
          runSweeper(b.deps),
        ]);
      await volley();
      await allSucceeded(a, ids, 10_000, "all 45 deliveries");
      // Once succeeded, the same volley again changes nothing.
      await volley();
      await Bun.sleep(500);
      await expectDeliveredExactlyOnce(a, receiver, ids);
      expect(receiver.receipts.filter((r) => r.status !== null && r.status < 300)).toHaveLength(45);
    } finally {
      await receiver.stop();
      await b.close();
      await a.close();
    }
  }, 30_000);
});
