/**
 * Prometheus metrics (contract §9), served on their own listener so they are never exposed on the public
 * port. One registry per gateway: two gateways in one process (tests) do not share counters.
 *
 * The two per-request metrics are plain numbers on the request path and become prom-client's shape only
 * when scraped: prom-client's labelled `inc`/`observe` validate and hash a labels object on every call,
 * which cost ~2.5 µs a request on Bun (5 % of a cached read's CPU), against ~0.1 µs here.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry, type Metric } from "prom-client";
import type { JobQueue } from "../jobs/queue.ts";
import { createRouteTable, type RouteHandler } from "./route-table.ts";

/**
 * How a provider call ended: answered and accepted (`ok`), refused (4xx, a refusal code), failed (`error`: 5xx,
 * garbage, no connection), or no answer in time (`timeout`).
 */

export type { ProviderCallOutcome } from "../providers/context.ts";

export type { DeliveryOutcome, ServiceMetrics } from "../services/metrics.ts";
import type { ServiceMetrics } from "../services/metrics.ts";

export interface GatewayMetrics extends ServiceMetrics {
  registry: Registry;
  /**
   * Counts one answered request and observes its duration (`passerelle_http_requests_total`, `…_duration_seconds`).
   * `route` is the template of the route that answered (`/payments/{payment_id}`), never the raw path.
   */
  recordRequest(method: string, route: string, status: number, seconds: number): void;
}

/** Upper bounds of the duration histogram, in seconds. */
export const HTTP_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15] as const;

/** Distinct (method, route, status) series kept; past it, a new one counts as method `OTHER`, route `other` (a client chooses the method). */
const MAX_SERIES = 2048;

/** One (method, route, status) series: its count, the sum of its durations, and its per-bucket (not cumulative) counts. */
interface Series {
  labels: { method: string; route: string; status: string };
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
    help: "HTTP requests answered, by method, route template and status",
    labelNames: ["method", "route", "status"] as const,
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
    get: async () =>
      shape(durationSamples().map(({ labels, sharedLabels, value, metricName }) => ({ labels: { ...sharedLabels, ...labels }, value, metricName }))),
    reset: () => {
      series.clear();
      byRoute.clear();
    },
  };
  registry.registerMetric(duration as unknown as Metric);

  // Looked up by route, method then status: no key string built per request.
  const byRoute = new Map<string, Map<string, Map<number, Series>>>();
  const seriesFor = (method: string, route: string, status: number): Series => {
    let byMethod = byRoute.get(route);
    let byStatus = byMethod?.get(method);
    let entry = byStatus?.get(status);
    if (!entry) {
      if (series.size >= MAX_SERIES && method !== "OTHER") return seriesFor("OTHER", "other", status);
      const labels = { method, route, status: String(status) };
      entry = { labels, count: 0, sum: 0, buckets: new Float64Array(HTTP_DURATION_BUCKETS.length) };
      series.set(`${method} ${route} ${status}`, entry);
      if (!byMethod) byRoute.set(route, (byMethod = new Map()));
      if (!byStatus) byMethod.set(method, (byStatus = new Map()));
      byStatus.set(status, entry);
    }
    return entry;
  };

  // Provider calls and delivery attempts each wait on a network exchange: prom-client's ~2 µs per observation is noise there.
  const providerCalls = new Histogram({
    name: "passerelle_provider_call_duration_seconds",
    help: "Calls to the providers' APIs by provider, operation and outcome (ok, refused, error, timeout), and their duration",
    labelNames: ["provider", "operation", "outcome"] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30],
    registers: [registry],
  });
  const deliveries = new Histogram({
    name: "passerelle_webhook_delivery_duration_seconds",
    help: "Webhook delivery attempts sent, by what they decided (succeeded, retrying, failed), and the HTTP exchange's duration",
    labelNames: ["outcome"] as const,
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const disabledEndpoints = new Counter({
    name: "passerelle_webhook_endpoints_disabled_total",
    help: "Webhook endpoints disabled by their deliveries: answered 410 (gone) or failed every attempt for 5 days (failing)",
    labelNames: ["reason"] as const,
    registers: [registry],
  });
  // Both series exist from the start, so `increase()` in an alert sees the first endpoint disabled.
  for (const reason of ["gone", "failing"]) disabledEndpoints.inc({ reason }, 0);
  const ipns = new Counter({
    name: "passerelle_ipns_total",
    help: "Provider B IPNs answered: accepted (reason: stored, duplicate, orphan, orphan_dropped, probe, ignored) or refused (reason: why)",
    labelNames: ["outcome", "reason"] as const,
    registers: [registry],
  });

  return {
    registry,
    providerCall: (provider, operation, outcome, seconds) => providerCalls.observe({ provider, operation, outcome }, seconds),
    deliveryAttempt: (outcome, seconds) => deliveries.observe({ outcome }, seconds),
    endpointDisabled: (reason) => disabledEndpoints.inc({ reason }),
    ipn: (outcome, reason) => ipns.inc({ outcome, reason }),
    recordRequest(method, route, status, seconds) {
      const entry = seriesFor(method, route, status);
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

/**
 * The `route` label of a request the REST lookup (route-table.ts) did not answer: the template of the route
 * among `routes` that matches it (a `/*` path matches what starts with it), `other` when none does (a 404, a
 * path Elysia normalises). Built once; a lookup is a trie walk, no allocation beyond the URL's path.
 */
export function createRouteLabeller(routes: readonly { method: string; path: string }[]): (request: Request) => string {
  const table = createRouteTable();
  const label: RouteHandler = async () => new Response(null);
  const prefixes: string[] = [];
  for (const { method, path } of routes) {
    const prefix = path.endsWith("/*") ? path.slice(0, -1) : undefined;
    if (prefix === undefined) table.add(method, path, label);
    else if (!prefixes.includes(prefix)) prefixes.push(prefix);
  }
  return (request) => {
    const found = table.match(request.method, request.url);
    if (found) return found.route;
    const start = request.url.indexOf("/", request.url.indexOf("://") + 3);
    for (const prefix of prefixes) if (request.url.startsWith(prefix, start)) return `${prefix}*`;
    return "other";
  };
}

/** Bound on one scrape's read of the queues, on top of the driver's own bound. */
const QUEUE_STATS_TIMEOUT_MS = 2000;

/**
 * Registers `passerelle_queue_depth{queue}` and `passerelle_queue_oldest_waiting_seconds{queue}`, read from the
 * job queue at each scrape (`JobQueue.stats`). A queue that does not answer in time leaves the last values and is
 * logged: a scrape during a Redis outage still answers, with the other metrics.
 */
export function registerQueueGauges(registry: Registry, queue: JobQueue, logger: { warn(fields: object, message: string): void }): void {
  const stats = queue.stats?.bind(queue);
  if (!stats) return;
  let pending: Promise<void> | undefined;
  // Both gauges' collect() run in one scrape: one read of the queues serves the two.
  const read = (): Promise<void> =>
    (pending ??= (async () => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      try {
        const timeout = new Promise<never>((_, reject) => {
          timer = setTimeout(() => reject(new Error(`no answer within ${QUEUE_STATS_TIMEOUT_MS} ms`)), QUEUE_STATS_TIMEOUT_MS);
        });
        for (const { queue: name, depth: n, oldestWaitingSeconds } of await Promise.race([stats(), timeout])) {
          depth.set({ queue: name }, n);
          age.set({ queue: name }, oldestWaitingSeconds);
        }
      } catch (err) {
        logger.warn({ reason: err instanceof Error ? err.message : String(err) }, "could not read the job queues for the metrics");
      } finally {
        clearTimeout(timer);
        pending = undefined;
      }
    })());
  const depth = new Gauge({
    name: "passerelle_queue_depth",
    help: "Jobs waiting, delayed (including between retries) or active, by queue",
    labelNames: ["queue"] as const,
    registers: [registry],
    collect: read,
  });
  const age = new Gauge({
    name: "passerelle_queue_oldest_waiting_seconds",
    help: "Seconds since the oldest waiting job of the queue became due (0 when none waits), by queue",
    labelNames: ["queue"] as const,
    registers: [registry],
    collect: read,
  });
}

/** The metrics listener's fetch handler. */
export function metricsFetch(metrics: GatewayMetrics): (request: Request) => Promise<Response> {
  return async (request) => {
    if (new URL(request.url).pathname !== "/metrics") return new Response("Not Found", { status: 404 });
    return new Response(await metrics.registry.metrics(), { headers: { "content-type": metrics.registry.contentType } });
  };
}
