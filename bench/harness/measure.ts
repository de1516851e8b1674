/**
 * One measurement: a probe request, a warm-up, then the measured load with the server process watched
 * (RSS sampled every 200 ms, CPU time over the run). A failure becomes the row's `failure`, not a throw,
 * so one broken scenario does not hide the others — except an interruption, which stops the run.
 */
import { indent, type ChildServer } from "./child-process.ts";
import { Interrupted, type Cleanup } from "./cleanup.ts";
import { runLoad, type Generator, type LoadSettings } from "../load/mod.ts";
import type { BenchOptions } from "./options.ts";
import { watchProcess } from "./proc-stats.ts";
import type { ResultRow } from "./report.ts";
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
  request: BenchRequest;
}

/** Probes, warms up and loads `target` with `entry.request`; resolves with the row (ratio left to the caller). */
export async function measure(
  entry: MeasureEntry,
  target: Target,
  generator: Generator,
  options: BenchOptions,
  cleanup: Cleanup,
): Promise<ResultRow> {
  const { kind } = entry;
  const row: ResultRow = {
    name: entry.name,
    kind,
    reference: entry.reference,
    request: { method: entry.request.method, path: entry.request.path },
    measures: entry.measures,
    load: null,
    serverRssMb: null,
    serverCpu: null,
    ratio: kind === "reference" ? 1 : null,
    probe: null,
    failure: null,
    rounds: [],
  };
  const settings: LoadSettings = { connections: options.connections, durationS: options.durationS, threads: options.threads, timeoutS: 5 };
  try {
    const probed = await probe(target.baseUrl, entry.request);
    row.probe = probed;
    if ("error" in probed) log(`  ! the probe request failed: ${probed.error}`);
    else if (probed.status < 200 || probed.status > 299)
      log(`  ! the probe request answered ${probed.status}: ${probed.body} — every request of the load will count as an error`);
    if (options.warmupS > 0) await runLoad(generator, target.baseUrl, entry.request, { ...settings, durationS: options.warmupS });
    if (cleanup.interrupted) throw new Interrupted();
    const watch = watchProcess(target.child.pid);
    let cpuSeconds: number | null = null;
    try {
      row.load = await runLoad(generator, target.baseUrl, entry.request, settings);
      if (cleanup.interrupted) throw new Interrupted();
    } finally {
      ({ maxRssMb: row.serverRssMb, cpuSeconds } = watch.stop());
    }
    if (cpuSeconds !== null && row.load.requests > 0) {
      row.serverCpu = { cores: cpuSeconds / row.load.durationS, microsecondsPerRequest: (cpuSeconds * 1e6) / row.load.requests };
    }
    log(
      `  ${Math.round(row.load.requestsPerSecond)} requests/s, p50 ${row.load.latencyMs.p50?.toFixed(2)} ms` +
        (row.serverCpu ? `, server ${row.serverCpu.cores.toFixed(2)} cores, ${row.serverCpu.microsecondsPerRequest.toFixed(1)} µs CPU/request` : ""),
    );
    if (row.load.errors > 0)
      log(`  ! ${row.load.errors} errors: ${row.load.badStatus} bad status, ${row.load.networkErrors} network (${generator.errorRule})`);
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
