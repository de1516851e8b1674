/**
 * The soak's pure logic (bench/harness/soak-plan.ts): the mix's interleaving, the open model's due times,
 * the per-minute aggregation and the verdicts printed under "soak: minute 1 vs minute N".
 */
import { describe, expect, test } from "bun:test";
import {
  aggregateMinutes,
  arrivalsIn,
  dueAtMs,
  growthPer1000,
  kindSequence,
  percentile,
  SOAK_KINDS,
  SOAK_MIX,
  soakVerdicts,
  type RssSample,
  type SoakRecord,
} from "../../bench/harness/soak-plan.ts";

describe("the schedule", () => {
  test("every round of sum(weights) arrivals holds each kind exactly its weight, spread out", () => {
    const weights = SOAK_KINDS.map((k) => SOAK_MIX[k]);
    const total = weights.reduce((a, b) => a + b, 0);
    const sequence = kindSequence(weights, total * 3);
    for (let round = 0; round < 3; round++) {
      const slice = sequence.slice(round * total, (round + 1) * total);
      for (const [k, w] of weights.entries()) expect(slice.filter((x) => x === k).length).toBe(w);
    }
    // Smooth, not in runs: within a round no kind comes twice in a row (a round's last may be the next one's first).
    for (let i = 1; i < sequence.length; i++) if (i % total !== 0) expect(sequence[i]).not.toBe(sequence[i - 1]);
  });

  test("a kind of weight 0 never comes, and bad weights are refused", () => {
    expect(kindSequence([1, 0, 2], 30)).not.toContain(1);
    expect(() => kindSequence([0, 0], 5)).toThrow();
    expect(() => kindSequence([1.5, 1], 5)).toThrow();
  });

  test("arrivals are due at i/rate whatever the answers do, and a duration holds rate × seconds of them", () => {
    expect(dueAtMs(0, 200)).toBe(0);
    expect(dueAtMs(200, 200)).toBe(1000);
    expect(dueAtMs(3, 4)).toBe(750);
    expect(arrivalsIn(90_000, 200)).toBe(18_000);
    expect(arrivalsIn(1_000, 3)).toBe(3);
  });
});

describe("the minutes", () => {
  const minuteMs = 1_000; // scaled down: a "minute" of 1 s
  const kind = (name: (typeof SOAK_KINDS)[number]) => SOAK_KINDS.indexOf(name);

  test("records go to the minute they were due in, after the warm-up; partial minutes and the warm-up are left out", () => {
    const records: SoakRecord[] = [
      [kind("payment"), 100, 999, 200], // warm-up
      [kind("payment"), 500, 10, 201],
      [kind("payment"), 900, 30, 500], // an error still has a latency
      [kind("status"), 1_400, 2, 200],
      [kind("payment"), 1_600, 50, 0], // no answer
      [kind("list"), 2_600, 7, 200], // past the last whole minute
    ];
    const samples: RssSample[] = [
      { atMs: 0, gatewayMb: 500, simulatorsMb: 1 },
      { atMs: 600, gatewayMb: 100, simulatorsMb: 50 },
      { atMs: 800, gatewayMb: 120, simulatorsMb: 40 },
      { atMs: 1_300, gatewayMb: 90, simulatorsMb: null },
      { atMs: 1_500, gatewayMb: 110, simulatorsMb: null },
      { atMs: 1_900, gatewayMb: null, simulatorsMb: null },
    ];
    const minutes = aggregateMinutes(records, samples, { warmupMs: 400, durationMs: 2_900, minuteMs, machineCores: [1.5], gatewayCores: [0.9] });
    expect(minutes.map((m) => m.minute)).toEqual([1, 2]);
    const [one, two] = minutes;
    expect(one!.kinds.payment).toEqual({ requests: 2, errors: 1, p50Ms: 10, p99Ms: 30 });
    expect(one!.requests).toBe(2);
    expect(one!.achievedPerS).toBe(2);
    expect(one!.gatewayRssMb).toBe(120); // the largest of the minute's samples, not the warm-up's 500
    expect(one!.simulatorsRssMb).toBe(50);
    expect(one!.machineCores).toBe(1.5);
    expect(one!.gatewayCores).toBe(0.9);
    expect(two!.kinds.status).toEqual({ requests: 1, errors: 0, p50Ms: 2, p99Ms: 2 });
    expect(two!.kinds.payment.errors).toBe(1);
    expect(two!.kinds.list.requests).toBe(0);
    expect(two!.kinds.list.p99Ms).toBeNull();
    expect(two!.gatewayRssMb).toBe(110);
    expect(two!.simulatorsRssMb).toBeNull();
    expect(two!.machineCores).toBeNull();
    expect(two!.gatewayCores).toBeNull();
  });

  test("percentiles are nearest-rank over the sorted latencies", () => {
    const values = Array.from({ length: 100 }, (_, i) => i + 1);
    expect(percentile(values, 50)).toBe(50);
    expect(percentile(values, 99)).toBe(99);
    expect(percentile([], 99)).toBeNull();
  });
});

describe("the verdicts", () => {
  const minuteWith = (rss: number, p99: number, requests = 1_000, simulators = 100) =>
    aggregateMinutes(
      Array.from({ length: requests }, (_, i): SoakRecord => [i % SOAK_KINDS.length, i / requests, p99, 200]),
      [{ atMs: 0.5, gatewayMb: rss, simulatorsMb: simulators }],
      { warmupMs: 0, durationMs: 1, minuteMs: 1 },
    )[0]!;

  test("flat when the last minute's RSS is within 10 % and every p99 within 25 % of the first's; a fall is flat", () => {
    const verdicts = soakVerdicts([minuteWith(200, 40), minuteWith(150, 40), minuteWith(219, 49)]);
    expect(verdicts.map((v) => v.verdict)).toEqual(["flat", "flat", "flat", "flat", "flat", "flat"]);
    expect(verdicts[0]!.change).toBeCloseTo(0.095, 3);
    expect(soakVerdicts([minuteWith(200, 40), minuteWith(150, 20)]).every((v) => v.verdict === "flat")).toBe(true);
  });

  test("grew when the RSS is more than 10 % up, or a p99 more than 25 % up", () => {
    const rss = soakVerdicts([minuteWith(200, 40), minuteWith(221, 40)]);
    expect(rss[0]).toMatchObject({ what: "gateway RSS (MB)", verdict: "grew" });
    expect(rss.slice(1).every((v) => v.verdict === "flat")).toBe(true);
    const p99 = soakVerdicts([minuteWith(200, 40), minuteWith(200, 51)]);
    expect(p99[0]!.verdict).toBe("flat");
    expect(p99.slice(1).every((v) => v.verdict === "grew")).toBe(true);
  });

  test("nothing to judge without a reading, or without a minute", () => {
    expect(soakVerdicts([])).toEqual([]);
    const empty = aggregateMinutes([], [], { warmupMs: 0, durationMs: 2, minuteMs: 1 });
    expect(soakVerdicts(empty).every((v) => v.verdict === "n/a")).toBe(true);
  });

  test("the simulators' growth per 1,000 requests counts the requests after the first minute", () => {
    const minutes = [minuteWith(200, 40, 1_000, 100), minuteWith(200, 40, 1_000, 110), minuteWith(200, 40, 1_000, 130)];
    expect(growthPer1000(minutes, (m) => m.simulatorsRssMb)).toBeCloseTo(15, 6); // 30 MB over 2,000 requests
    expect(growthPer1000(minutes.slice(0, 1), (m) => m.simulatorsRssMb)).toBeNull();
  });
});
