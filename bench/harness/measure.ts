/**
 * One measurement: a wait for the previous rows' background work to end, a probe request, a warm-up,
 * then the measured load with the server process watched (RSS sampled every 200 ms, CPU time over the
 * run), and beside it the simulators' and the machine's CPU and the database's transactions. A failure
 * becomes the row's `failure`, not a throw, so one broken scenario does not hide the others — except an
 * interruption, which stops the run.
 */
import { indent, type ChildServer } from "./child-process.ts";
import { Interrupted, type Cleanup } from "./cleanup.ts";
import { runDriver, runLoad, type Generator, type LoadResult, type LoadSettings } from "../load/mod.ts";
import type { Flow } from "../load/flow-driver.ts";
import type { BenchOptions } from "./options.ts";
import { readCpuSeconds, waitForQuiet, watchCpu, watchProcess } from "./proc-stats.ts";
import { newRow, type ResultRow, type RowCosts } from "./report.ts";
import type { DatabaseStats } from "./scratch-stores.ts";
import type { BenchRequest } from "../scenarios.ts";

const log = (line: string) => process.stderr.write(`${line}\n`);

/** Sends the request once, so the report shows what the load gets (a 401 under load is a bench bug). */
async function probe(baseUrl: string, request: BenchRequest): Promise<NonNullable<ResultRow["probe"]>> {
  try {
    const response = await fetch(`${baseUrl}${request.path}`, {
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      signal: AbortSignal.timeout(5_000),
    });
    return { status: response.status, body: (await response.text()).slice(0, 300) };
  } catch (error) {
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

/** The server a measurement loads: its address, and its process (watched, and checked for an early exit). */
export interface Target {
  baseUrl: string;
  child: ChildServer;
}

/** What to measure: a reference (`reference: null`) or a scenario, with its placeholders already filled. */
export interface MeasureEntry {
  name: string;
  kind: ResultRow["kind"];
  reference: string | null;
  measures: string;
  /** The request the probe sends (and the load, unless `flow` is given). */
  request: BenchRequest;
  /** Load with `load/flow-driver.ts` running this flow rather than with the run's generator. */
  flow?: Flow;
}

/** What a measurement watches besides the loaded server. */
export interface Surroundings {
  /** The `passerelle sandbox` process, whose CPU goes into the row's costs. */
  simulatorsPid?: number;
  /** The scratch database's counters: transactions per request (with `gatewayUrl`, to flush them). */
  databaseStats?: DatabaseStats;
  gatewayUrl?: string;
  /** Processes whose background work must end before the row starts (the gateway, the simulators). */
  quietPids?: number[];
}

/** `GET /health/ready` calls sent at once to make the gateway's database connections report their counters. */
const POKES = 40;

/**
 * The scratch database's transaction count, up to date. PostgreSQL backends report their counters when
 * they go idle, but at most once a second — a backend that went idle within a second of its last report
 * waits up to 10 s — so: wait a second, make every connection of the gateway's pool run one `select 1`
 * (`/health/ready`, {@link POKES} at once) so that each reports on going idle, then read. The pokes' own
 * transactions are subtracted by the caller (they are in the reading after, not before).
 */
export async function readTransactions(stats: DatabaseStats, gatewayUrl: string): Promise<number> {
  await Bun.sleep(1_100);
  await Promise.all(
    Array.from({ length: POKES }, () =>
      fetch(`${gatewayUrl}/health/ready`).then(
        (r) => r.arrayBuffer(),
        () => undefined,
      ),
    ),
  );
  await Bun.sleep(200);
  return stats.transactions();
}

/** The transactions per request between two {@link readTransactions} (the second one's pokes taken off). */
export function transactionsPerRequest(before: number, after: number, requests: number): number | null {
  return requests > 0 && Number.isFinite(before) && Number.isFinite(after) ? Math.max(0, after - before - POKES) / requests : null;
}

/** CPU seconds used so far by each of the scratch database's backends (by pid; a backend `/proc` cannot read is left out). */
async function readBackendCpu(stats: DatabaseStats): Promise<Map<number, number>> {
  const cpu = new Map<number, number>();
  for (const pid of await stats.backendPids()) {
    const seconds = readCpuSeconds(pid);
    if (seconds !== null) cpu.set(pid, seconds);
  }
  return cpu;
}

/**
 * The backends' CPU between two {@link readBackendCpu}, in µs per request: a backend that connected in
 * between counts from its start; one that ended in between is lost (the gateway's pool keeps its connections).
 */
function backendCpuPerRequest(before: Map<number, number>, after: Map<number, number>, requests: number): number | null {
  if (requests <= 0 || after.size === 0) return null;
  let seconds = 0;
  for (const [pid, now] of after) seconds += now - (before.get(pid) ?? 0);
  return (seconds * 1e6) / requests;
}

/** How long the harness waits at most for the previous rows' background work before measuring anyway. */
const QUIET_MAX_MS = 90_000;

/** Waits for `pids` to go quiet; logs when that took long or never happened. */
export async function settle(pids: number[] | undefined): Promise<number | null> {
  if (!pids || pids.length === 0) return null;
  const { waitedMs, quiet } = await waitForQuiet(pids, { maxMs: QUIET_MAX_MS });
  if (!quiet) log(`  ! the gateway or the simulators were still busy after ${QUIET_MAX_MS / 1000} s; measuring anyway`);
  else if (waitedMs > 2_000) log(`  (waited ${(waitedMs / 1000).toFixed(1)} s for the previous rows' background work to end)`);
  return waitedMs;
}

/** Probes, warms up and loads `target` with `entry`; resolves with the row (ratio left to the caller). */
export async function measure(
  entry: MeasureEntry,
  target: Target,
  generator: Generator,
  options: BenchOptions,
  cleanup: Cleanup,
  around: Surroundings = {},
): Promise<ResultRow> {
  const { kind } = entry;
  const row = newRow({
    name: entry.name,
    kind,
    reference: entry.reference,
    request: { method: entry.request.method, path: entry.request.path },
    measures: entry.measures,
  });
  const settings: LoadSettings = { connections: options.connections, durationS: options.durationS, threads: options.threads, timeoutS: 5 };
  const load = (s: LoadSettings): Promise<LoadResult> =>
    entry.flow ? runDriver(target.baseUrl, entry.flow, s) : runLoad(generator, target.baseUrl, entry.request, s);
  try {
    const quietWaitMs = await settle(around.quietPids);
    const probed = await probe(target.baseUrl, entry.request);
    row.probe = probed;
    if ("error" in probed) log(`  ! the probe request failed: ${probed.error}`);
    else if (probed.status < 200 || probed.status > 299)
      log(`  ! the probe request answered ${probed.status}: ${probed.body} — every request of the load will count as an error`);
    if (options.warmupS > 0) await load({ ...settings, durationS: options.warmupS });
    if (cleanup.interrupted) throw new Interrupted();
    const stats = around.databaseStats && around.gatewayUrl ? { counters: around.databaseStats, gatewayUrl: around.gatewayUrl } : undefined;
    const transactionsBefore = stats ? await readTransactions(stats.counters, stats.gatewayUrl) : null;
    const backendsBefore = around.databaseStats ? await readBackendCpu(around.databaseStats) : null;
    const watch = watchProcess(target.child.pid);
    const others = watchCpu(around.simulatorsPid ? { simulators: around.simulatorsPid } : {});
    let cpuSeconds: number | null = null;
    let otherCpu: ReturnType<ReturnType<typeof watchCpu>["stop"]>;
    try {
      row.load = await load(settings);
      if (cleanup.interrupted) throw new Interrupted();
    } finally {
      ({ maxRssMb: row.serverRssMb, cpuSeconds } = watch.stop());
      otherCpu = others.stop();
    }
    const backendsAfter = around.databaseStats ? await readBackendCpu(around.databaseStats) : null;
    const transactionsAfter = stats ? await readTransactions(stats.counters, stats.gatewayUrl) : null;
    const costs: RowCosts = {
      simulatorsCores: otherCpu.processes.simulators ?? null,
      machineCores: otherCpu.machineCores,
      dbTransactionsPerRequest:
        transactionsBefore !== null && transactionsAfter !== null ? transactionsPerRequest(transactionsBefore, transactionsAfter, row.load.requests) : null,
      dbCpuMicrosecondsPerRequest: backendsBefore && backendsAfter ? backendCpuPerRequest(backendsBefore, backendsAfter, row.load.requests) : null,
      quietWaitMs,
    };
    row.costs = costs;
    if (cpuSeconds !== null && row.load.requests > 0) {
      row.serverCpu = { cores: cpuSeconds / row.load.durationS, microsecondsPerRequest: (cpuSeconds * 1e6) / row.load.requests };
    }
    log(
      `  ${Math.round(row.load.requestsPerSecond)} requests/s, p50 ${row.load.latencyMs.p50?.toFixed(2)} ms, p99 ${row.load.latencyMs.p99?.toFixed(2)} ms` +
        (row.serverCpu ? `, server ${row.serverCpu.cores.toFixed(2)} cores, ${row.serverCpu.microsecondsPerRequest.toFixed(1)} µs CPU/request` : "") +
        (costs.simulatorsCores !== null ? `, simulators ${costs.simulatorsCores.toFixed(2)} cores` : "") +
        (costs.machineCores !== null ? `, machine ${costs.machineCores.toFixed(2)} cores` : "") +
        (costs.dbTransactionsPerRequest !== null ? `, ${costs.dbTransactionsPerRequest.toFixed(2)} DB transactions/request` : "") +
        (typeof costs.dbCpuMicrosecondsPerRequest === "number" ? `, DB ${costs.dbCpuMicrosecondsPerRequest.toFixed(0)} µs CPU/request` : ""),
    );
    if (row.load.errors > 0) {
      const first = "firstFailure" in row.load && row.load.firstFailure ? ` — first: ${String(row.load.firstFailure)}` : "";
      log(
        `  ! ${row.load.errors} errors: ${row.load.badStatus} bad status, ${row.load.networkErrors} network (${entry.flow ? "flow driver: status outside 2xx + connection errors + timeouts" : generator.errorRule})${first}`,
      );
    }
  } catch (error) {
    row.failure = error instanceof Error ? error.message : String(error);
  }
  if (cleanup.interrupted) throw new Interrupted();
  if (target.child.hasExited()) {
    row.failure = `${target.child.label} exited with code ${await target.child.exited} during the scenario. Its output:\n${indent(target.child.outputTail())}`;
    row.load = null;
  }
  if (row.failure) log(`  ! ${row.name}: ${row.failure}`);
  return row;
}
