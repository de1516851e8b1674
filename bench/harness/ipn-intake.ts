/**
 * The IPN intake (issue 6 point 6, issue 8): how many verified provider B IPNs the gateway stores and
 * answers per second, and how long until the tenant's webhook receiver gets the `payment.completed`
 * each one leads to — against a single-row INSERT loop on the same PostgreSQL.
 *
 * Per round, in set-up (`prepareIpns`):
 * 1. N checkouts are made through the gateway (`POST /providerB/checkout`, the provider B tenant);
 * 2. the harness waits until the last one is 62 s old: each checkout's `providerB-sync` job runs 5, 15,
 *    30 and 60 s after its creation (then every 5 min), and a sync run that found the invoice paid would
 *    record the payment before its IPN — the measurement has to fall in the quiet window after the 60 s run;
 * 3. every invoice is paid at the simulator (`POST /_sim/invoices/{token}/pay`): the simulator posts each
 *    IPN — form-encoded bracket fields, `data[hash]` the SHA-512 of the account's master key — to the
 *    invoice's `callback_url`, which is the receiver's sink (`PUBLIC_BASE_URL`, see `provider-setup.ts`);
 * 4. the harness reads those exact bodies back from the sink.
 *
 * Then the flow driver replays them at `POST /providerB/webhook` (each body once: a replayed body is a
 * duplicate, which the gateway answers without storing) for the warm-up and the measured time, as fast as
 * they are answered; each body's send time is noted, and the receiver notes when the tenant's webhook gets
 * the event of that token. The last bodies are replayed again the same way at a steady
 * {@link PACED_IPNS_PER_S} per second: the time to the webhook with nothing queued ahead.
 */
import { runDriver, type DriverResult, type LoadSettings } from "../load/mod.ts";
import { killOnExit } from "./child-process.ts";
import { Interrupted, type Cleanup } from "./cleanup.ts";
import type { InsertLoopInput, InsertLoopOutput } from "../load/insert-loop.ts";
import { readTransactions, settle, transactionsPerRequest, type Target } from "./measure.ts";
import type { BenchOptions } from "./options.ts";
import { watchCpu, watchProcess } from "./proc-stats.ts";
import type { GatewayApi, ProviderBSetup, ProviderWorld } from "./provider-setup.ts";
import { newRow, type ResultRow } from "./report.ts";
import type { DatabaseStats } from "./scratch-stores.ts";
import type { IpnScenario } from "../scenarios.ts";

const log = (line: string) => process.stderr.write(`${line}\n`);
const INSERT_LOOP = new URL("../load/insert-loop.ts", import.meta.url).pathname;
/** In flight while the set-up makes checkouts and pays invoices. */
const SETUP_CONCURRENCY = 32;
/** The last of the early sync runs of a checkout is 60 s after its creation (`services/checkout/checkout-sync.ts`). */
const LAST_EARLY_SYNC_MS = 60_000;
/** The next one is 6 min after creation: the measurement must end before. */
const NEXT_SYNC_MS = 6 * 60_000;
/** The gateway's database pool (postgres.js's default `max`), which the INSERT loop uses too. */
const GATEWAY_POOL_SIZE = 10;

export interface IpnContext {
  gateway: Target;
  api: GatewayApi;
  world: ProviderWorld;
  setup: ProviderBSetup;
  databaseUrl: string;
  databaseStats: DatabaseStats;
}

/** The IPN bodies of one round, in the order they will be sent. */
export interface PreparedIpns {
  /** The form-encoded bodies, exactly as the simulator posted them. */
  bodies: string[];
  /** `data[invoice][token]` of each body. */
  tokens: string[];
  /** When the first checkout was made (`performance.now()`): the 6-minute sync run comes after it. */
  firstCreatedAt: number;
  /** One IPN's data as JSON, for the INSERT loop's rows. */
  sampleData: Record<string, unknown>;
}

/** Runs `task(i)` for i in [0, n) with `concurrency` in flight. */
async function pool(n: number, concurrency: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, concurrency) }, async () => {
      for (let i = next++; i < n; i = next++) await task(i);
    }),
  );
}

const tokenOf = (body: string) => new URLSearchParams(body).get("data[invoice][token]") ?? "";

/** Nested `data` of a bracket-form body, without the hash: what the gateway stores. */
function dataOf(body: string): Record<string, unknown> {
  const data: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(body)) {
    const path = key.replace(/\]/g, "").split("[");
    if (path[0] !== "data" || path[1] === "hash") continue;
    let at = data;
    for (const part of path.slice(1, -1)) at = (at[part] ??= {}) as Record<string, unknown>;
    at[path.at(-1)!] = value;
  }
  return data;
}

async function sinkCount(receiver: Target): Promise<number> {
  return ((await (await fetch(`${receiver.baseUrl}/sink?count`)).json()) as { count: number }).count;
}

/** Steps 1–4 of the module comment: `count` verified IPN bodies of checkouts the gateway knows, unpaid until now. */
export async function prepareIpns(ctx: IpnContext, count: number, cleanup: Cleanup): Promise<PreparedIpns> {
  const { tenant } = ctx.setup;
  const body = {
    amount: 5000,
    description: "Commande IPN",
    returnUrl: "https://shop.example/merci",
    cancelUrl: "https://shop.example/panier",
    customer: { name: "Awa Diop", email: "awa@example.com", phone: "+221770000000" },
    customData: { orderRef: "ORD-IPN", quantity: 1 },
  };
  const tokens: string[] = [];
  let failures = 0;
  let firstFailure = "";
  const firstCreatedAt = performance.now();
  await pool(count, SETUP_CONCURRENCY, async () => {
    try {
      const answer = await ctx.api.call<{ token: string }>("POST", "/providerB/checkout", { token: tenant.token, tenantId: tenant.id, body });
      tokens.push(answer.token);
    } catch (error) {
      failures++;
      firstFailure ||= error instanceof Error ? error.message : String(error);
    }
  });
  const lastCreatedAt = performance.now();
  if (failures > 0) log(`  ! ${failures} of ${count} set-up checkouts failed; first: ${firstFailure}`);
  if (tokens.length === 0) throw new Error("no checkout could be made for the IPN scenario");
  const wait = lastCreatedAt + LAST_EARLY_SYNC_MS + 2_000 - performance.now();
  log(
    `  ${tokens.length} checkouts made in ${((lastCreatedAt - firstCreatedAt) / 1000).toFixed(1)} s; waiting ${(wait / 1000).toFixed(0)} s for their early sync runs (5, 15, 30, 60 s) to pass`,
  );
  const until = performance.now() + wait;
  while (performance.now() < until) {
    if (cleanup.interrupted) throw new Interrupted();
    await Bun.sleep(Math.min(1_000, Math.max(0, until - performance.now())));
  }
  await settle([ctx.gateway.child.pid, ctx.world.simulators.child.pid]);

  const receiver = ctx.world.receiver;
  await fetch(`${receiver.baseUrl}/__reset-sink`, { method: "POST" });
  const simulator = ctx.world.simulators.providerBUrl;
  let payFailures = 0;
  await pool(tokens.length, SETUP_CONCURRENCY, async (i) => {
    const response = await fetch(`${simulator}/_sim/invoices/${tokens[i]}/pay`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    });
    await response.arrayBuffer();
    if (response.status !== 200) payFailures++;
  });
  if (payFailures > 0) log(`  ! ${payFailures} invoices could not be paid at the simulator`);
  const deadline = performance.now() + 60_000;
  while ((await sinkCount(receiver)) < tokens.length - payFailures && performance.now() < deadline) await Bun.sleep(100);
  const { bodies: sunk } = (await (await fetch(`${receiver.baseUrl}/sink`)).json()) as { bodies: string[] };
  await fetch(`${receiver.baseUrl}/__reset-sink`, { method: "POST" });
  const ours = new Set(tokens);
  const bodies = sunk.filter((b) => ours.has(tokenOf(b)) && new URLSearchParams(b).get("data[status]") === "completed");
  if (bodies.length < tokens.length) log(`  ! the sink got ${bodies.length} IPNs of ${tokens.length} paid invoices`);
  if (bodies.length === 0) throw new Error("the simulator's IPNs never reached the sink");
  return { bodies, tokens: bodies.map(tokenOf), firstCreatedAt, sampleData: dataOf(bodies[0]!) };
}

function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

const summary = (sorted: number[]) => ({
  p50: percentile(sorted, 50),
  p90: percentile(sorted, 90),
  p99: percentile(sorted, 99),
  max: sorted.at(-1) ?? null,
  mean: sorted.length ? sorted.reduce((a, b) => a + b, 0) / sorted.length : null,
});

const IPN_REQUEST = { method: "POST", path: "/providerB/webhook", headers: { "content-type": "application/x-www-form-urlencoded" } };

/** Paced replay: IPNs per second, below what the gateway processes, so that nothing waits ahead of an IPN. */
export const PACED_IPNS_PER_S = 100;
/** Connections of the paced replay (enough for the rate at the intake's latency). */
const PACED_CONNECTIONS = 10;

type Receipt = [path: string, webhookId: string, arrivedAtMs: number, subject?: string];

async function receipts(receiver: Target): Promise<Receipt[]> {
  return ((await (await fetch(`${receiver.baseUrl}/stats`)).json()) as { receipts: Receipt[] }).receipts;
}

/** What one replay measured, up to the last `payment.completed` at the tenant's webhook. */
interface FollowedReplay {
  intake: DriverResult;
  intakeCpuSeconds: number | null;
  intakeRssMb: number | null;
  intakeOthers: ReturnType<ReturnType<typeof watchCpu>["stop"]>;
  /** Gateway CPU from the start of the replay to the last delivery. */
  totalCpuSeconds: number | null;
  webhook: NonNullable<ResultRow["load"]>;
  delivered: number;
  transactionsPerIpn: number | null;
}

/**
 * Replays `bodies` (tokens `tokens`) at the gateway — as fast as answers come, or at `ratePerS` — then
 * waits until the tenant's webhook got the event of every IPN answered 200, and times each one.
 */
async function replayAndFollow(ctx: IpnContext, bodies: string[], tokens: string[], settings: LoadSettings, ratePerS?: number): Promise<FollowedReplay> {
  const gatewayPid = ctx.gateway.child.pid;
  const receiver = ctx.world.receiver;
  await fetch(`${receiver.baseUrl}/__reset`, { method: "POST" });
  const transactionsBefore = await readTransactions(ctx.databaseStats, ctx.gateway.baseUrl);
  const watch = watchProcess(gatewayPid);
  const others = watchCpu({ simulators: ctx.world.simulators.child.pid });
  let intake: DriverResult;
  let intakeCpuSeconds: number | null;
  let intakeRssMb: number | null;
  try {
    intake = await runDriver(ctx.gateway.baseUrl, { flow: "replay", request: IPN_REQUEST, bodies, ...(ratePerS ? { ratePerS } : {}) }, settings);
  } finally {
    ({ maxRssMb: intakeRssMb, cpuSeconds: intakeCpuSeconds } = watch.stop());
  }
  const intakeOthers = others.stop();

  // Every IPN answered 200 leads to one payment.completed at the tenant's webhook.
  const sent = intake.sent ?? [];
  const startedAt = sent.length > 0 ? Math.min(...sent.map((s) => s[1])) : 0;
  const sentAt = new Map<string, number>();
  for (const [index, at, status] of sent) if (status === 200) sentAt.set(tokens[index]!, at);
  const expected = sentAt.size;
  const waitWatch = watchProcess(gatewayPid);
  const deadline = performance.now() + Math.max(60_000, expected * 10);
  let got = await receipts(receiver);
  while (performance.now() < deadline && new Set(got.map((r) => r[3])).size < expected) {
    await Bun.sleep(100);
    got = await receipts(receiver);
  }
  await Bun.sleep(300); // anything late or duplicated shows up too
  got = await receipts(receiver);
  const { cpuSeconds: waitCpuSeconds } = waitWatch.stop();
  const transactionsAfter = await readTransactions(ctx.databaseStats, ctx.gateway.baseUrl);

  const seen = new Set<string>();
  let duplicates = 0;
  const latencies: number[] = [];
  let lastArrival = 0;
  for (const [, , at, subject] of got) {
    if (!subject || !sentAt.has(subject)) continue;
    if (seen.has(subject)) {
      duplicates++;
      continue;
    }
    seen.add(subject);
    latencies.push(at - sentAt.get(subject)!);
    lastArrival = Math.max(lastArrival, at);
  }
  latencies.sort((a, b) => a - b);
  const missing = expected - seen.size;
  const spanS = Math.max(0, (lastArrival - startedAt) / 1000);
  return {
    intake,
    intakeCpuSeconds,
    intakeRssMb,
    intakeOthers,
    totalCpuSeconds: intakeCpuSeconds !== null && waitCpuSeconds !== null ? intakeCpuSeconds + waitCpuSeconds : null,
    webhook: {
      requests: latencies.length,
      requestsPerSecond: spanS > 0 ? seen.size / spanS : 0,
      latencyMs: summary(latencies),
      errors: missing + duplicates,
      badStatus: duplicates,
      networkErrors: missing,
      durationS: spanS,
    },
    delivered: seen.size,
    // Transactions per IPN over its whole life: intake, ipn job, delivery (and whatever else ran meanwhile).
    transactionsPerIpn: transactionsPerRequest(transactionsBefore, transactionsAfter, expected),
  };
}

/** How many of the prepared bodies the paced row takes (the rest goes to the warm-up and the burst). */
export function pacedShare(options: BenchOptions): number {
  return Math.ceil(PACED_IPNS_PER_S * options.durationS);
}

/**
 * The rows of one round: the intake (a burst, as fast as the answers come: IPNs stored and answered per
 * second), its IPN → webhook times (the backlog included when the intake outruns the processing), and
 * the IPN → webhook times at a steady {@link PACED_IPNS_PER_S} (nothing queued ahead).
 */
export async function measureIpnIntake(
  scenario: IpnScenario,
  ctx: IpnContext,
  prepared: PreparedIpns,
  options: BenchOptions,
  cleanup: Cleanup,
): Promise<[ResultRow, ResultRow, ResultRow]> {
  const intake = newRow({
    name: scenario.name,
    kind: "scenario",
    reference: scenario.reference,
    request: { method: "POST", path: "/providerB/webhook" },
    measures: scenario.measures,
  });
  const webhook = newRow({
    name: scenario.webhookName,
    kind: "scenario",
    reference: null,
    request: { method: "POST", path: "/subject/ipn (tenant webhook)" },
    measures: scenario.webhookMeasures,
  });
  const paced = newRow({
    name: `${scenario.webhookName}, at ${PACED_IPNS_PER_S} IPNs/s`,
    kind: "scenario",
    reference: null,
    request: { method: "POST", path: "/subject/ipn (tenant webhook)" },
    measures: `the same, with the IPNs posted at a steady ${PACED_IPNS_PER_S}/s, below what the gateway processes: the latency of an IPN with nothing queued ahead of it (its rate is its setting: no ratio)`,
  });
  const settings: LoadSettings = { connections: options.connections, durationS: options.durationS, threads: 1, timeoutS: 5 };
  const quiet = [ctx.gateway.child.pid, ctx.world.simulators.child.pid];
  const rowOf = (row: ResultRow, followed: FollowedReplay, which: "intake" | "webhook", quietWaitMs: number | null) => {
    const cpu = which === "intake" ? followed.intakeCpuSeconds : followed.totalCpuSeconds;
    const load = which === "intake" ? (({ sent: _sent, ...rest }) => rest)(followed.intake) : followed.webhook;
    const count = which === "intake" ? load.requests : followed.delivered;
    row.load = load;
    row.serverRssMb = followed.intakeRssMb;
    if (cpu !== null && count > 0 && load.durationS > 0) row.serverCpu = { cores: cpu / load.durationS, microsecondsPerRequest: (cpu * 1e6) / count };
    row.costs = {
      simulatorsCores: which === "intake" ? (followed.intakeOthers.processes.simulators ?? null) : null,
      machineCores: which === "intake" ? followed.intakeOthers.machineCores : null,
      dbTransactionsPerRequest: followed.transactionsPerIpn,
      quietWaitMs,
    };
  };
  const describe = (label: string, followed: FollowedReplay) => {
    const w = followed.webhook;
    log(
      `  ${label}: ${followed.delivered} delivered, ${Math.round(w.requestsPerSecond)}/s over the batch, p50 ${w.latencyMs.p50?.toFixed(1)} ms, p99 ${w.latencyMs.p99?.toFixed(1)} ms` +
        (followed.totalCpuSeconds !== null && followed.delivered > 0
          ? `, gateway ${((followed.totalCpuSeconds * 1e6) / followed.delivered).toFixed(0)} µs CPU per IPN end to end`
          : "") +
        (followed.transactionsPerIpn !== null ? `, ${followed.transactionsPerIpn.toFixed(2)} DB transactions per IPN end to end` : ""),
    );
    if (w.errors > 0) log(`  ! ${w.networkErrors} events missing at the tenant's webhook, ${w.badStatus} duplicated`);
  };
  try {
    const quietWaitMs = await settle(quiet);
    // The probe is the first IPN; the paced row takes the last ones; the warm-up a tenth of the rest (at
    // most its time); the burst what remains.
    const probe = await fetch(`${ctx.gateway.baseUrl}/providerB/webhook`, { method: "POST", headers: IPN_REQUEST.headers, body: prepared.bodies[0]! });
    intake.probe = { status: probe.status, body: (await probe.text()).slice(0, 300) };
    if (probe.status !== 200) log(`  ! the probe IPN answered ${probe.status}: ${intake.probe.body}`);
    const total = prepared.bodies.length;
    const pacedCount = Math.min(pacedShare(options), Math.floor((total - 1) / 3));
    const burstEnd = total - pacedCount;
    const warmCount = Math.min(Math.floor((burstEnd - 1) / 10), 2_000);
    if (options.warmupS > 0 && warmCount > 0)
      await runDriver(
        ctx.gateway.baseUrl,
        { flow: "replay", request: IPN_REQUEST, bodies: prepared.bodies.slice(1, 1 + warmCount) },
        { ...settings, durationS: options.warmupS },
      );
    // The warm-up's IPNs are processed and delivered before the measured ones start.
    await settle(quiet);
    if (cleanup.interrupted) throw new Interrupted();
    const msLeft = prepared.firstCreatedAt + NEXT_SYNC_MS - performance.now() - 10_000 - options.durationS * 1000;
    if (msLeft < settings.durationS * 1000)
      log(`  ! only ${(msLeft / 1000).toFixed(0)} s left before the checkouts' 6-minute sync run: the burst is cut to that`);
    const burst = await replayAndFollow(ctx, prepared.bodies.slice(1 + warmCount, burstEnd), prepared.tokens.slice(1 + warmCount, burstEnd), {
      ...settings,
      durationS: Math.max(1, Math.min(settings.durationS, msLeft / 1000)),
    });
    rowOf(intake, burst, "intake", quietWaitMs);
    rowOf(webhook, burst, "webhook", null);
    const load = intake.load!;
    log(
      `  ${Math.round(load.requestsPerSecond)} IPNs/s, p50 ${load.latencyMs.p50?.toFixed(2)} ms, p99 ${load.latencyMs.p99?.toFixed(2)} ms` +
        (intake.serverCpu ? `, gateway ${intake.serverCpu.cores.toFixed(2)} cores, ${intake.serverCpu.microsecondsPerRequest.toFixed(0)} µs CPU/IPN` : "") +
        (intake.costs?.simulatorsCores != null ? `, simulators ${intake.costs.simulatorsCores.toFixed(2)} cores` : "") +
        (intake.costs?.machineCores != null ? `, machine ${intake.costs.machineCores.toFixed(2)} cores` : ""),
    );
    if (load.errors > 0) log(`  ! ${load.errors} errors: ${load.badStatus} bad status, ${load.networkErrors} network — first: ${burst.intake.firstFailure}`);
    if ((burst.intake.sent?.length ?? 0) >= burstEnd - 1 - warmCount && load.durationS < settings.durationS * 0.98)
      log(`  ! the prepared IPNs ran out after ${load.durationS.toFixed(1)} s of the burst (raise --ipns)`);
    describe(scenario.webhookName, burst);

    log(`bench: ${paced.name}`);
    const pacedQuiet = await settle(quiet);
    if (cleanup.interrupted) throw new Interrupted();
    const steady = await replayAndFollow(
      ctx,
      prepared.bodies.slice(burstEnd),
      prepared.tokens.slice(burstEnd),
      { ...settings, connections: PACED_CONNECTIONS, durationS: settings.durationS + 5 },
      PACED_IPNS_PER_S,
    );
    rowOf(paced, steady, "webhook", pacedQuiet);
    log(
      `  intake at ${PACED_IPNS_PER_S}/s: p50 ${steady.intake.latencyMs.p50?.toFixed(2)} ms, p99 ${steady.intake.latencyMs.p99?.toFixed(2)} ms, ${steady.intake.errors} errors`,
    );
    describe(paced.name, steady);
  } catch (error) {
    if (error instanceof Interrupted) throw error;
    intake.failure = error instanceof Error ? error.message : String(error);
    log(`  ! ${intake.name}: ${intake.failure}`);
  }
  if (ctx.gateway.child.hasExited()) intake.failure = "the gateway exited during the IPN intake";
  return [intake, webhook, paced];
}

/** The reference: single-row INSERTs of the same data for the measured time, in the INSERT loop's own process. */
export async function measureInsertReference(
  scenario: IpnScenario,
  ctx: IpnContext,
  sampleData: Record<string, unknown>,
  options: BenchOptions,
): Promise<ResultRow> {
  const row = newRow({
    name: scenario.reference,
    kind: "reference",
    reference: null,
    request: { method: "SQL", path: "INSERT INTO <copy of ipn_messages> … RETURNING id" },
    measures: scenario.referenceMeasures,
  });
  try {
    row.costs = {
      simulatorsCores: null,
      machineCores: null,
      dbTransactionsPerRequest: 1,
      quietWaitMs: await settle([ctx.gateway.child.pid, ctx.world.simulators.child.pid]),
    };
    const input: InsertLoopInput = {
      databaseUrl: ctx.databaseUrl,
      durationMs: options.durationS * 1000,
      warmupMs: options.warmupS * 1000,
      concurrency: options.connections,
      poolSize: GATEWAY_POOL_SIZE,
      body: sampleData,
    };
    const proc = killOnExit(Bun.spawn([process.execPath, INSERT_LOOP, JSON.stringify(input)], { stdout: "pipe", stderr: "pipe" }));
    const cpu = watchCpu({});
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    row.costs.machineCores = cpu.stop().machineCores;
    if (code !== 0) throw new Error(`the INSERT loop exited with ${code}: ${stderr.trim()}`);
    const out = JSON.parse(stdout) as InsertLoopOutput;
    const durationS = out.durationMs / 1000;
    row.load = {
      requests: out.requests,
      requestsPerSecond: out.requests / durationS,
      latencyMs: out.latencyMs,
      errors: out.errors,
      badStatus: out.errors,
      networkErrors: 0,
      durationS,
    };
    log(`  ${Math.round(row.load.requestsPerSecond)} rows/s, p50 ${row.load.latencyMs.p50?.toFixed(2)} ms, p99 ${row.load.latencyMs.p99?.toFixed(2)} ms`);
    if (out.errors > 0) log(`  ! ${out.errors} INSERTs failed; first: ${out.firstError}`);
  } catch (error) {
    row.failure = error instanceof Error ? error.message : String(error);
    log(`  ! ${row.name}: ${row.failure}`);
  }
  return row;
}
