/**
 * Bounded growth (issue 28 point 2): rows past their retention go, in bounded batches, and nothing still needed
 * is touched — an old event still being delivered and all its deliveries, an open payment's IPNs, an IPN not
 * yet processed, an idempotency key within its 24 hours. The rows are made by the gateway's own code with its
 * clock set 60 days back (events, deliveries and their attempts, idempotency keys, route outcomes); IPNs are
 * inserted as the intake stores them, since reaching one needs provider B's hosted page.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import type { Registry } from "prom-client";
import { ulid } from "ulid";
import type { Kysely } from "kysely";
import type { Database } from "../../../src/db/schema.ts";
import { mintToken } from "../../../src/mod.ts";
import { countFailedAttempt } from "../../../src/services/routing/window.ts";
import { PERIODIC_MAX_BATCHES, pruneOldRows } from "../../../src/services/retention/mod.ts";
import { deliverOnce } from "../../../src/services/webhooks/deliver.ts";
import { insertDirectPayment } from "../../support/db.ts";
import { startDeliveryGateway, type DeliveryGateway } from "../../support/delivery-gateway.ts";
import { TEST_ENV } from "../../support/gateway.ts";
import { onServerPass } from "../../support/passes.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

const DAY = 86_400_000;
/** The gateway's clock: `offsetMs` before (negative) or after the real time. */
const clock = { offsetMs: 0 };
let dg: DeliveryGateway;
let receiver: WebhookReceiver;
let tenantId: string;

beforeAll(async () => {
  receiver = await startReceiver({
    syntheticEvents: true,
    respond: (receipt) => new Response(receipt.path === "/down" ? "down" : "ok", { status: receipt.path === "/down" ? 500 : 200 }),
  });
  // One retry 5 s after the first attempt: a delivery to /down is pending after its first, failed after its second.
  // IPNs kept 30 days (90 by default); the other retentions at their defaults.
  dg = await startDeliveryGateway({
    env: { WEBHOOK_RETRY_SCHEDULE: "5s", RETENTION_IPNS: "30d" },
    now: () => new Date(Date.now() + clock.offsetMs),
    start: false,
  });
  ({ tenantId } = await dg.createTenant());
}, 60_000);
afterAll(async () => {
  await dg?.close();
  await receiver?.stop();
}, 30_000);

const db = (): Kysely<Database> => dg.deps.db;

/** POST /webhooks through the gateway (a real creating request, with its Idempotency-Key). */
async function createEndpointOverHttp(path: string, idempotencyKey: string): Promise<string> {
  const token = await mintToken(dg.config.jwt, { sub: `tenant:${tenantId}`, tenantId, environment: "sandbox" });
  const response = await dg.gateway.fetch(
    new Request("http://localhost/webhooks", {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": idempotencyKey },
      body: JSON.stringify({ url: `${receiver.url}${path}`, events: ["payment.completed"] }),
    }),
  );
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
}

/** An IPN row as the intake stores it, then marks it handled. */
async function insertIpn(paymentId: string, state: "received" | "processed" | "rejected", receivedAt: Date): Promise<number> {
  const row = await db()
    .insertInto("ipn_messages")
    .values({
      subject: "checkout",
      token: `tok_${ulid()}`,
      payment_id: paymentId,
      tenant_id: tenantId,
      environment: "sandbox",
      body: { status: "completed" },
      body_digest: ulid(),
      state,
      received_at: receivedAt,
      processed_at: state === "received" ? null : receivedAt,
    })
    .returning("id")
    .executeTakeFirstOrThrow();
  return Number(row.id);
}

const ids = <T extends { id: string | number }>(rows: T[]) => rows.map((row) => String(row.id)).sort();

describe("pruneOldRows", () => {
  it("deletes what is past its retention and keeps what is still needed, in batches of the size given", async () => {
    // 60 days ago.
    clock.offsetMs = -60 * DAY;
    const old = dg.deps.now();
    await createEndpointOverHttp("/ok", `old-key-${ulid()}`);
    const downEndpoint = await createEndpointOverHttp("/down", `old-key-${ulid()}`);
    const oldKeys = await db().selectFrom("idempotency_keys").select("key").where("tenant_id", "=", tenantId).execute();
    expect(oldKeys).toHaveLength(2);

    // Delivered to both endpoints: /ok answers 200, /down fails twice (its two attempts) and the delivery is failed.
    const delivered = await dg.record({ tenantId });
    expect(delivered.deliveryIds).toHaveLength(2);
    for (const id of delivered.deliveryIds) await deliverOnce(dg.deps, id, { attempt: 1 });
    clock.offsetMs += 10_000;
    const downOfDelivered = await db()
      .selectFrom("deliveries")
      .select("id")
      .where("event_id", "=", delivered.eventId)
      .where("endpoint_id", "=", downEndpoint)
      .executeTakeFirstOrThrow();
    await deliverOnce(dg.deps, downOfDelivered.id, { attempt: 2 });
    // Still being delivered: /ok took it, /down has one attempt made and one to come.
    const undelivered = await dg.record({ tenantId });
    for (const id of undelivered.deliveryIds) await deliverOnce(dg.deps, id, { attempt: 1 });
    const states = await db().selectFrom("deliveries").select(["event_id", "state"]).where("tenant_id", "=", tenantId).execute();
    expect(states.map((d) => `${d.event_id} ${d.state}`).sort()).toEqual(
      [`${delivered.eventId} failed`, `${delivered.eventId} succeeded`, `${undelivered.eventId} pending`, `${undelivered.eventId} succeeded`].sort(),
    );
    // An event of a payment still open, delivered to nobody (its type is not subscribed).
    const openPayment = await insertDirectPayment(db(), tenantId, 9001, { created_at: old, updated_at: old });
    const ofOpenPayment = await dg.record({ tenantId, type: "payment.failed", paymentId: openPayment.id });
    expect(ofOpenPayment.deliveryIds).toEqual([]);
    // IPNs: of a failed payment (handled), of an open one, and one not yet processed.
    const finalPayment = await insertDirectPayment(db(), tenantId, 9002, { state: "failed", created_at: old, updated_at: old });
    await insertIpn(finalPayment.id, "processed", old);
    await insertIpn(finalPayment.id, "rejected", old);
    const ipnOfOpen = await insertIpn(openPayment.id, "processed", old);
    const unprocessed = await insertIpn(finalPayment.id, "received", old);
    // Five minutes of the routing window's counts, on five operators.
    const route = { environment: "sandbox" as const, provider: "providerA", country: "BJ" };
    for (const operator of ["op1", "op2", "op3", "op4", "op5"]) await countFailedAttempt(dg.deps, { ...route, operator });

    // Today.
    clock.offsetMs = 0;
    const recentKey = `new-key-${ulid()}`;
    await createEndpointOverHttp("/ok", recentKey);
    const recent = await dg.record({ tenantId });
    for (const id of recent.deliveryIds) await deliverOnce(dg.deps, id, { attempt: 1 });
    const recentIpn = await insertIpn(finalPayment.id, "processed", dg.deps.now());
    await countFailedAttempt(dg.deps, { ...route, operator: "op1" });
    const attemptsBefore = await db().selectFrom("delivery_attempts").select(["delivery_id"]).execute();

    // Batches of 2, one statement per table: the first two of each, no more.
    const first = await pruneOldRows(dg.deps, { batchSize: 2, maxBatches: 1 });
    expect(first.route_outcomes).toEqual({ pruned: 2, batches: 1, complete: false });
    expect(first.deliveries).toEqual({ pruned: 2, batches: 1, complete: false });
    expect(first.ipn_messages.pruned).toBe(2);

    const rest = await pruneOldRows(dg.deps, { batchSize: 2 });
    expect(rest.route_outcomes).toEqual({ pruned: 3, batches: 2, complete: true });
    expect(rest.deliveries.pruned).toBe(0);
    expect(first.events.pruned + rest.events.pruned).toBe(1);
    expect(first.idempotency_keys.pruned + rest.idempotency_keys.pruned).toBe(2);
    expect(first.delivery_attempts.pruned).toBe(3); // /ok's one and /down's two

    // Gone: the delivered event, its deliveries and their attempts; the handled IPNs of the failed payment; the
    // old minutes; the keys whose 24 hours ended 59 days ago.
    expect(ids(await db().selectFrom("events").select("id").where("tenant_id", "=", tenantId).execute())).toEqual(
      [undelivered.eventId, ofOpenPayment.eventId, recent.eventId].sort(),
    );
    const deliveriesLeft = await db().selectFrom("deliveries").select(["id", "event_id"]).where("tenant_id", "=", tenantId).execute();
    expect(deliveriesLeft.map((d) => d.event_id).sort()).toEqual(
      [undelivered.eventId, undelivered.eventId, ...recent.deliveryIds.map(() => recent.eventId)].sort(),
    );
    const attemptsLeft = await db().selectFrom("delivery_attempts").select("delivery_id").execute();
    expect(attemptsLeft.length).toBe(attemptsBefore.length - 3);
    expect(attemptsLeft.every((a) => deliveriesLeft.some((d) => d.id === a.delivery_id))).toBe(true);
    expect(ids(await db().selectFrom("ipn_messages").select("id").where("tenant_id", "=", tenantId).execute())).toEqual(
      [String(ipnOfOpen), String(unprocessed), String(recentIpn)].sort(),
    );
    const minutes = await db()
      .selectFrom("route_outcomes")
      .select(["operator", "failed"])
      .where("provider", "=", "providerA")
      .where("country", "=", "BJ")
      .execute();
    expect(minutes).toEqual([{ operator: "op1", failed: 1 }]);
    const keysLeft = await db().selectFrom("idempotency_keys").select("key").where("tenant_id", "=", tenantId).execute();
    expect(keysLeft.map((k) => k.key)).toEqual([recentKey]);
    // Never pruned: the endpoints and the payments.
    expect(await db().selectFrom("webhook_endpoints").select("id").where("tenant_id", "=", tenantId).execute()).toHaveLength(3);
    expect(ids(await db().selectFrom("payments").select("id").where("tenant_id", "=", tenantId).execute())).toEqual([openPayment.id, finalPayment.id].sort());

    // The event still being delivered goes once its last delivery is final and its retention over.
    const pending = await db()
      .selectFrom("deliveries")
      .select("id")
      .where("event_id", "=", undelivered.eventId)
      .where("state", "=", "pending")
      .executeTakeFirstOrThrow();
    clock.offsetMs = -60 * DAY + 20_000;
    await deliverOnce(dg.deps, pending.id, { attempt: 2 });
    clock.offsetMs = 0;
    const after = await pruneOldRows(dg.deps);
    expect({ deliveries: after.deliveries.pruned, events: after.events.pruned }).toEqual({ deliveries: 2, events: 1 });
    // Pruning again finds nothing.
    const again = await pruneOldRows(dg.deps);
    expect(Object.values(again).every((table) => table.pruned === 0)).toBe(true);
  }, 60_000);

  it("lets several pruners run at once: each row goes once, none waits for another", async () => {
    clock.offsetMs = -30 * DAY;
    const route = { environment: "live" as const, provider: "providerB", country: "SN" };
    const operators = Array.from({ length: 12 }, (_, i) => `concurrent-${i}`);
    for (const operator of operators) await countFailedAttempt(dg.deps, { ...route, operator });
    clock.offsetMs = 0;
    const reports = await Promise.all([1, 2, 3].map(() => pruneOldRows(dg.deps, { batchSize: 3 })));
    expect(reports.reduce((sum, r) => sum + r.route_outcomes.pruned, 0)).toBe(12);
    expect(await db().selectFrom("route_outcomes").select("operator").where("provider", "=", "providerB").where("country", "=", "SN").execute()).toEqual([]);
  }, 30_000);
  // PGlite is one connection: a transaction left open there would hold up every other statement.
  it.skipIf(!onServerPass)(
    "skips, without waiting, an old event whose delivery another transaction is writing (a replay)",
    async () => {
      clock.offsetMs = -60 * DAY;
      const unsubscribed = await dg.record({ tenantId, type: "payment.failed" });
      expect(unsubscribed.deliveryIds).toEqual([]);
      clock.offsetMs = 0;
      const endpoint = await db()
        .selectFrom("webhook_endpoints")
        .select("id")
        .where("tenant_id", "=", tenantId)
        .where("enabled", "=", true)
        .executeTakeFirstOrThrow();
      await db()
        .transaction()
        .execute(async (tx) => {
          await tx
            .insertInto("deliveries")
            .values({ id: `dlv_${ulid()}`, event_id: unsubscribed.eventId, tenant_id: tenantId, environment: "sandbox", endpoint_id: endpoint.id })
            .execute();
          // Inside that transaction: a pruner that waited for its lock on the event would never return.
          const report = await pruneOldRows(dg.deps);
          expect(report.events.pruned).toBe(0);
        });
      expect(await db().selectFrom("events").select("id").where("id", "=", unsubscribed.eventId).execute()).toHaveLength(1);
      expect((await pruneOldRows(dg.deps)).events.pruned).toBe(0);
    },
    30_000,
  );
});

describe("the periodic pruning", () => {
  it("runs with the sweeper, catches up turn after turn past its batch limit, and counts the rows in passerelle_pruned_rows_total", async () => {
    // Once an hour, one row per statement: 25 old minutes take two runs of at most PERIODIC_MAX_BATCHES statements,
    // the second at the sweeper's next turn rather than an hour later.
    const worker = await startDeliveryGateway({ env: { PRUNE_EVERY_MS: "3600000", PRUNE_BATCH_SIZE: "1" }, workers: { sweepEveryMs: 100 }, start: false });
    try {
      const route = { environment: "sandbox" as const, provider: "providerA", country: "CI" };
      const tenDaysAgo = () => new Date(Date.now() - 10 * DAY);
      const old = Array.from({ length: PERIODIC_MAX_BATCHES + 5 }, (_, i) => `w${i}`);
      for (const operator of old) await countFailedAttempt({ db: worker.deps.db, now: tenDaysAgo }, { ...route, operator });
      await countFailedAttempt(worker.deps, { ...route, operator: "w-now" });
      await worker.startWorkers();
      const registry = (worker.deps.metrics as unknown as { registry: Registry }).registry;
      const exposition = await waitUntil(
        async () => {
          const text = await registry.metrics();
          return text.includes(`passerelle_pruned_rows_total{table="route_outcomes"} ${old.length}`) ? text : undefined;
        },
        { what: "the periodic pruning's counter", timeoutMs: 15_000, intervalMs: 100 },
      );
      expect(exposition).toContain('passerelle_pruned_rows_total{table="events"} 0');
      const left = await worker.deps.db.selectFrom("route_outcomes").select("operator").where("country", "=", "CI").execute();
      expect(left).toEqual([{ operator: "w-now" }]);
      const runs = worker.logs.filter((line) => line.msg === "retention pruned rows past their retention");
      expect(runs.map((line) => [(line.pruned as Record<string, number>).route_outcomes, line.complete])).toEqual([
        [PERIODIC_MAX_BATCHES, false],
        [5, true],
      ]);
    } finally {
      await worker.close();
    }
  }, 30_000);
});

describe("passerelle prune", () => {
  it("prints what it pruned per table and the total, and refuses a bad --batch-size", async () => {
    const MAIN = join(import.meta.dir, "..", "..", "..", "src", "main.ts");
    const { createNamedServerDatabase } = await import("../../support/delivery-gateway.ts");
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { openDatabase } = await import("../../../src/db/connect.ts");
    const { migrateToLatest } = await import("../../../src/db/migrate.ts");
    const serverUrl = process.env.DATABASE_URL;
    const dir = mkdtempSync(join(tmpdir(), "passerelle-prune-"));
    const server = serverUrl ? await createNamedServerDatabase(serverUrl) : undefined;
    const env: Record<string, string> = server ? { DATABASE_URL: server.url } : { DATA_DIR: dir };
    const open = () => (server ? openDatabase({ driver: "postgres", url: server.url }) : openDatabase({ driver: "pglite", dataDir: join(dir, "pglite") }));
    const run = async (...args: string[]) => {
      const child = Bun.spawn(["bun", MAIN, "prune", ...args], {
        env: { ...process.env, ...TEST_ENV, LOG_LEVEL: "error", REDIS_URL: "", ...env },
        stdout: "pipe",
        stderr: "pipe",
      });
      const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
      return { code, stdout, stderr };
    };
    try {
      let handle = await open();
      await migrateToLatest(handle.db);
      const minute = (daysAgo: number) => new Date(Math.floor((Date.now() - daysAgo * DAY) / 60_000) * 60_000);
      await handle.db
        .insertInto("route_outcomes")
        .values([
          { environment: "sandbox", provider: "providerA", operator: "a", country: "BJ", minute: minute(30), failed: 1 },
          { environment: "sandbox", provider: "providerA", operator: "b", country: "BJ", minute: minute(8), failed: 1 },
          { environment: "sandbox", provider: "providerA", operator: "c", country: "BJ", minute: minute(8), succeeded: 1 },
          { environment: "sandbox", provider: "providerA", operator: "a", country: "BJ", minute: minute(0), failed: 1 },
        ])
        .execute();
      // A PGlite data directory is one process's at a time.
      await handle.close();

      const pruned = await run("--batch-size", "2");
      expect(pruned).toMatchObject({ code: 0, stderr: "" });
      const lines = pruned.stdout.trimEnd().split("\n");
      const width = "delivery_attempts".length;
      expect(lines).toContain(`${"route_outcomes".padEnd(width)}  3 pruned in 2 batches`);
      expect(lines).toContain(`${"events".padEnd(width)}  0 pruned in 0 batches`);
      expect(lines.at(-1)).toBe("prune: 3 row(s) pruned");
      expect(lines).toHaveLength(8);

      handle = await open();
      expect(await handle.db.selectFrom("route_outcomes").select("operator").execute()).toEqual([{ operator: "a" }]);
      await handle.close();

      expect((await run()).stdout.trimEnd().split("\n").at(-1)).toBe("prune: 0 row(s) pruned");
      const refused = await run("--batch-size", "0");
      expect(refused.code).toBe(2);
      expect(refused.stderr.split("\n")[0]).toBe('passerelle: --batch-size must be a whole number from 1 to 50000 (got "0")');
    } finally {
      await server?.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  }, 120_000);
});
