/**
 * The HTTP request metrics (contract §9) are plain numbers on the request path and prom-client's shape
 * only when scraped: the exposition must read exactly as prom-client's own Counter and Histogram would.
 */
import { describe, expect, it } from "bun:test";
import { Counter, Histogram, Registry } from "prom-client";
import { createMetrics, createRouteLabeller, HTTP_DURATION_BUCKETS } from "../../src/http/metrics.ts";

const observations: [string, string, number, number][] = [
  ["GET", "/payments/{payment_id}", 200, 0.0004],
  ["GET", "/payments/{payment_id}", 200, 0.003],
  ["POST", "other", 404, 0.2],
  ["GET", "/payments/{payment_id}", 200, 20],
  ["GET", "/health/live", 200, 0.001],
  ["DELETE", "/webhooks/{webhook_id}", 204, 0.0025],
];

describe("HTTP request metrics", () => {
  it("expose the same text as prom-client's labelled Counter and Histogram", async () => {
    const metrics = createMetrics();
    const reference = new Registry();
    const counter = new Counter({
      name: "passerelle_http_requests_total",
      help: "HTTP requests answered, by method, route template and status",
      labelNames: ["method", "route", "status"],
      registers: [reference],
    });
    const histogram = new Histogram({
      name: "passerelle_http_request_duration_seconds",
      help: "Time to answer an HTTP request",
      labelNames: ["method", "route", "status"],
      buckets: [...HTTP_DURATION_BUCKETS],
      registers: [reference],
    });
    for (const [method, route, status, seconds] of observations) {
      metrics.recordRequest(method, route, status, seconds);
      counter.inc({ method, route, status: String(status) });
      histogram.observe({ method, route, status: String(status) }, seconds);
    }
    for (const name of ["passerelle_http_requests_total", "passerelle_http_request_duration_seconds"])
      expect(await metrics.registry.getSingleMetricAsString(name)).toBe(await reference.getSingleMetricAsString(name));
    expect(await metrics.registry.metrics()).toContain('passerelle_http_requests_total{method="GET",route="/payments/{payment_id}",status="200"} 3');
  });

  it("keeps a bounded number of series: methods past the bound count as OTHER", async () => {
    const metrics = createMetrics();
    for (let i = 0; i < 3000; i++) metrics.recordRequest(`M${i}`, "/health/live", 200, 0.001);
    const text = await metrics.registry.getSingleMetricAsString("passerelle_http_requests_total");
    expect(text.split("\n").filter((line) => line.startsWith("passerelle_http_requests_total{")).length).toBeLessThanOrEqual(2049);
    expect(text).toMatch(/passerelle_http_requests_total\{method="OTHER",route="other",status="200"\} \d+/);
  });

  it("starts again from zero when the registry is reset", async () => {
    const metrics = createMetrics();
    metrics.recordRequest("GET", "/health/live", 200, 0.001);
    metrics.registry.resetMetrics();
    expect(await metrics.registry.getSingleMetricAsString("passerelle_http_request_duration_seconds")).not.toContain("method=");
  });

  it("label a request by its route's template: never the raw path, `other` when no route matches", () => {
    const routeOf = createRouteLabeller([
      { method: "GET", path: "/payments/{payment_id}" },
      { method: "POST", path: "/providerB/webhook" },
      { method: "POST", path: "/trpc/*" },
    ]);
    const request = (method: string, path: string) => new Request(`http://localhost:3000${path}`, { method });
    expect(routeOf(request("GET", "/payments/pay_01J9ZX"))).toBe("/payments/{payment_id}");
    expect(routeOf(request("POST", "/providerB/webhook?x=1"))).toBe("/providerB/webhook");
    expect(routeOf(request("POST", "/trpc/payments.get?batch=1"))).toBe("/trpc/*");
    expect(routeOf(request("GET", "/wp-admin/setup.php"))).toBe("other");
    expect(routeOf(request("DELETE", "/payments/pay_01J9ZX"))).toBe("other");
  });
});
