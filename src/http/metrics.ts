/**
 * Prometheus metrics (contract §9), served on their own listener so they are never exposed on the public
 * port. One registry per gateway: two gateways in one process (tests) do not share counters.
 */
import { collectDefaultMetrics, Counter, Histogram, Registry } from "prom-client";

export interface GatewayMetrics {
  registry: Registry;
  httpRequests: Counter<"method" | "status">;
  httpDuration: Histogram<"method" | "status">;
}

/** A fresh registry with the process metrics and the HTTP request metrics. */
export function createMetrics(): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "passerelle_" });
  const httpRequests = new Counter({
    name: "passerelle_http_requests_total",
    help: "HTTP requests answered, by method and status",
    labelNames: ["method", "status"] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: "passerelle_http_request_duration_seconds",
    help: "Time to answer an HTTP request",
    labelNames: ["method", "status"] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15],
    registers: [registry],
  });
  return { registry, httpRequests, httpDuration };
}

/** The metrics listener's fetch handler. */
export function metricsFetch(metrics: GatewayMetrics): (request: Request) => Promise<Response> {
  return async (request) => {
    if (new URL(request.url).pathname !== "/metrics") return new Response("Not Found", { status: 404 });
    return new Response(await metrics.registry.metrics(), { headers: { "content-type": metrics.registry.contentType } });
  };
}
