// The in-process queue and a gateway's held first sync steps on virtual time (issue 26 point 7): what waits
// on a due time runs when the test's clock reaches it, never before, without the test waiting for it.
import { describe, expect, it } from "bun:test";
import type { JobQueue } from "../../src/jobs/mod.ts";
import { createMemoryQueue } from "../../src/jobs/mod.ts";
import { createFirstSyncHold } from "../../src/services/direct-payments/first-sync.ts";
import { virtualTime } from "../support/virtual-time.ts";
import { waitUntil } from "../support/wait.ts";

async function withQueue(run: (queue: JobQueue, time: ReturnType<typeof virtualTime>) => Promise<void>): Promise<void> {
  const time = virtualTime(new Date("2026-03-01T10:00:00Z"));
  const queue = createMemoryQueue({ timers: time.timers });
  try {
    await run(queue, time);
  } finally {
    await queue.close();
  }
}

describe("the in-process queue on virtual time", () => {
  it("runs a delayed job when the clock reaches its due time, not a millisecond before", async () => {
    await withQueue(async (queue, time) => {
      const ran: string[] = [];
      queue.process("virtual", async (job) => void ran.push(`${job.id}@${time.now().toISOString()}`));
      await queue.start();
      await queue.add("virtual", "step", {}, { jobId: "in-5s", delayMs: 5_000 });
      await queue.add("virtual", "step", {}, { jobId: "in-15s", delayMs: 15_000 });
      await time.advance(4_999);
      expect(ran).toEqual([]);
      expect(await queue.has("virtual", "in-5s")).toBe(true);
      await time.advance(1);
      await waitUntil(() => ran.length === 1, { what: "the 5 s job" });
      await time.advance(10_000);
      await waitUntil(() => ran.length === 2, { what: "the 15 s job" });
      expect(ran).toEqual(["in-5s@2026-03-01T10:00:05.000Z", "in-15s@2026-03-01T10:00:15.000Z"]);
    });
  });

  it("waits a failed attempt's backoff on the clock before the retry", async () => {
    await withQueue(async (queue, time) => {
      const attempts: number[] = [];
      queue.process("virtual", async (job) => {
        attempts.push(job.attempt);
        if (job.attempt < 3) throw new Error("not yet");
      });
      await queue.start();
      await queue.add("virtual", "flaky", {}, { jobId: "flaky", attempts: 3, backoff: { type: "exponential", delayMs: 60_000 } });
      await waitUntil(() => attempts.length === 1, { what: "the first attempt" });
      await time.advance(59_999);
      expect(attempts).toEqual([1]);
      await time.advance(1);
      await waitUntil(() => attempts.length === 2, { what: "the retry after a minute" });
      await time.advance(119_999);
      expect(attempts).toEqual([1, 2]);
      await time.advance(1);
      await waitUntil(async () => !(await queue.has("virtual", "flaky")), { what: "the third attempt to succeed" });
      expect(attempts).toEqual([1, 2, 3]);
    });
  });

  it("repeats a job every interval of the clock", async () => {
    await withQueue(async (queue, time) => {
      let runs = 0;
      queue.process("virtual", async () => void runs++);
      await queue.start();
      await queue.repeat("virtual", "hourly", 3_600_000, "sweep", {});
      await waitUntil(() => runs === 1, { what: "the first run, due at once" });
      for (let hour = 2; hour <= 4; hour++) {
        await time.advance(3_600_000);
        await waitUntil(() => runs === hour, { what: `run ${hour}` });
      }
      await time.advance(3_599_999);
      expect(runs).toBe(4);
    });
  });
});

describe("a gateway's held first sync steps on virtual time", () => {
  it("enqueues a payment's step 0 once the clock is 5 s past its creation", async () => {
    const time = virtualTime(new Date("2026-03-01T10:00:00Z"));
    const added: { queue: string; jobId: string | undefined }[] = [];
    const queue = {
      driver: "memory",
      async add(name: string, _job: string, _data: unknown, opts?: { jobId?: string }) {
        added.push({ queue: name, jobId: opts?.jobId });
      },
    } as unknown as JobQueue;
    const hold = createFirstSyncHold(time.timers);
    const deps = { queue, logger: { warn() {} } as never, now: () => time.now() };
    hold.hold(deps, { id: "pay_virtual", provider: "providerA", createdAt: time.now() });
    await time.advance(4_999);
    expect(added).toEqual([]);
    expect(hold.size).toBe(1);
    await time.advance(1);
    await waitUntil(() => added.length === 1, { what: "step 0 enqueued" });
    expect(added).toEqual([{ queue: "providerA-sync", jobId: "pay_virtual.sync0" }]);
    expect(hold.size).toBe(0);
  });
});
