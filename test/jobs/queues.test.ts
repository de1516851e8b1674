/**
 * `src/jobs/queues.ts` on both drivers (BullMQ when REDIS_URL is set): each typed enqueue puts its job on the
 * queue, under the job name, job id and data that the jobs already in Redis have — written out here as
 * literals, so that renaming any of them fails this test (jobs in flight across a deploy must keep running).
 */
import { afterEach, describe, expect, it } from "bun:test";
import {
  enqueueDelivery,
  enqueueIpn,
  enqueueManualDelivery,
  enqueueRenewalCharge,
  isDeliveryJobLive,
  isIpnJobLive,
  lostLeaseJobId,
  scheduleRenewalSweep,
  scheduleSweeper,
  syncQueueOf,
} from "../../src/jobs/queues.ts";
import { createBullmqQueue, createMemoryQueue, type JobContext, type JobQueue } from "../../src/jobs/mod.ts";
import { testQueuePrefix, cleanUpPrefixAfterAll } from "../support/redis.ts";
import { waitUntil } from "../support/wait.ts";

const REDIS_URL = process.env.REDIS_URL;
const filePrefix = testQueuePrefix();

cleanUpPrefixAfterAll(REDIS_URL, filePrefix);

interface Warning {
  fields: Record<string, unknown>;
  message: string;
}

function describeQueues(title: string, make: () => JobQueue, skip = false): void {
  describe.skipIf(skip)(title, () => {
    const open: JobQueue[] = [];
    afterEach(async () => {
      await Promise.all(open.splice(0).map((queue) => queue.close()));
    });
    const rig = () => {
      const queue = make();
      open.push(queue);
      const warnings: Warning[] = [];
      const logger = { warn: (fields: Record<string, unknown>, message: string) => void warnings.push({ fields, message }) };
      return { queue, warnings, deps: { queue, logger, now: () => new Date(1_750_000_000_000) } };
    };

    it("puts each job on its queue under its job name, job id and data", async () => {
      const { queue, deps, warnings } = rig();
      expect(await enqueueDelivery(deps, { deliveryId: "dlv_1", attempt: 1 })).toBe(true);
      expect(await enqueueDelivery(deps, { deliveryId: "dlv_1", attempt: 3 }, { delayMs: 60_000 })).toBe(true);
      expect(await enqueueDelivery(deps, { deliveryId: "dlv_2", attempt: 2 }, { jobId: lostLeaseJobId("dlv_2", 2, new Date(1_700_000_000_000)) })).toBe(true);
      expect(await enqueueIpn(deps, 42)).toBe(true);
      await enqueueRenewalCharge(deps, { scheduleId: "sch_1", period: "2026-01", attempt: 2 });
      expect(warnings).toEqual([]);

      // Nothing runs yet: every job waits under the id the queue has always used.
      expect(await queue.has("webhooks", "dlv_1")).toBe(true);
      expect(await queue.has("webhooks", "dlv_1.3")).toBe(true);
      expect(await queue.has("webhooks", "dlv_2.2.lease1700000000000")).toBe(true);
      expect(await queue.has("ipn", "ipn42")).toBe(true);
      expect(await queue.has("permits", "sch_1.2026-01.2")).toBe(true);
      expect(await isDeliveryJobLive(deps, "dlv_1")).toBe(true);
      expect(await isDeliveryJobLive(deps, "dlv_1.2")).toBe(false);
      expect(await isIpnJobLive(deps, 42)).toBe(true);
      expect(await isIpnJobLive(deps, 43)).toBe(false);

      // A manual retry of an attempt whose job is live gets an id of its own, so it runs now.
      expect(await enqueueManualDelivery(deps, { deliveryId: "dlv_1", attempt: 1 })).toBe(true);
      expect(await queue.has("webhooks", "dlv_1.manual1750000000000")).toBe(true);
      expect(await enqueueManualDelivery(deps, { deliveryId: "dlv_3", attempt: 2 })).toBe(true);
      expect(await queue.has("webhooks", "dlv_3.2")).toBe(true);

      const ran: Array<Pick<JobContext, "queue" | "name" | "id" | "data">> = [];
      const record = async (job: JobContext<unknown>) => void ran.push({ queue: job.queue, name: job.name, id: job.id, data: job.data });
      for (const name of ["webhooks", "ipn", "permits"]) queue.process(name, record, { concurrency: 5 });
      await queue.start();
      await waitUntil(() => ran.length >= 6 || undefined, { timeoutMs: 10_000, what: "the due jobs to run" });
      const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id);
      expect(ran.sort(byId)).toEqual(
        [
          { queue: "webhooks", name: "deliver", id: "dlv_1", data: { deliveryId: "dlv_1", attempt: 1 } },
          { queue: "webhooks", name: "deliver", id: "dlv_1.manual1750000000000", data: { deliveryId: "dlv_1", attempt: 1 } },
          { queue: "webhooks", name: "deliver", id: "dlv_2.2.lease1700000000000", data: { deliveryId: "dlv_2", attempt: 2 } },
          { queue: "webhooks", name: "deliver", id: "dlv_3.2", data: { deliveryId: "dlv_3", attempt: 2 } },
          { queue: "ipn", name: "process-ipn", id: "ipn42", data: { ipnId: 42 } },
          { queue: "permits", name: "charge", id: "sch_1.2026-01.2", data: { scheduleId: "sch_1", period: "2026-01", attempt: 2 } },
        ].sort(byId),
      );
      // The delayed attempt is still waiting for its time.
      expect(await queue.has("webhooks", "dlv_1.3")).toBe(true);
    });

    it("schedules the sweeper and the renewal sweep under their scheduler ids and job name", async () => {
      const { queue, deps } = rig();
      const ran: Array<Pick<JobContext, "queue" | "name" | "id" | "data">> = [];
      const record = async (job: JobContext<unknown>) => void ran.push({ queue: job.queue, name: job.name, id: job.id, data: job.data });
      queue.process("sweeper", record);
      queue.process("permits", record);
      await scheduleSweeper(deps, 60_000);
      await scheduleRenewalSweep(deps, 60_000);
      await queue.start();
      await waitUntil(() => ran.length >= 2 || undefined, { timeoutMs: 10_000, what: "both sweeps' first runs" });
      const sweeper = ran.find((job) => job.queue === "sweeper");
      const renewals = ran.find((job) => job.queue === "permits");
      expect(sweeper).toMatchObject({ name: "sweep", data: {} });
      expect(sweeper?.id).toStartWith("repeat:sweep:");
      expect(renewals).toMatchObject({ name: "sweep", data: {} });
      expect(renewals?.id).toStartWith("repeat:renewals:");
    });

    it("a failed enqueue: a delivery and an IPN are logged and left to the sweeper, a renewal charge rejects", async () => {
      const { queue, deps, warnings } = rig();
      await queue.close();
      expect(await enqueueDelivery(deps, { deliveryId: "dlv_9", attempt: 2 })).toBe(false);
      expect(await enqueueIpn(deps, 9)).toBe(false);
      expect(warnings.map((w) => w.message)).toEqual([
        "could not enqueue a delivery; the sweeper will pick it up",
        "could not enqueue an IPN; the sweeper will",
      ]);
      expect(warnings[0]?.fields).toMatchObject({ deliveryId: "dlv_9", attempt: 2, jobId: "dlv_9.2" });
      await expect(enqueueRenewalCharge(deps, { scheduleId: "sch_9", period: "2026-02", attempt: 1 })).rejects.toThrow();
    });
  });
}

describe("sync queue names", () => {
  it("are <provider>-sync", () => {
    expect(syncQueueOf("providerA")).toBe("providerA-sync");
    expect(syncQueueOf("providerB")).toBe("providerB-sync");
  });
});

describeQueues("jobs/queues — memory driver", () => createMemoryQueue({}));
let bullmqInstances = 0;
describeQueues("jobs/queues — BullMQ driver", () => createBullmqQueue({ redisUrl: REDIS_URL!, prefix: `${filePrefix}:${++bullmqInstances}` }), !REDIS_URL);
