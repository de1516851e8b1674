/**
 * Prometheus metrics (contract §9), served on their own listener so they are never exposed on the public
 * port. One registry per gateway: two gateways in one process (tests) do not share counters.
 *
 * The two per-request metrics are plain numbers on the request path and become prom-client's shape only
 * when scraped: prom-client's labelled `inc`/`observe` validate and hash a labels object on every call,
 * which cost ~2.5 µs a request on Bun (5 % of a cached read's CPU), against ~0.1 µs here.
 */
import { collectDefaultMetrics, Counter, Registry, type Metric } from "prom-client";

export interface GatewayMetrics {
  registry: Registry;
  /** Counts one answered request and observes its duration (`passerelle_http_requests_total`, `…_duration_seconds`). */
  recordRequest(method: string, status: number, seconds: number): void;
}

/** Upper bounds of the duration histogram, in seconds. */
export const HTTP_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15] as const;

/** Distinct (method, status) pairs kept; any other method is counted as `OTHER` (a client chooses the method). */
const MAX_SERIES = 256;

/** One (method, status) pair: its count, the sum of its durations, and its per-bucket (not cumulative) counts. */
interface Series {
  labels: { method: string; status: string };
  count: number;
  sum: number;
  buckets: Float64Array;
}

interface Sample {
  labels: Record<string, string | number>;
  sharedLabels?: Record<string, string>;
  value: number;
  metricName: string;
}

/** A fresh registry with the process metrics and the HTTP request metrics. */
export function createMetrics(): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "passerelle_" });
  const series = new Map<string, Series>();

  new Counter({
    name: "passerelle_http_requests_total",
    help: "HTTP requests answered, by method and status",
    labelNames: ["method", "status"] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const entry of series.values()) this.inc(entry.labels, entry.count);
    },
  });

  const durationName = "passerelle_http_request_duration_seconds";
  const durationSamples = (): Sample[] => {
    const samples: Sample[] = [];
    for (const entry of series.values()) {
      let cumulative = 0;
      HTTP_DURATION_BUCKETS.forEach((bound, i) => {
        cumulative += entry.buckets[i]!;
        samples.push({ labels: { le: bound }, sharedLabels: entry.labels, value: cumulative, metricName: `${durationName}_bucket` });
      });
      samples.push({ labels: { le: "+Inf" }, sharedLabels: entry.labels, value: entry.count, metricName: `${durationName}_bucket` });
      samples.push({ labels: {}, sharedLabels: entry.labels, value: entry.sum, metricName: `${durationName}_sum` });
      samples.push({ labels: {}, sharedLabels: entry.labels, value: entry.count, metricName: `${durationName}_count` });
    }
    return samples;
  };
  const shape = (values: Sample[]) => ({ name: durationName, help: "Time to answer an HTTP request", type: "histogram", values, aggregator: "sum" });
  // A metric prom-client's registry formats like its own Histogram (same names, labels and order).
  const duration = {
    name: durationName,
    help: "Time to answer an HTTP request",
    type: "histogram",
    aggregator: "sum",
    getForPromString: async () => shape(durationSamples()),
    get: async () => shape(durationSamples().map(({ labels, sharedLabels, value, metricName }) => ({ labels: { ...sharedLabels, ...labels }, value, metricName }))),
    reset: () => {
      series.clear();
      byMethod.clear();
    },
  };
  registry.registerMetric(duration as unknown as Metric);

  // Looked up by method then status: no key string built per request.
  const byMethod = new Map<string, Map<number, Series>>();
  const seriesFor = (method: string, status: number): Series => {
    let byStatus = byMethod.get(method);
    let entry = byStatus?.get(status);
    if (!entry) {
      if (series.size >= MAX_SERIES && method !== "OTHER") return seriesFor("OTHER", status);
      entry = { labels: { method, status: String(status) }, count: 0, sum: 0, buckets: new Float64Array(HTTP_DURATION_BUCKETS.length) };
      series.set(`${method} ${status}`, entry);
      if (!byStatus) byMethod.set(method, (byStatus = new Map()));
      byStatus.set(status, entry);
    }
    return entry;
  };

  return {
    registry,
    recordRequest(method, status, seconds) {
      const entry = seriesFor(method, status);
      entry.count += 1;
      entry.sum += seconds;
      for (let i = 0; i < HTTP_DURATION_BUCKETS.length; i++) {
        if (seconds <= HTTP_DURATION_BUCKETS[i]!) {
          entry.buckets[i]! += 1;
          break;
        }
      }
    },
  };
}

/** The metrics listener's fetch handler. */
export function metricsFetch(metrics: GatewayMetrics): (request: Request) => Promise<Response> {
  return async (request) => {
    if (new URL(request.url).pathname !== "/metrics") return new Response("Not Found", { status: 404 });
    return new Response(await metrics.registry.metrics(), { headers: { "content-type": metrics.registry.contentType } });
  };
}
