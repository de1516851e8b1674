/**
 * `--rounds N` runs every reference and scenario N times, alternating, and reports the median: on a
 * shared 2-core machine one run of a few seconds moves by ±15 %. Ratios are taken within each round
 * (scenario and reference measured minutes apart would share less of the machine's mood), then the
 * median ratio is reported.
 */
import type { LoadResult } from "../load/mod.ts";
import type { ResultRow, RoundSummary } from "./report.ts";

function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

const present = <T>(values: (T | null | undefined)[]): T[] => values.filter((v): v is T => v !== null && v !== undefined);

/** What one round measured for a row, kept in the JSON. */
export function summarizeRound(row: ResultRow): RoundSummary {
  return {
    requestsPerSecond: row.load?.requestsPerSecond ?? null,
    p50Ms: row.load?.latencyMs.p50 ?? null,
    p99Ms: row.load?.latencyMs.p99 ?? null,
    errors: row.load?.errors ?? null,
    serverRssMb: row.serverRssMb,
    ratio: row.ratio,
    addedP50Ms: row.addedP50Ms,
    failure: row.failure,
  };
}

/** Merges the rows of every round (same order in each) into one row per reference and scenario. */
export function combineRounds(rounds: ResultRow[][]): ResultRow[] {
  const first = rounds[0] ?? [];
  return first.map((_, i) => {
    const rows = rounds.map((round) => round[i]!);
    const loads = present(rows.map((row) => row.load));
    const m = (pick: (load: LoadResult) => number | null) => median(present(loads.map(pick)));
    const sum = (pick: (load: LoadResult) => number) => loads.reduce((total, load) => total + pick(load), 0);
    const load: LoadResult | null =
      loads.length === 0
        ? null
        : {
            requests: sum((l) => l.requests),
            requestsPerSecond: m((l) => l.requestsPerSecond)!,
            latencyMs: {
              p50: m((l) => l.latencyMs.p50),
              p90: m((l) => l.latencyMs.p90),
              p99: m((l) => l.latencyMs.p99),
              max: Math.max(...present(loads.map((l) => l.latencyMs.max))),
              mean: m((l) => l.latencyMs.mean),
            },
            errors: sum((l) => l.errors),
            badStatus: sum((l) => l.badStatus),
            networkErrors: sum((l) => l.networkErrors),
            durationS: sum((l) => l.durationS),
          };
    const cpus = present(rows.map((row) => row.serverCpu));
    const rss = present(rows.map((row) => row.serverRssMb));
    const cpuPerRequest = median(cpus.map((c) => c.microsecondsPerRequest));
    const costs = present(rows.map((row) => row.costs));
    const costMedian = (pick: (c: NonNullable<ResultRow["costs"]>) => number | null) => median(present(costs.map(pick)));
    return {
      ...rows[0]!,
      load,
      serverRssMb: rss.length > 0 ? Math.max(...rss) : null,
      serverCpu: cpuPerRequest === null ? null : { cores: median(cpus.map((c) => c.cores))!, microsecondsPerRequest: cpuPerRequest },
      ratio: median(present(rows.map((row) => row.ratio))),
      addedP50Ms: median(present(rows.map((row) => row.addedP50Ms))),
      costs:
        costs.length === 0
          ? null
          : {
              simulatorsCores: costMedian((c) => c.simulatorsCores),
              machineCores: costMedian((c) => c.machineCores),
              dbTransactionsPerRequest: costMedian((c) => c.dbTransactionsPerRequest),
              dbCpuMicrosecondsPerRequest: costMedian((c) => c.dbCpuMicrosecondsPerRequest ?? null),
              quietWaitMs: costMedian((c) => c.quietWaitMs),
            },
      failure: present(rows.map((row) => row.failure))[0] ?? null,
      rounds: rows.map(summarizeRound),
    };
  });
}
