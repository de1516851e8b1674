/**
 * Drives a load generator — always a separate process from the server measured and from this harness —
 * and reads back one {@link LoadResult}. `wrk` (C, little CPU) when it is installed, else
 * `bun-load-generator.ts`, so `bun run bench` also works on a fresh machine with only Node and npm.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { LoadGeneratorInput, LoadGeneratorOutput } from "./bun-load-generator.ts";
import type { Flow, FlowDriverInput, FlowDriverOutput } from "./flow-driver.ts";
import { killOnExit } from "../harness/child-process.ts";
import type { GeneratorChoice } from "../harness/options.ts";
import type { BenchRequest } from "../scenarios.ts";

export type GeneratorName = "wrk" | "bun";

export interface Generator {
  name: GeneratorName;
  /** e.g. `wrk 4.1.0 [epoll]`, or `bun-load-generator.ts on Bun 1.4.5`. */
  version: string;
  /** What counts as an error with this generator (it differs slightly). */
  errorRule: string;
}

export interface LoadSettings {
  connections: number;
  durationS: number;
  threads: number;
  timeoutS: number;
}

export interface LoadResult {
  requests: number;
  requestsPerSecond: number;
  /** Null when no request completed. */
  latencyMs: { p50: number | null; p90: number | null; p99: number | null; max: number | null; mean: number | null };
  /** Bad statuses plus network errors (refused, reset, timed out). */
  errors: number;
  badStatus: number;
  networkErrors: number;
  durationS: number;
}

const BUN_GENERATOR = join(import.meta.dir, "bun-load-generator.ts");
const FLOW_DRIVER = join(import.meta.dir, "flow-driver.ts");

/** Resolves `auto` to wrk when `wrk` is on PATH; refuses `wrk` when it is not. */
export async function chooseGenerator(choice: GeneratorChoice): Promise<Generator> {
  const wrkPath = Bun.which("wrk");
  if (choice === "wrk" && !wrkPath) throw new Error("bench: --generator wrk, but wrk is not on PATH (Debian: apt-get install wrk)");
  if (wrkPath && choice !== "bun") {
    const probe = Bun.spawnSync([wrkPath, "-v"], { stdout: "pipe", stderr: "pipe" });
    const text = `${probe.stdout.toString()}${probe.stderr.toString()}`;
    const version = /wrk [^\s]+ \[[^\]]+\]/.exec(text)?.[0] ?? "wrk";
    return { name: "wrk", version, errorRule: "status ≥ 400 (wrk does not count 3xx) + connect/read/write errors + timeouts" };
  }
  return {
    name: "bun",
    version: `bun-load-generator.ts on Bun ${Bun.version}`,
    errorRule: "status outside 2xx + connection errors + timeouts",
  };
}

/** Sends `request` to `baseUrl` from `settings.connections` connections for `settings.durationS`. */
export async function runLoad(generator: Generator, baseUrl: string, request: BenchRequest, settings: LoadSettings): Promise<LoadResult> {
  return generator.name === "wrk" ? runWrk(baseUrl, request, settings) : runBunGenerator(baseUrl, request, settings);
}

async function runBunGenerator(baseUrl: string, request: BenchRequest, settings: LoadSettings): Promise<LoadResult> {
  const input: LoadGeneratorInput = {
    url: baseUrl,
    connections: settings.connections,
    durationMs: settings.durationS * 1000,
    timeoutMs: settings.timeoutS * 1000,
    request,
  };
  return loadResultOf(await runJsonChild<LoadGeneratorOutput>("the Bun load generator", [BUN_GENERATOR, JSON.stringify(input)]));
}

/** Runs a generator script in its own process and parses the JSON it prints; its stderr names a failure. */
async function runJsonChild<T>(label: string, args: string[]): Promise<T> {
  const proc = killOnExit(Bun.spawn([process.execPath, ...args], { stdout: "pipe", stderr: "pipe" }));
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`bench: ${label} exited with ${code}: ${stderr.trim()}`);
  return JSON.parse(stdout) as T;
}

/** A generator's counts as the harness's load result. */
function loadResultOf(out: Pick<LoadGeneratorOutput, "requests" | "durationMs" | "latencyMs" | "non2xx" | "networkErrors">) {
  const durationS = out.durationMs / 1000;
  return {
    requests: out.requests,
    requestsPerSecond: out.requests / durationS,
    latencyMs: out.latencyMs,
    errors: out.non2xx + out.networkErrors,
    badStatus: out.non2xx,
    networkErrors: out.networkErrors,
    durationS,
  };
}

/** A Lua string literal for any bytes: every byte that is not a plain printable character as `\ddd`. */
function luaString(text: string): string {
  let out = '"';
  for (const byte of Buffer.from(text)) {
    const plain = byte >= 0x20 && byte < 0x7f && byte !== 0x22 && byte !== 0x5c;
    out += plain ? String.fromCharCode(byte) : `\\${byte.toString().padStart(3, "0")}`;
  }
  return `${out}"`;
}

/** The wrk script: sets the request, and prints the summary as one JSON line at the end. */
function wrkScript(request: BenchRequest): string {
  const headers = Object.entries(request.headers).map(([name, value]) => `wrk.headers[${luaString(name)}] = ${luaString(value)}`);
  return [
    `wrk.method = ${luaString(request.method)}`,
    ...(request.body === undefined ? [] : [`wrk.body = ${luaString(request.body)}`]),
    ...headers,
    "done = function(summary, latency, requests)",
    "  local e = summary.errors",
    '  io.write(string.format(\'BENCH_RESULT {"requests":%d,"durationUs":%d,"connect":%d,"read":%d,"write":%d,"status":%d,"timeout":%d,"p50":%.1f,"p90":%.1f,"p99":%.1f,"max":%.1f,"mean":%.1f}\\n\',',
    "    summary.requests, summary.duration, e.connect, e.read, e.write, e.status, e.timeout,",
    "    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean))",
    "end",
    "",
  ].join("\n");
}

interface WrkSummary {
  requests: number;
  durationUs: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

async function runWrk(baseUrl: string, request: BenchRequest, settings: LoadSettings): Promise<LoadResult> {
  const dir = mkdtempSync(join(tmpdir(), "passerelle-bench-"));
  try {
    const script = join(dir, "request.lua");
    writeFileSync(script, wrkScript(request));
    const args = [
      "wrk",
      `-t${settings.threads}`,
      `-c${settings.connections}`,
      `-d${Math.max(1, Math.round(settings.durationS))}s`,
      `--timeout`,
      `${settings.timeoutS}s`,
      "-s",
      script,
      `${baseUrl}${request.path}`,
    ];
    const proc = killOnExit(Bun.spawn(args, { stdout: "pipe", stderr: "pipe" }));
    const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const line = /^BENCH_RESULT (.*)$/m.exec(stdout)?.[1];
    if (code !== 0 || !line) throw new Error(`bench: wrk exited with ${code}: ${(stderr || stdout).trim()}`);
    const s = JSON.parse(line) as WrkSummary;
    const durationS = s.durationUs / 1e6;
    const ms = (us: number) => (s.requests === 0 ? null : us / 1000);
    const networkErrors = s.connect + s.read + s.write + s.timeout;
    return {
      requests: s.requests,
      requestsPerSecond: s.requests / durationS,
      latencyMs: { p50: ms(s.p50), p90: ms(s.p90), p99: ms(s.p99), max: ms(s.max), mean: ms(s.mean) },
      errors: s.status + networkErrors,
      badStatus: s.status,
      networkErrors,
      durationS,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What `runDriver` measured: the usual result, and what the driver adds (requests per flow, replay times). */
export interface DriverResult extends LoadResult {
  /** HTTP requests per flow (3 for the provider A direct payment). */
  httpRequestsPerFlow: number;
  firstFailure: string | null;
  sent?: FlowDriverOutput["sent"];
}

/**
 * Runs `flow` against `baseUrl` from `load/flow-driver.ts` (its own process) with `settings.connections`
 * connections for `settings.durationS`. Its input goes through a file: a replay's bodies are megabytes.
 */
export async function runDriver(baseUrl: string, flow: Flow, settings: LoadSettings): Promise<DriverResult> {
  const dir = mkdtempSync(join(tmpdir(), "passerelle-bench-"));
  try {
    const file = join(dir, "input.json");
    const input: FlowDriverInput = {
      url: baseUrl,
      connections: settings.connections,
      durationMs: settings.durationS * 1000,
      timeoutMs: settings.timeoutS * 1000,
      flow,
    };
    writeFileSync(file, JSON.stringify(input));
    const out = await runJsonChild<FlowDriverOutput>("the flow driver", [FLOW_DRIVER, file]);
    return {
      ...loadResultOf(out),
      httpRequestsPerFlow: out.requests > 0 ? out.httpRequests / (out.requests + out.networkErrors) : 0,
      firstFailure: out.firstFailure,
      ...(out.sent ? { sent: out.sent } : {}),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
