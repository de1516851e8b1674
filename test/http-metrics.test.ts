/**
 * The HTTP request metrics (contract §9) are plain numbers on the request path and prom-client's shape
 * only when scraped: the exposition must read exactly as prom-client's own Counter and Histogram would.
 */
import { describe, expect, it } from "bun:test";
import { Counter, Histogram, Registry } from "prom-client";
import { createMetrics, HTTP_DURATION_BUCKETS } from "../src/http/metrics.ts";

const observations: [string, number, number][] = [
  ["GET", 200, 0.0004],
  ["GET", 200, 0.003],
  ["POST", 404, 0.2],
  ["GET", 200, 20],
  ["GET", 200, 0.001],
  ["DELETE", 204, 0.0025],
];

describe("HTTP request metrics", () => {
  it("expose the same text as prom-client's labelled Counter and Histogram", async () => {
    const metrics = createMetrics();
    const reference = new Registry();
    const counter = new Counter({ name: "passerelle_http_requests_total", help: "HTTP requests answered, by method and status", labelNames: ["method", "status"], registers: [reference] });
    const histogram = new Histogram({
      name: "passerelle_http_request_duration_seconds",
      help: "Time to answer an HTTP request",
      labelNames: ["method", "status"],
      buckets: [...HTTP_DURATION_BUCKETS],
      registers: [reference],
    });
    for (const [method, status, seconds] of observations) {
      metrics.recordRequest(method, status, seconds);
      counter.inc({ method, status: String(status) });
      histogram.observe({ method, status: String(status) }, seconds);
    }
    for (const name of ["passerelle_http_requests_total", "passerelle_http_request_duration_seconds"])
      expect(await metrics.registry.getSingleMetricAsString(name)).toBe(await reference.getSingleMetricAsString(name));
    expect(await metrics.registry.metrics()).toContain('passerelle_http_requests_total{method="GET",status="200"} 4');
  });

  it("keeps a bounded number of series: methods past the bound count as OTHER", async () => {
    const metrics = createMetrics();
    for (let i = 0; i < 300; i++) metrics.recordRequest(`M${i}`, 200, 0.001);
    const text = await metrics.registry.getSingleMetricAsString("passerelle_http_requests_total");
    expect(text.split("\n").filter((line) => line.startsWith("passerelle_http_requests_total{")).length).toBeLessThanOrEqual(257);
    expect(text).toMatch(/passerelle_http_requests_total\{method="OTHER",status="200"\} \d+/);
  });

  it("starts again from zero when the registry is reset", async () => {
    const metrics = createMetrics();
    metrics.recordRequest("GET", 200, 0.001);
    metrics.registry.resetMetrics();
    expect(await metrics.registry.getSingleMetricAsString("passerelle_http_request_duration_seconds")).not.toContain("method=");
  });
});
