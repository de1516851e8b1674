/**
 * The fan-out scenario (issue 4 point 7): N events for one tenant with E endpoints that all point at a
 * local receiver, delivered by the running gateway's workers (PostgreSQL + Redis, as in production).
 * Measured end to end, per delivery, from the moment its event's transaction committed to the moment
 * the 2xx-answering receiver got it: deliveries per second over the whole batch, and p50/p99 latency.
 *
 * The events are recorded by this harness the way a payment service records them — `recordEvent` in a
 * transaction of its own on the gateway's database, then `scheduleDeliveries` on the gateway's queue —
 * from 8 producers at once. Either as fast as the database takes them — a burst: the rate is the
 * engine's throughput and the latencies include the backlog (a p99 near the batch's duration is
 * expected) — or at a steady rate below that (`eventsPerSecond`), where the latencies are the path's own.
 *
 * Its reference is a plain `fetch` loop (`load/fetch-loop.ts`, its own process) sending as many
 * requests of the same size to the same receiver with as many in flight as the gateway's delivery concurrency (100).
 */
import pino from "pino";
import { openDatabase } from "../../src/db/connect.ts";
import { createBullmqQueue } from "../../src/jobs/bullmq.ts";
import { DEFAULT_WEBHOOK_CONCURRENCY } from "../../src/workers/mod.ts";
import { recordEvent } from "../../src/services/events/record-event.ts";
import { scheduleDeliveries } from "../../src/services/webhooks/schedule-deliveries.ts";
import { killOnExit } from "./child-process.ts";
import type { Target } from "./measure.ts";
import { watchProcess } from "./proc-stats.ts";
import { newRow, type ResultRow } from "./report.ts";
import type { FetchLoopInput, FetchLoopOutput } from "../load/fetch-loop.ts";
import type { QueueFloorInput } from "../load/queue-floor.ts";
import type { FanoutScenario } from "../scenarios.ts";

const log = (line: string) => process.stderr.write(`${line}\n`);
const wallNow = () => performance.timeOrigin + performance.now();
const PRODUCERS = 8;
/** The gateway's default delivery concurrency (`registerWorkers`), which the reference matches. */
const DELIVERY_CONCURRENCY = DEFAULT_WEBHOOK_CONCURRENCY;
const FETCH_LOOP = new URL("../load/fetch-loop.ts", import.meta.url).pathname;
const QUEUE_FLOOR = new URL("../load/queue-floor.ts", import.meta.url).pathname;

/** A payment.completed `data` of a realistic size. */
function eventData(i: number) {
  return {
    paymentId: `pay_01JBENCH${String(i).padStart(18, "0")}`,
    provider: "providerB",
    kind: "checkout",
    providerTransactionId: `test_${i.toString(36).padStart(10, "x")}`,
    reference: null,
    status: "completed",
    amount: 5000,
    currency: "XOF",
    description: "Commande 1234 — 2 articles",
    customer: { name: "Awa Koné", phone: "+22997000000" },
    customData: { orderId: `ord_${i}`, channel: "web" },
    paymentMethod: "mnoB",
    receiptUrl: "https://example.com/receipts/abc",
  };
}

/** What the fan-out needs from the run: the gateway (URL, process, environment) and the receiver. */
export interface FanoutContext {
  gateway: Target;
  gatewayEnv: Record<string, string>;
  adminToken: string;
  receiver: Target;
}

/** The tenant and endpoints a fan-out sends to, created once per run through the REST API. */
export interface FanoutSetup {
  tenantId: string;
  endpoints: number;
}

async function api(ctx: FanoutContext, path: string, body: unknown, tenantId?: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${ctx.gateway.baseUrl}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${ctx.adminToken}`, "content-type": "application/json", ...(tenantId ? { "x-tenant-id": tenantId } : {}) },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200 && response.status !== 201) throw new Error(`bench: POST ${path} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** Creates the tenant and its `endpoints` webhook endpoints at the receiver (`/e1`, `/e2`, …). */
export async function setUpFanout(ctx: FanoutContext, endpoints: number): Promise<FanoutSetup> {
  const created = await api(ctx, "/tenants", { name: "bench fan-out" });
  const tenantId = (created.tenant as { id: string }).id;
  for (let i = 1; i <= endpoints; i++) await api(ctx, "/webhooks", { url: `${ctx.receiver.baseUrl}/e${i}`, description: `bench ${i}` }, tenantId);
  return { tenantId, endpoints };
}

async function receiverCount(receiver: Target): Promise<number> {
  return ((await (await fetch(`${receiver.baseUrl}/stats?count`)).json()) as { count: number }).count;
}

async function resetReceiver(receiver: Target): Promise<void> {
  await fetch(`${receiver.baseUrl}/__reset`, { method: "POST" });
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/**
 * Records `events` events from {@link PRODUCERS} producers — as fast as they go, or, with `ratePerS`,
 * each event started at its slot of a steady rate — and resolves with each event's commit time.
 */
async function produce(ctx: FanoutContext, setup: FanoutSetup, events: number, offset: number, ratePerS?: number): Promise<Map<string, number>> {
  const env = ctx.gatewayEnv;
  const database = await openDatabase({ driver: "postgres", url: env.DATABASE_URL!, max: PRODUCERS });
  const logger = pino({ level: "warn" }, pino.destination(2));
  const queue = createBullmqQueue({ redisUrl: env.REDIS_URL!, prefix: env.QUEUE_PREFIX!, logger });
  const committed = new Map<string, number>();
  try {
    let next = 0;
    const startedAt = performance.now();
    const producer = async () => {
      while (next < events) {
        const slot = next++;
        const i = offset + slot;
        if (ratePerS) {
          const wait = startedAt + (slot * 1000) / ratePerS - performance.now();
          if (wait > 0) await Bun.sleep(wait);
        }
        const recorded = await database.db
          .transaction()
          .execute((tx) => recordEvent(tx, new Date(), { tenantId: setup.tenantId, environment: "sandbox", type: "payment.completed", data: eventData(i) }));
        committed.set(recorded.eventId, wallNow());
        await scheduleDeliveries({ queue, logger }, recorded.deliveryIds);
      }
    };
    await Promise.all(Array.from({ length: PRODUCERS }, producer));
  } finally {
    await queue.close();
    await database.close();
  }
  return committed;
}

async function waitForDeliveries(receiver: Target, expected: number, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  let count = 0;
  while (performance.now() < deadline) {
    count = await receiverCount(receiver);
    if (count >= expected) return count;
    await Bun.sleep(25);
  }
  return count;
}

function emptyRow(kind: ResultRow["kind"], name: string, measures: string, reference: string | null): ResultRow {
  return newRow({
    name,
    kind,
    reference,
    request: { method: "POST", path: kind === "reference" ? "/ref (plain fetch)" : "/e1…/eN (webhook deliveries)" },
    measures,
  });
}

/** One measured fan-out: a warm-up batch, then `scenario.events` events; the row of the table. */
export async function measureFanout(scenario: FanoutScenario, ctx: FanoutContext, setup: FanoutSetup, round: number): Promise<ResultRow> {
  const row = emptyRow("scenario", scenario.name, scenario.measures, scenario.reference);
  const perEvent = setup.endpoints;
  try {
    await resetReceiver(ctx.receiver);
    const warmup = Math.min(100, scenario.events);
    await produce(ctx, setup, warmup, round * 1_000_000);
    if ((await waitForDeliveries(ctx.receiver, warmup * perEvent, 30_000)) < warmup * perEvent)
      throw new Error("the warm-up deliveries did not all arrive within 30 s");
    await Bun.sleep(200);
    await resetReceiver(ctx.receiver);

    const expected = scenario.events * perEvent;
    const watch = watchProcess(ctx.gateway.child.pid);
    let cpuSeconds: number | null = null;
    let committed: Map<string, number>;
    try {
      committed = await produce(ctx, setup, scenario.events, round * 1_000_000 + warmup, scenario.eventsPerSecond);
      await waitForDeliveries(ctx.receiver, expected, Math.max(60_000, expected * 10));
    } finally {
      ({ maxRssMb: row.serverRssMb, cpuSeconds } = watch.stop());
    }
    await Bun.sleep(300); // anything late or duplicated shows up too
    const { receipts } = (await (await fetch(`${ctx.receiver.baseUrl}/stats`)).json()) as { receipts: [string, string, number][] };
    const seen = new Set<string>();
    let duplicates = 0;
    const latencies: number[] = [];
    for (const [path, id, at] of receipts) {
      const key = `${path} ${id}`;
      if (seen.has(key)) duplicates++;
      seen.add(key);
      const start = committed.get(id);
      if (start !== undefined) latencies.push(at - start);
    }
    latencies.sort((a, b) => a - b);
    const first = Math.min(...committed.values());
    const last = Math.max(...receipts.map((r) => r[2]));
    const durationS = (last - first) / 1000;
    const missing = expected - seen.size;
    row.load = {
      requests: latencies.length,
      requestsPerSecond: seen.size / durationS,
      latencyMs: {
        p50: percentile(latencies, 50),
        p90: percentile(latencies, 90),
        p99: percentile(latencies, 99),
        max: latencies.at(-1) ?? null,
        mean: latencies.length ? latencies.reduce((a, b) => a + b, 0) / latencies.length : null,
      },
      errors: missing + duplicates,
      badStatus: duplicates,
      networkErrors: missing,
      durationS,
    };
    if (cpuSeconds !== null && seen.size > 0) row.serverCpu = { cores: cpuSeconds / durationS, microsecondsPerRequest: (cpuSeconds * 1e6) / seen.size };
    log(
      `  ${Math.round(row.load.requestsPerSecond)} deliveries/s, p50 ${row.load.latencyMs.p50?.toFixed(1)} ms, p99 ${row.load.latencyMs.p99?.toFixed(1)} ms` +
        (row.serverCpu ? `, gateway ${row.serverCpu.cores.toFixed(2)} cores, ${row.serverCpu.microsecondsPerRequest.toFixed(0)} µs CPU/delivery` : ""),
    );
    if (missing > 0 || duplicates > 0) log(`  ! ${missing} deliveries missing, ${duplicates} duplicated`);
  } catch (error) {
    row.failure = error instanceof Error ? error.message : String(error);
    log(`  ! ${row.name}: ${row.failure}`);
  }
  return row;
}

/** The reference: the same number of requests from a plain fetch loop with the gateway's delivery concurrency in flight. */
export async function measureFetchReference(scenario: FanoutScenario, ctx: FanoutContext, endpoints: number): Promise<ResultRow> {
  const row = emptyRow(
    "reference",
    scenario.reference,
    `a plain fetch loop (own process), ${DELIVERY_CONCURRENCY} requests in flight, same body size, same receiver`,
    null,
  );
  return measureLoop(row, FETCH_LOOP, { ...loopInput(ctx, scenario.events * endpoints), url: `${ctx.receiver.baseUrl}/ref` }, ctx);
}

/** The fan-out's floor: one BullMQ job per POST (`load/queue-floor.ts`), no database, lease or signing. */
export const QUEUE_FLOOR_NAME = "floor: a BullMQ job per POST, no database (contract §8's least)";

/**
 * Measures {@link QUEUE_FLOOR_NAME} against the fetch loop: the same POSTs, each one job on the run's
 * Redis (its prefix), added by as many producer loops as the fan-out has adds in flight and run by a
 * worker process with the gateway's concurrency.
 */
export async function measureQueueFloor(scenario: FanoutScenario, ctx: FanoutContext, endpoints: number): Promise<ResultRow> {
  const row = emptyRow(
    "scenario",
    QUEUE_FLOOR_NAME,
    `${PRODUCERS * endpoints} producer loops and a worker process (${DELIVERY_CONCURRENCY} at once), one BullMQ job per POST, same receiver`,
    scenario.reference,
  );
  row.request.path = "/floor (one BullMQ job per POST)";
  const input: QueueFloorInput = {
    ...loopInput(ctx, scenario.events * endpoints),
    url: `${ctx.receiver.baseUrl}/floor`,
    redisUrl: ctx.gatewayEnv.REDIS_URL!,
    prefix: ctx.gatewayEnv.QUEUE_PREFIX!,
    // As many adds in flight as the fan-out's producers have: 8 events at once, one add per endpoint each.
    producers: PRODUCERS * endpoints,
  };
  return measureLoop(row, QUEUE_FLOOR, input, ctx);
}

/** The POSTs of the fetch loop and the floor: webhook-sized, with the three signature headers. */
function loopInput(ctx: FanoutContext, total: number): FetchLoopInput {
  const body = JSON.stringify({
    id: "evt_01JBENCH000000000000000000",
    type: "payment.completed",
    createdAt: new Date().toISOString(),
    tenantId: "ten_01JBENCH000000000000000000",
    environment: "sandbox",
    data: eventData(1),
  });
  return {
    url: ctx.receiver.baseUrl,
    total,
    concurrency: DELIVERY_CONCURRENCY,
    headers: { "content-type": "application/json", "webhook-id": "evt_ref", "webhook-timestamp": "0", "webhook-signature": `v1,${"A".repeat(43)}=` },
    body,
    timeoutMs: 15_000,
  };
}

/** Runs `script` with `input` once as a warm-up (400 requests at most), then measured, into `row`. */
async function measureLoop(row: ResultRow, script: string, input: FetchLoopInput, ctx: FanoutContext): Promise<ResultRow> {
  try {
    const run = async (total: number) => {
      const proc = killOnExit(Bun.spawn([process.execPath, script, JSON.stringify({ ...input, total })], { stdout: "pipe", stderr: "pipe" }));
      const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
      if (code !== 0) throw new Error(`${script} exited with ${code}: ${stderr.trim()}`);
      return JSON.parse(stdout) as FetchLoopOutput;
    };
    await run(Math.min(400, input.total)); // warm-up
    await resetReceiver(ctx.receiver);
    const out = await run(input.total);
    await resetReceiver(ctx.receiver);
    const sorted = out.latenciesMs;
    row.load = {
      requests: out.requests,
      requestsPerSecond: out.requests / (out.durationMs / 1000),
      latencyMs: {
        p50: percentile(sorted, 50),
        p90: percentile(sorted, 90),
        p99: percentile(sorted, 99),
        max: sorted.at(-1) ?? null,
        mean: sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : null,
      },
      errors: out.errors,
      badStatus: 0,
      networkErrors: out.errors,
      durationS: out.durationMs / 1000,
    };
    log(`  ${Math.round(row.load.requestsPerSecond)} requests/s, p50 ${row.load.latencyMs.p50?.toFixed(2)} ms, p99 ${row.load.latencyMs.p99?.toFixed(2)} ms`);
  } catch (error) {
    row.failure = error instanceof Error ? error.message : String(error);
    log(`  ! ${row.name}: ${row.failure}`);
  }
  return row;
}
