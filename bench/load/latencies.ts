/**
 * Every latency of a load run, kept exactly (percentiles are exact, not estimated), for both Bun load
 * generators.
 */
export interface LatencySummary {
  p50: number | null;
  p90: number | null;
  p99: number | null;
  max: number | null;
  mean: number | null;
}

/** Growable store of latencies in milliseconds. */
export class Latencies {
  private values = new Float64Array(1 << 16);
  count = 0;
  add(ms: number): void {
    if (this.count === this.values.length) {
      const bigger = new Float64Array(this.values.length * 2);
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[this.count++] = ms;
  }
  summary(): LatencySummary {
    const sorted = this.values.subarray(0, this.count).sort();
    if (this.count === 0) return { p50: null, p90: null, p99: null, max: null, mean: null };
    const at = (q: number) => sorted[Math.min(this.count - 1, Math.floor(q * this.count))]!;
    let sum = 0;
    for (const v of sorted) sum += v;
    return { p50: at(0.5), p90: at(0.9), p99: at(0.99), max: at(1), mean: sum / this.count };
  }
}
