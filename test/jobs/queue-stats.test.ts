/**
 * `JobQueue.stats()` (issue 18, point 4): each queue's depth (waiting + delayed + active) and the age of its
 * oldest waiting job, on both drivers; and the metrics built on it answer a scrape even when Redis does not.
 */
import { describe, expect, it } from "bun:test";
import { createMetrics, registerQueueGauges } from "../../src/http/metrics.ts";
import { createBullmqQueue, createMemoryQueue, type JobQueue } from "../../src/jobs/mod.ts";
import { testQueuePrefix, cleanUpPrefixAfterAll } from "../support/redis.ts";

const REDIS_URL = process.env.REDIS_URL;
const filePrefix = testQueuePrefix();
let instances = 0;

cleanUpPrefixAfterAll(REDIS_URL, filePrefix);

function describeStats(title: string, make: () => JobQueue, skip = false): void {
  describe.skipIf(skip)(title, () => {
    it("counts waiting, delayed and active jobs per queue, and how long the oldest has waited", async () => {
      const jobs = make();
      try {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let running = false;
        jobs.process("busy", async () => {
          running = true;
          await held;
        });
        await jobs.start();
        await jobs.add("busy", "hold", {}, { jobId: "active-1" });
        await jobs.add("busy", "wait", {}, { jobId: "waiting-1" });
        await jobs.add("busy", "later", {}, { jobId: "delayed-1", delayMs: 60_000 });
        // No worker on this one: its job waits.
        await jobs.add("idle", "wait", {}, { jobId: "waiting-2" });
        const deadline = Date.now() + 5000;
        while (!running && Date.now() < deadline) await Bun.sleep(10);
        await Bun.sleep(1100);

        const stats = await jobs.stats!();
        const byQueue = Object.fromEntries(stats.map((entry) => [entry.queue, entry]));
        expect(byQueue.busy?.depth).toBe(3);
        expect(byQueue.idle?.depth).toBe(1);
        expect(byQueue.idle!.oldestWaitingSeconds).toBeGreaterThanOrEqual(1);
        expect(byQueue.idle!.oldestWaitingSeconds).toBeLessThan(30);
        release();
      } finally {
        await jobs.close();
      }
    }, 15_000);
  });
}

describeStats("JobQueue.stats — memory driver", () => createMemoryQueue());
describeStats(
  `JobQueue.stats — bullmq driver${REDIS_URL ? "" : " (SKIPPED: set REDIS_URL to run it)"}`,
  () => createBullmqQueue({ redisUrl: REDIS_URL!, prefix: `${filePrefix}:${++instances}` }),
  !REDIS_URL,
);

describe("the queue metrics", () => {
  it("are exposed per queue on scrape", async () => {
    const jobs = createMemoryQueue();
    const metrics = createMetrics();
    registerQueueGauges(metrics.registry, jobs, { warn: () => {} });
    await jobs.add("webhooks", "deliver", {}, { jobId: "d1" });
    const text = await metrics.registry.metrics();
    expect(text).toContain('passerelle_queue_depth{queue="webhooks"} 1');
    expect(text).toMatch(/^passerelle_queue_oldest_waiting_seconds\{queue="webhooks"\} \d/m);
    await jobs.close();
  });

  it("do not hold a scrape when Redis does not answer: it answers in bounded time, logging why", async () => {
    const jobs = createBullmqQueue({ redisUrl: "redis://127.0.0.1:1", prefix: `${filePrefix}:down`, timeoutMs: 500 });
    const metrics = createMetrics();
    const warnings: string[] = [];
    registerQueueGauges(metrics.registry, jobs, { warn: (_fields, message) => warnings.push(message) });
    await jobs.add("webhooks", "deliver", {}).catch(() => undefined);
    const started = performance.now();
    const text = await metrics.registry.metrics();
    expect(performance.now() - started).toBeLessThan(3000);
    expect(text).toContain("# TYPE passerelle_queue_depth gauge");
    expect(text).toContain("passerelle_http_requests_total");
    expect(warnings).toContain("could not read the job queues for the metrics");
    await jobs.close();
  }, 10_000);
});
