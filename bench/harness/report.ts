/**
 * The one table `bun run bench` prints (Markdown, so it pastes into bench/README.md as it is), and the
 * JSON written under `bench/results/`.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, release, totalmem } from "node:os";
import { join } from "node:path";
import type { Generator, LoadResult } from "../load/mod.ts";

/** One round's numbers for a row (see `rounds.ts`). */
export interface RoundSummary {
  requestsPerSecond: number | null;
  p50Ms: number | null;
  p99Ms: number | null;
  errors: number | null;
  serverRssMb: number | null;
  ratio: number | null;
  addedP50Ms: number | null;
  failure: string | null;
}

/**
 * Where the time went while a row was measured (the JSON, and the second table): the other processes'
 * CPU and the database work per request. Null where it was not read.
 */
export interface RowCosts {
  /** Cores used by the `passerelle sandbox` process (both simulators). */
  simulatorsCores: number | null;
  /** Cores used by the whole machine: server, simulators, PostgreSQL, Redis, the load generator. */
  machineCores: number | null;
  /**
   * Committed + rolled-back transactions of the scratch database per request (`pg_stat_database`), the
   * background work the requests caused included; an autocommitted statement is one, an explicit
   * transaction one whatever its statements.
   */
  dbTransactionsPerRequest: number | null;
  /**
   * CPU of the PostgreSQL backends connected to the scratch database per request, in µs (their `/proc` CPU
   * time over the load, read where PostgreSQL runs on this machine): the database's share of a request, the
   * background work the requests caused during the load included; WAL writer and checkpointer not counted.
   */
  dbCpuMicrosecondsPerRequest?: number | null;
  /** How long the harness waited, before this row, for the previous rows' background work to end. */
  quietWaitMs: number | null;
}

export interface ResultRow {
  name: string;
  kind: "reference" | "scenario";
  /** For a scenario, the reference it is divided by. */
  reference: string | null;
  request: { method: string; path: string };
  measures: string;
  load: LoadResult | null;
  /** Largest VmRSS of the server process while the load ran, in MiB. */
  serverRssMb: number | null;
  /** The server process's CPU while the load ran: cores used on average, and CPU time per request. */
  serverCpu: { cores: number; microsecondsPerRequest: number } | null;
  /** requests/s ÷ the reference's requests/s from the same run; 1 for a reference. */
  ratio: number | null;
  /** The scenario's p50 minus its reference's p50 (same round), for request/response pairs; null otherwise. */
  addedP50Ms: number | null;
  costs: RowCosts | null;
  /** Status and start of the body of one request sent before the load, to show what the load gets. */
  probe: { status: number; body: string } | { error: string } | null;
  /** Why the row has no measurement (the server died, the generator failed…). */
  failure: string | null;
  /** Each round's numbers; the fields above are their medians (RSS: the maximum; errors: the sum). */
  rounds: RoundSummary[];
}

/** A row with nothing measured yet. */
export function newRow(fields: Pick<ResultRow, "name" | "kind" | "reference" | "request" | "measures">): ResultRow {
  return {
    ...fields,
    load: null,
    serverRssMb: null,
    serverCpu: null,
    ratio: fields.kind === "reference" ? 1 : null,
    addedP50Ms: null,
    costs: null,
    probe: null,
    failure: null,
    rounds: [],
  };
}

export interface MachineFacts {
  cpus: number;
  cpuModel: string;
  memoryGiB: number;
  platform: string;
  kernel: string;
  bun: string;
  commit: string | null;
}

export interface BenchReport {
  startedAt: string;
  machine: MachineFacts;
  generator: Generator;
  settings: {
    durationS: number;
    warmupS: number;
    connections: number;
    threads: number | null;
    rounds: number;
    /** The provider A simulator's approval delay below 1000, when the simulators ran. */
    approveDelayMs?: number;
    /** Checkouts paid per round for the IPN rows, when they ran. */
    ipns?: number;
  };
  gateway: { startupMs: number | null; idleRssMb: number | null; idleCpuCores: number | null; logTail: string };
  /** Cores kept busy by processes other than the gateway in the second before the run (others' tests…). */
  backgroundCpuCores: number | null;
  rows: ResultRow[];
}

/** The commit checked out, read from `.git` files (best effort; null when not a plain checkout). */
function readCommit(repoRoot: string): string | null {
  try {
    const head = readFileSync(join(repoRoot, ".git", "HEAD"), "utf8").trim();
    const ref = /^ref: (.+)$/.exec(head)?.[1];
    if (!ref) return head;
    const loose = join(repoRoot, ".git", ref);
    if (existsSync(loose)) return readFileSync(loose, "utf8").trim();
    const packed = readFileSync(join(repoRoot, ".git", "packed-refs"), "utf8");
    return new RegExp(`^([0-9a-f]{40}) ${ref.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`, "m").exec(packed)?.[1] ?? null;
  } catch {
    return null;
  }
}

export function machineFacts(repoRoot: string): MachineFacts {
  const list = cpus();
  return {
    cpus: list.length,
    cpuModel: list[0]?.model.trim() ?? "unknown",
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    platform: `${process.platform}-${process.arch}`,
    kernel: release(),
    bun: Bun.version,
    commit: readCommit(repoRoot),
  };
}

const fixed = (value: number | null | undefined, digits: number) => (value === null || value === undefined ? "—" : value.toFixed(digits));

/** The table: one row per reference and scenario, in run order. */
export function formatTable(rows: ResultRow[]): string {
  const header = ["scenario", "requests/s", "p50 (ms)", "p99 (ms)", "added p50 (ms)", "errors", "server RSS (MB)", "ratio to reference"];
  const body = rows.map((row) => {
    const ratio = row.kind === "reference" ? "(reference)" : row.ratio === null ? "—" : `${row.ratio.toFixed(3)} × ${row.reference}`;
    if (!row.load) return [row.name, "failed", "—", "—", "—", "—", fixed(row.serverRssMb, 0), ratio];
    return [
      row.name,
      Math.round(row.load.requestsPerSecond).toLocaleString("en-US"),
      fixed(row.load.latencyMs.p50, 2),
      fixed(row.load.latencyMs.p99, 2),
      row.addedP50Ms === null ? "—" : `${row.addedP50Ms >= 0 ? "+" : ""}${row.addedP50Ms.toFixed(2)}`,
      String(row.load.errors),
      fixed(row.serverRssMb, 0),
      ratio,
    ];
  });
  return markdownTable(header, body, [false, true, true, true, true, true, true, false]);
}

/**
 * The second table: where the time went in each row — the measured server's CPU (cores, and µs per
 * request), the simulators' and the whole machine's cores, the database transactions per request.
 */
export function formatCostTable(rows: ResultRow[]): string {
  const header = ["scenario", "server cores", "server CPU µs/request", "simulators cores", "machine cores", "DB transactions/request", "DB CPU µs/request"];
  const body = rows.map((row) => [
    row.name,
    fixed(row.serverCpu?.cores, 2),
    fixed(row.serverCpu?.microsecondsPerRequest, 0),
    fixed(row.costs?.simulatorsCores, 2),
    fixed(row.costs?.machineCores, 2),
    fixed(row.costs?.dbTransactionsPerRequest, 2),
    fixed(row.costs?.dbCpuMicrosecondsPerRequest, 0),
  ]);
  return markdownTable(header, body, [false, true, true, true, true, true, true]);
}

export function markdownTable(header: string[], body: string[][], numeric: boolean[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((cells) => cells[i]!.length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => (numeric[i] ? cell.padStart(widths[i]!) : cell.padEnd(widths[i]!))).join(" | ")} |`;
  const rule = `| ${widths.map((w, i) => (numeric[i] ? `${"-".repeat(w - 1)}:` : "-".repeat(w))).join(" | ")} |`;
  return [line(header), rule, ...body.map(line)].join("\n");
}

/** One line of context printed above the table. */
export function formatSettings(report: BenchReport): string {
  const m = report.machine;
  const threads = report.settings.threads === null ? "" : `, ${report.settings.threads} thread(s)`;
  return (
    `${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, Bun ${m.bun} · generator ${report.generator.version}${threads} · ` +
    `${report.settings.connections} connections, ${report.settings.durationS} s per scenario after ${report.settings.warmupS} s warm-up` +
    (report.settings.rounds > 1 ? `, median of ${report.settings.rounds} rounds · ` : " · ") +
    `gateway ready in ${fixed(report.gateway.startupMs, 0)} ms, ${fixed(report.gateway.idleRssMb, 0)} MB RSS idle · ` +
    `other load before the run: ${fixed(report.backgroundCpuCores, 2)} cores`
  );
}

/** Writes `bench/results/<timestamp>.json` and `bench/results/latest.json`; returns the first path. */
export function saveReport(resultsDir: string, report: BenchReport): string {
  mkdirSync(resultsDir, { recursive: true });
  // ISO 8601 with ':' swapped for '-', which some file systems and tools refuse in names.
  const file = join(resultsDir, `${report.startedAt.replace(/:/g, "-")}.json`);
  const text = `${JSON.stringify(report, null, 2)}\n`;
  writeFileSync(file, text);
  writeFileSync(join(resultsDir, "latest.json"), text);
  return file;
}
