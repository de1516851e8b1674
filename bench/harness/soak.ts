/**
 * `bun run bench --soak` (issue 27 point 5): N minutes of mixed traffic at a fixed arrival rate —
 * POST /payments (routed, provider A), GET /payments/{id}, GET /payments, provider B IPNs, POST /payouts —
 * from `load/soak-driver.ts` (its own process, open model), while the harness samples the gateway's and the
 * simulators' RSS every second. Per minute after the warm-up: the rate achieved, p50/p99 per kind, errors,
 * the RSS of both; then the first minute against the last, with verdicts.
 *
 * Set-up, through the gateway's API: the provider A tenant (made by `setUpProviderA`) makes
 * {@link SEED_PAYMENTS} payments and the harness waits until its balance on the pooled account covers the
 * first payouts (a payout spends what the tenant collected there); the provider B tenant's IPN bodies are
 * prepared as for the IPN rows (`prepareIpns`: checkouts, a minute's wait, paid at the simulator, the bodies
 * read back from the sink), one per IPN arrival of the soak, each replayed once.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { killOnExit } from "./child-process.ts";
import type { Cleanup } from "./cleanup.ts";
import { prepareIpns, type IpnContext } from "./ipn-intake.ts";
import { readCpuSeconds, readMachineJiffies, readRssMb } from "./proc-stats.ts";
import type { GatewayApi, ProviderASetup } from "./provider-setup.ts";
import { markdownTable, type MachineFacts } from "./report.ts";
import {
  aggregateMinutes,
  arrivalsIn,
  FLAT_P99,
  FLAT_RSS,
  growthPer1000,
  SOAK_KINDS,
  SOAK_MIX,
  soakVerdicts,
  type RssSample,
  type SoakMinute,
  type SoakVerdict,
} from "./soak-plan.ts";
import type { SoakDriverInput, SoakDriverOutput } from "../load/soak-driver.ts";

const log = (line: string) => process.stderr.write(`${line}\n`);
const SOAK_DRIVER = new URL("../load/soak-driver.ts", import.meta.url).pathname;

/** Unreported load before the first minute: caches, JIT, pools and the first sync runs settle. */
export const SOAK_WARMUP_S = 30;
/** Payments made (and approved) before the soak, so that the first payouts have money to spend. */
const SEED_PAYMENTS = 20;
const PAYMENT = { amount: 800, description: "Soak payment", operator: "mtn", customer: { phone: { number: "+22997000000", country: "bj" } } };
/** Each payout to a phone of its own (`{{n}}`: see `SoakDriverInput.payoutBody`): provider A pays one number at most 3 times a day. */
const PAYOUT = { amount: 100, description: "Soak payout", recipient: { phone: { number: "+22996{{n}}", country: "bj" }, operator: "mtn" } };
/** A request unanswered after this long counts as an error (status 0). */
const TIMEOUT_MS = 10_000;
/** More in flight than this and arrivals are dropped (and counted as errors): the generator must not snowball. */
const MAX_IN_FLIGHT = 2_000;

export interface SoakSettings {
  minutes: number;
  ratePerS: number;
}

export interface SoakContext {
  api: GatewayApi;
  simulators: { providerAUrl: string };
  providerA: ProviderASetup;
  ipn: IpnContext;
  gatewayPid: number;
  simulatorsPid: number;
  gatewayExited: () => boolean;
}

export interface SoakReport {
  kind: "soak";
  startedAt: string;
  machine: MachineFacts;
  settings: SoakSettings & { warmupS: number; mix: Record<string, number>; timeoutMs: number; approveDelayMs: number };
  /** The whole run: requests due, answered 2xx, errors, and arrivals not sent per kind. */
  totals: { due: number; ok: number; errors: number; skipped: Record<string, number> };
  firstFailure: Partial<Record<string, string>>;
  minutes: SoakMinute[];
  verdicts: SoakVerdict[];
  /** The simulators' RSS growth per 1,000 requests of the mix, first minute to last (they keep every record). */
  simulatorsGrowthMbPer1000: number | null;
  /**
   * Records the simulators hold, counted through the lists they expose, before the driver starts and after
   * it ends (outside the measured time: each count serializes every record): provider A's transactions and
   * payouts (kept for good). Provider B keeps its invoices too, but lists none (its IPN log is capped).
   */
  simulatorRecords: { before: SimulatorRecords | null; after: SimulatorRecords | null };
  gateway: { idleRssMb: number | null; logTail: string };
  failure: string | null;
}

export interface SimulatorRecords {
  providerATransactions: number;
  providerAPayouts: number;
}

async function countSimulatorRecords(urls: SoakContext["simulators"]): Promise<SimulatorRecords | null> {
  try {
    const get = async <T>(url: string) => (await (await fetch(url, { signal: AbortSignal.timeout(30_000) })).json()) as T;
    const [transactions, payouts] = await Promise.all([
      get<{ transactions: unknown[] }>(`${urls.providerAUrl}/_sim/transactions`),
      get<{ payouts: unknown[] }>(`${urls.providerAUrl}/_sim/payouts`),
    ]);
    return { providerATransactions: transactions.transactions.length, providerAPayouts: payouts.payouts.length };
  } catch (error) {
    log(`bench: soak: the simulators' records could not be counted: ${error instanceof Error ? error.message : String(error)}`);
    return null;
  }
}

async function availableXof(api: GatewayApi, token: string): Promise<number> {
  const { balances } = await api.call<{ balances: { currency: string; available: number }[] }>("GET", "/balance", { token });
  return balances.filter((b) => b.currency === "XOF").reduce((sum, b) => sum + b.available, 0);
}

/** {@link SEED_PAYMENTS} payments through `POST /payments`; resolves with their ids once the balance covers 20 payouts. */
async function seedPayments(api: GatewayApi, token: string): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < SEED_PAYMENTS; i++) ids.push((await api.call<{ id: string }>("POST", "/payments", { token, body: PAYMENT })).id);
  const needed = 20 * PAYOUT.amount;
  const deadline = performance.now() + 60_000;
  let available = 0;
  while (performance.now() < deadline) {
    available = await availableXof(api, token);
    if (available >= needed) return ids;
    await Bun.sleep(500);
  }
  throw new Error(`bench: the soak's seed payments left ${available} XOF available after 60 s (${needed} needed for the first payouts)`);
}

type Sample = RssSample & { jiffies: { busy: number; total: number } | null; gatewayCpuS: number | null };

/** Machine-wide busy cores and the gateway's cores per minute after the warm-up, from the first and last sample of each. */
function coresPerMinute(samples: Sample[], warmupMs: number, minutes: number) {
  const machine: (number | null)[] = [];
  const gateway: (number | null)[] = [];
  for (let m = 0; m < minutes; m++) {
    const from = warmupMs + m * 60_000;
    const inside = samples.filter((s) => s.atMs >= from && s.atMs < from + 60_000);
    const [first, last] = [inside[0], inside.at(-1)];
    const a = first?.jiffies;
    const b = last?.jiffies;
    machine.push(a && b && b.total > a.total ? ((b.busy - a.busy) / (b.total - a.total)) * navigator.hardwareConcurrency : null);
    const [ca, cb] = [first?.gatewayCpuS ?? null, last?.gatewayCpuS ?? null];
    gateway.push(first && last && ca !== null && cb !== null && last.atMs > first.atMs ? (cb - ca) / ((last.atMs - first.atMs) / 1000) : null);
  }
  return { machine, gateway };
}

export async function runSoak(
  ctx: SoakContext,
  settings: SoakSettings,
  env: { cleanup: Cleanup; machine: MachineFacts; approveDelayMs: number; idleRssMb: number | null; logTail: () => string },
): Promise<SoakReport> {
  const startedAt = new Date().toISOString();
  const warmupMs = SOAK_WARMUP_S * 1000;
  const durationMs = warmupMs + settings.minutes * 60_000;
  const weights = SOAK_KINDS.map((k) => SOAK_MIX[k]);
  const perRound = weights.reduce((a, b) => a + b, 0);
  const ipnArrivals = Math.ceil((arrivalsIn(durationMs, settings.ratePerS) * SOAK_MIX.ipn) / perRound) + 1;

  log(`bench: soak: ${SEED_PAYMENTS} seed payments, waiting until the balance covers the first payouts`);
  const token = ctx.providerA.tenant.token;
  const seedIds = await seedPayments(ctx.api, token);
  log(`bench: soak: preparing ${ipnArrivals} paid checkouts for the IPNs`);
  const prepared = await prepareIpns(ctx.ipn, ipnArrivals, env.cleanup);

  const input: SoakDriverInput = {
    url: ctx.api.baseUrl,
    ratePerS: settings.ratePerS,
    durationMs,
    timeoutMs: TIMEOUT_MS,
    weights,
    maxInFlight: MAX_IN_FLIGHT,
    tenantToken: token,
    seedPaymentIds: seedIds,
    paymentBody: JSON.stringify(PAYMENT),
    payoutBody: JSON.stringify(PAYOUT),
    ipnBodies: prepared.bodies,
  };
  const recordsBefore = await countSimulatorRecords(ctx.simulators);
  const dir = mkdtempSync(join(tmpdir(), "passerelle-soak-"));
  const samples: Sample[] = [];
  const wallSamples: (Omit<Sample, "atMs"> & { wallMs: number })[] = [];
  let output: SoakDriverOutput;
  try {
    const file = join(dir, "input.json");
    writeFileSync(file, JSON.stringify(input));
    log(
      `bench: soak: ${settings.ratePerS} requests/s for ${SOAK_WARMUP_S} s of warm-up + ${settings.minutes} min ` +
        `(mix per ${perRound}: ${SOAK_KINDS.map((k) => `${k} ${SOAK_MIX[k]}`).join(", ")})`,
    );
    const outFile = join(dir, "output.json");
    const proc = killOnExit(Bun.spawn([process.execPath, SOAK_DRIVER, file, outFile], { stdout: "ignore", stderr: "pipe" }));
    env.cleanup.add("stop the soak driver", async () => {
      proc.kill();
      await proc.exited;
    });
    const t0 = performance.now();
    const sample = () => {
      wallSamples.push({
        wallMs: performance.timeOrigin + performance.now(),
        gatewayMb: readRssMb(ctx.gatewayPid),
        simulatorsMb: readRssMb(ctx.simulatorsPid),
        jiffies: readMachineJiffies(),
        gatewayCpuS: readCpuSeconds(ctx.gatewayPid),
      });
      const elapsed = performance.now() - t0;
      // One line a minute, so that a long soak shows it is alive.
      if (wallSamples.length % 60 === 0) {
        const last = wallSamples.at(-1)!;
        log(
          `bench: soak: ${Math.round(elapsed / 1000)} s, gateway ${last.gatewayMb?.toFixed(0) ?? "?"} MB, simulators ${last.simulatorsMb?.toFixed(0) ?? "?"} MB`,
        );
      }
    };
    sample();
    const timer = setInterval(sample, 1_000);
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    clearInterval(timer);
    if (code !== 0) throw new Error(`bench: the soak driver exited with ${code}: ${stderr.trim()}`);
    output = JSON.parse(readFileSync(outFile, "utf8")) as SoakDriverOutput;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  for (const s of wallSamples) samples.push({ ...s, atMs: s.wallMs - output.startedAtWallMs });

  const recordsAfter = await countSimulatorRecords(ctx.simulators);
  const cores = coresPerMinute(samples, warmupMs, settings.minutes);
  const minutes = aggregateMinutes(output.records, samples, { warmupMs, durationMs, machineCores: cores.machine, gatewayCores: cores.gateway });
  const errors = output.records.filter(([, , , status]) => status < 200 || status > 299).length;
  return {
    kind: "soak",
    startedAt,
    machine: env.machine,
    settings: { ...settings, warmupS: SOAK_WARMUP_S, mix: { ...SOAK_MIX }, timeoutMs: TIMEOUT_MS, approveDelayMs: env.approveDelayMs },
    totals: { due: output.records.length, ok: output.records.length - errors, errors, skipped: output.skipped },
    firstFailure: output.firstFailure,
    minutes,
    verdicts: soakVerdicts(minutes),
    simulatorsGrowthMbPer1000: growthPer1000(minutes, (m) => m.simulatorsRssMb),
    simulatorRecords: { before: recordsBefore, after: recordsAfter },
    gateway: { idleRssMb: env.idleRssMb, logTail: env.logTail() },
    failure: ctx.gatewayExited() ? "the gateway exited during the soak" : null,
  };
}

const fixed = (value: number | null | undefined, digits: number) => (value === null || value === undefined ? "—" : value.toFixed(digits));
const percent = (change: number | null) => (change === null ? "—" : `${change >= 0 ? "+" : ""}${(change * 100).toFixed(1)} %`);

/** "soak: minute 1 vs minute N", then every minute. Markdown, to paste into docs/performance.md. */
export function formatSoak(report: SoakReport): string {
  const minutes = report.minutes;
  const first = minutes[0];
  const last = minutes.at(-1);
  if (!first || !last) return "soak: no whole minute after the warm-up was measured";
  const n = last.minute;
  const verdictOf = (what: string) => report.verdicts.find((v) => v.what === what);
  const row = (what: string, a: number | null, b: number | null, digits: number, judged?: string): string[] => {
    const v = judged ? verdictOf(judged) : undefined;
    const change = a !== null && b !== null && a > 0 ? (b - a) / a : null;
    return [what, fixed(a, digits), fixed(b, digits), percent(change), v ? v.verdict : "—"];
  };
  const body: string[][] = [
    row("requests/s achieved", first.achievedPerS, last.achievedPerS, 1),
    row("errors", first.errors, last.errors, 0),
    row("gateway RSS (MB, max of the minute)", first.gatewayRssMb, last.gatewayRssMb, 0, "gateway RSS (MB)"),
    row("simulators RSS (MB, max of the minute)", first.simulatorsRssMb, last.simulatorsRssMb, 0),
    ...SOAK_KINDS.map((kind) => row(`${kind} p99 (ms)`, first.kinds[kind].p99Ms, last.kinds[kind].p99Ms, 1, `${kind} p99 (ms)`)),
    ...SOAK_KINDS.map((kind) => row(`${kind} p50 (ms)`, first.kinds[kind].p50Ms, last.kinds[kind].p50Ms, 1)),
    row("gateway cores (≈ 1: saturated)", first.gatewayCores, last.gatewayCores, 2),
    row("machine cores busy (everyone's)", first.machineCores, last.machineCores, 2),
  ];
  const head = markdownTable([`soak: minute 1 vs minute ${n}`, "minute 1", `minute ${n}`, "change", "verdict"], body, [false, true, true, true, false]);
  const perMinute = markdownTable(
    ["minute", "req/s", "errors", "gateway RSS", "simulators RSS", ...SOAK_KINDS.map((k) => `${k} p99`), "gateway cores", "machine cores"],
    minutes.map((m) => [
      String(m.minute),
      fixed(m.achievedPerS, 1),
      String(m.errors),
      fixed(m.gatewayRssMb, 0),
      fixed(m.simulatorsRssMb, 0),
      ...SOAK_KINDS.map((k) => fixed(m.kinds[k].p99Ms, 1)),
      fixed(m.gatewayCores, 2),
      fixed(m.machineCores, 2),
    ]),
    [true, true, true, true, true, ...SOAK_KINDS.map(() => true), true, true],
  );
  const growth = report.simulatorsGrowthMbPer1000;
  const judged = report.verdicts.filter((v) => v.verdict !== "n/a");
  const summary =
    judged.length > 0 && judged.every((v) => v.verdict === "flat")
      ? `flat: the gateway's RSS within ${FLAT_RSS * 100} % and every p99 within ${FLAT_P99 * 100} % of minute 1's`
      : `not flat: ${judged
          .filter((v) => v.verdict !== "flat")
          .map((v) => `${v.what} ${percent(v.change)}`)
          .join(", ")}`;
  const { before, after } = report.simulatorRecords;
  const records =
    before && after
      ? `provider A simulator's records over the whole run (${report.totals.due} requests, warm-up included): transactions ${before.providerATransactions} → ` +
        `${after.providerATransactions}, payouts ${before.providerAPayouts} → ${after.providerAPayouts}, ` +
        `${fixed(((after.providerATransactions + after.providerAPayouts - before.providerATransactions - before.providerAPayouts) / Math.max(1, report.totals.due)) * 1000, 0)} ` +
        "per 1,000 requests, none ever dropped (provider B's invoices are kept too, but not listed)."
      : "simulators' records: not counted.";
  const skipped = Object.entries(report.totals.skipped).filter(([, count]) => count > 0);
  return [
    `${head}`,
    "",
    `Per minute (p99 in ms, RSS in MB, max of the minute):`,
    "",
    perMinute,
    "",
    `verdict: ${summary}.`,
    `simulators: they keep every transaction, payout and invoice in memory by design` +
      (growth === null
        ? " (one minute: no growth to report)."
        : `; their RSS went from ${fixed(first.simulatorsRssMb, 0)} to ${fixed(last.simulatorsRssMb, 0)} MB, ${fixed(growth, 2)} MB per 1,000 requests of the mix.`),
    records,
    `whole run: ${report.totals.due} requests due (warm-up included), ${report.totals.errors} errors` +
      (skipped.length > 0 ? `; not sent: ${skipped.map(([k, c]) => `${c} ${k}`).join(", ")}` : "") +
      ".",
    ...Object.entries(report.firstFailure).map(([kind, why]) => `first ${kind} failure: ${why}`),
  ].join("\n");
}

/** Writes `bench/results/soak-<timestamp>.json` and `bench/results/soak-latest.json`; returns the first path. */
export function saveSoakReport(resultsDir: string, report: SoakReport): string {
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `soak-${report.startedAt.replace(/:/g, "-")}.json`);
  const text = `${JSON.stringify(report, null, 2)}\n`;
  writeFileSync(file, text);
  writeFileSync(join(resultsDir, "soak-latest.json"), text);
  return file;
}
