/**
 * The soak's pure parts (issue 27 point 5), kept apart so that they can be tested: which kind of request
 * each arrival is, when it is due (an open model: arrival i at i/rate seconds, whatever the answers do),
 * the per-minute figures computed from the driver's records and the harness's samples, and the verdicts.
 */

/** The kinds of request the soak mixes, in the order of {@link SOAK_MIX}. */
export const SOAK_KINDS = ["payment", "status", "list", "ipn", "payout"] as const;
export type SoakKind = (typeof SOAK_KINDS)[number];

/**
 * Arrivals of each kind per 20: POST /payments 25 %, GET /payments/{id} 30 %, GET /payments 15 %, provider B
 * IPNs 10 %, POST /payouts 20 %. Payouts (100 XOF) take less than the payments (800 XOF) bring in.
 */
export const SOAK_MIX: Record<SoakKind, number> = { payment: 5, status: 6, list: 3, ipn: 2, payout: 4 };

/**
 * The kind of every arrival, interleaved by smooth weighted round robin (nginx's): each kind comes back at
 * even intervals instead of in runs, and every `sum(weights)` arrivals hold exactly `weight` of each kind.
 */
export function kindSequence(weights: readonly number[], length: number): number[] {
  const total = weights.reduce((a, b) => a + b, 0);
  if (total <= 0 || weights.some((w) => w < 0 || !Number.isInteger(w))) throw new Error("kindSequence: weights must be non-negative integers, not all 0");
  const current = weights.map(() => 0);
  const out: number[] = [];
  for (let i = 0; i < length; i++) {
    let best = 0;
    for (let k = 0; k < weights.length; k++) {
      current[k]! += weights[k]!;
      if (current[k]! > current[best]!) best = k;
    }
    current[best]! -= total;
    out.push(best);
  }
  return out;
}

/** When arrival `index` is due, in ms from the start, at `ratePerS` arrivals per second. */
export const dueAtMs = (index: number, ratePerS: number) => (index * 1000) / ratePerS;

/** Arrivals in `durationMs` at `ratePerS` (those due strictly before the end). */
export const arrivalsIn = (durationMs: number, ratePerS: number) => Math.ceil((durationMs * ratePerS) / 1000);

/**
 * One request of the soak as the driver reports it: kind (index into {@link SOAK_KINDS}), when it was due
 * (ms from the start), its latency from that due time to its answer (so time spent waiting to be sent
 * counts: no coordinated omission), and its HTTP status (0: no answer — refused, reset, timed out).
 */
export type SoakRecord = [kind: number, dueMs: number, latencyMs: number, status: number];

/** A sample the harness takes every second: ms from the driver's start, and the processes' VmRSS in MiB. */
export interface RssSample {
  atMs: number;
  gatewayMb: number | null;
  simulatorsMb: number | null;
}

export interface KindMinute {
  requests: number;
  errors: number;
  p50Ms: number | null;
  p99Ms: number | null;
}

export interface SoakMinute {
  /** 1-based, counted after the warm-up. */
  minute: number;
  /** Requests due in the minute that were answered (any status), per second. */
  achievedPerS: number;
  requests: number;
  errors: number;
  kinds: Record<SoakKind, KindMinute>;
  /** The largest sample of the minute, MiB. */
  gatewayRssMb: number | null;
  simulatorsRssMb: number | null;
  /** Machine-wide cores busy during the minute (everyone's work, the other sessions' too), when read. */
  machineCores: number | null;
  /** Cores the gateway's process used during the minute (about 1 is saturated: its JavaScript runs on one thread), when read. */
  gatewayCores: number | null;
}

/** The nearest-rank percentile of ascending `sorted`. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}

/** Anything outside 2xx is an error, a missing answer (status 0) too. */
export const isError = (status: number) => status < 200 || status > 299;

const maxOf = (values: (number | null)[]): number | null => values.reduce<number | null>((m, v) => (v !== null && (m === null || v > m) ? v : m), null);

/**
 * Groups records and samples into whole minutes after `warmupMs` (a record by its due time, so a minute's
 * latency is that of the requests due in it). Minutes not wholly within `durationMs` are left out; the
 * warm-up is not reported. `machineCores[m]` and `gatewayCores[m]` are minute m's (0-based) CPU, if read.
 */
export function aggregateMinutes(
  records: readonly SoakRecord[],
  samples: readonly RssSample[],
  options: { warmupMs: number; durationMs: number; minuteMs?: number; machineCores?: (number | null)[]; gatewayCores?: (number | null)[] },
): SoakMinute[] {
  const minuteMs = options.minuteMs ?? 60_000;
  const minutes = Math.floor((options.durationMs - options.warmupMs) / minuteMs);
  const latencies: number[][][] = Array.from({ length: minutes }, () => SOAK_KINDS.map(() => []));
  const errors: number[][] = Array.from({ length: minutes }, () => SOAK_KINDS.map(() => 0));
  for (const [kind, due, latency, status] of records) {
    const m = Math.floor((due - options.warmupMs) / minuteMs);
    if (m < 0 || m >= minutes || kind < 0 || kind >= SOAK_KINDS.length) continue;
    latencies[m]![kind]!.push(latency);
    if (isError(status)) errors[m]![kind]!++;
  }
  const out: SoakMinute[] = [];
  for (let m = 0; m < minutes; m++) {
    const from = options.warmupMs + m * minuteMs;
    const inMinute = samples.filter((s) => s.atMs >= from && s.atMs < from + minuteMs);
    const kinds = {} as Record<SoakKind, KindMinute>;
    let requests = 0;
    let errorCount = 0;
    SOAK_KINDS.forEach((name, k) => {
      const sorted = latencies[m]![k]!.sort((a, b) => a - b);
      const answered = sorted.length;
      kinds[name] = { requests: answered, errors: errors[m]![k]!, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) };
      requests += answered;
      errorCount += errors[m]![k]!;
    });
    out.push({
      minute: m + 1,
      achievedPerS: requests / (minuteMs / 1000),
      requests,
      errors: errorCount,
      kinds,
      gatewayRssMb: maxOf(inMinute.map((s) => s.gatewayMb)),
      simulatorsRssMb: maxOf(inMinute.map((s) => s.simulatorsMb)),
      machineCores: options.machineCores?.[m] ?? null,
      gatewayCores: options.gatewayCores?.[m] ?? null,
    });
  }
  return out;
}

/** How far the last minute may be above the first and still be called flat. */
export const FLAT_RSS = 0.1;
export const FLAT_P99 = 0.25;

export interface SoakVerdict {
  what: string;
  first: number | null;
  last: number | null;
  /** (last − first) ÷ first; null when either is missing. */
  change: number | null;
  verdict: "flat" | "grew" | "n/a";
}

function verdictOf(what: string, first: number | null, last: number | null, tolerance: number): SoakVerdict {
  if (first === null || last === null || first <= 0) return { what, first, last, change: null, verdict: "n/a" };
  const change = (last - first) / first;
  // Only growth counts against: a last minute lower than the first is flat for a leak's purposes.
  return { what, first, last, change, verdict: change <= tolerance ? "flat" : "grew" };
}

/**
 * The gateway's RSS (within {@link FLAT_RSS}) and each kind's p99 (within {@link FLAT_P99}): the last minute
 * against the first. The simulators are reported, not judged here: they keep every record by design.
 */
export function soakVerdicts(minutes: readonly SoakMinute[]): SoakVerdict[] {
  const first = minutes[0];
  const last = minutes.at(-1);
  if (!first || !last) return [];
  return [
    verdictOf("gateway RSS (MB)", first.gatewayRssMb, last.gatewayRssMb, FLAT_RSS),
    ...SOAK_KINDS.map((kind) => verdictOf(`${kind} p99 (ms)`, first.kinds[kind].p99Ms, last.kinds[kind].p99Ms, FLAT_P99)),
  ];
}

/**
 * The simulators' RSS growth per 1,000 requests of the mix between the first minute and the last
 * (requests counted over the minutes in between, both ends included); null when not measurable.
 */
export function growthPer1000(minutes: readonly SoakMinute[], pick: (m: SoakMinute) => number | null): number | null {
  const first = minutes[0];
  const last = minutes.at(-1);
  if (!first || !last || first === last) return null;
  const a = pick(first);
  const b = pick(last);
  if (a === null || b === null) return null;
  // From the first minute's end to the last's end: the requests of minutes 2..N.
  const requests = minutes.slice(1).reduce((sum, m) => sum + m.requests, 0);
  return requests > 0 ? ((b - a) / requests) * 1000 : null;
}
