/**
 * Two workers renewing on one database and queue (issue 7 point 4, contract §5): each period of each schedule
 * is charged once whatever runs the sweep and the charge jobs, with every charge job run twice more at the same
 * moment. With PostgreSQL and Redis, two `passerelle worker` processes (on the wall clock, so the gateway's
 * clock is moved by the test just ahead of it); embedded, two gateways in-process on the same database. What
 * provider B charged is counted at the simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { TEST_ENV } from "../../support/gateway.ts";
import { runRenewalCharge, sweepRenewals } from "../../../src/services/permits/renewals.ts";
import type { TestDatabase } from "../../support/db.ts";
import { activePermit, type PermitRig } from "../../support/permit-rig.ts";
import { startRigGateway, type RigGateway } from "../../support/provider-b-rig.ts";
import { testQueuePrefix, deleteKeysUnderPrefix } from "../../support/redis.ts";
import { listCharges, putSchedule, startRenewalRig, testClock, type RecordingSimulator } from "../../support/renewal-rig.ts";
import { waitUntil } from "../../support/wait.ts";

const DAY = 86_400_000;
const clock = testClock(new Date());
let rig: PermitRig<RecordingSimulator>;
let sim: RecordingSimulator;
let database: TestDatabase;
let gw: RigGateway;

beforeAll(async () => {
  ({ sim, database, gw } = rig = await startRenewalRig(clock));
}, 60_000);

afterAll(() => rig?.stop());

describe("two workers on one database and queue", () => {
  it("charge each period of each schedule once", async () => {
    // Just ahead of the real clock: a worker process with the real clock never sees these periods as past
    // (and tokens minted now stay valid at the gateway's clock while the test calls the API).
    const start = Date.now() + 60_000;
    clock.set(new Date(start));
    const { tenantId } = await gw.tenantWithAccount(sim);
    const permits = await Promise.all([0, 1, 2, 3].map(() => activePermit(gw, sim, tenantId)));
    const schedules = await Promise.all(permits.map((p) => putSchedule(gw, tenantId, p.permitId, { amount: 1000, interval: "day", description: "Jour" })));

    const workers = await startTwoWorkers();
    try {
      for (let day = 0; day < 3; day++) {
        clock.set(new Date(start + day * DAY));
        // Both workers sweep at once, and every charge job also runs twice more at the same moment.
        await Promise.all([
          workers.sweepTwice(),
          ...schedules.flatMap((s) => [0, 1].map(() => workers.charge({ scheduleId: s.id, period: periodOf(start + day * DAY), attempt: 0 }))),
        ]);
        await waitUntil(
          async () => {
            const rows = await database.db
              .selectFrom("permit_schedules")
              .select("period")
              .where(
                "id",
                "in",
                schedules.map((s) => s.id),
              )
              .execute();
            return rows.every((r) => r.period === periodOf(start + (day + 1) * DAY));
          },
          { what: `every schedule past day ${day}`, timeoutMs: 15_000 },
        );
      }
      const perWorker = workers.chargeRuns();
      // Each worker ran charge jobs (the processes log one line per job run).
      if (perWorker) for (const runs of perWorker) expect(runs).toBeGreaterThan(0);
    } finally {
      await workers.stop();
    }
    clock.set(new Date(start));
    for (const { permitId, token } of permits) {
      const charges = await listCharges(gw, tenantId, permitId);
      expect(charges.map((c) => c.period).sort()).toEqual([0, 1, 2].map((d) => periodOf(start + d * DAY)));
      expect(charges.every((c) => c.status === "succeeded")).toBe(true);
      expect(sim.chargesOf(token).length).toBe(3);
    }
  }, 90_000);
});

function periodOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/**
 * Two workers on the test's database. With PostgreSQL and Redis: two `passerelle worker` processes on the
 * same database, Redis and queue prefix, fed by a gateway that only enqueues (its sweeps, plus extra copies
 * of each charge job under other job ids, so that both processes run the same (schedule, period, attempt)
 * at once). Embedded: the test's gateway and a second one in-process on the same database, each with its
 * own in-process queue — only the database's unique (schedule_id, period, attempt) guards them.
 */
async function startTwoWorkers(): Promise<{
  sweepTwice(): Promise<unknown>;
  charge(job: { scheduleId: string; period: string; attempt: number }): Promise<unknown>;
  /** Charge job runs per worker process; null in-process. */
  chargeRuns(): number[] | null;
  stop(): Promise<void>;
}> {
  if (process.env.DATABASE_URL && process.env.REDIS_URL) {
    const enqueuer = await startRigGateway({ sim, database, now: clock.now, workers: false });
    const [{ name }] = (await database.db.selectNoFrom((eb) => eb.fn<string>("current_database", []).as("name")).execute()) as [{ name: string }];
    const url = new URL(process.env.DATABASE_URL);
    url.pathname = `/${name}`;
    const env = {
      ...process.env,
      ...TEST_ENV,
      LOG_LEVEL: "info",
      DATABASE_URL: url.toString(),
      REDIS_URL: process.env.REDIS_URL,
      QUEUE_PREFIX: enqueuer.config.queuePrefix,
      PUBLIC_BASE_URL: gw.url,
      PROVIDER_B_SANDBOX_URL: `${sim.url}/sandbox-api/v1`,
      PROVIDER_B_LIVE_URL: `${sim.url}/api/v1`,
    };
    const outputs = ["", ""];
    const children = [0, 1].map((i) => {
      const child = Bun.spawn(["bun", "src/main.ts", "worker"], { env, stdout: "pipe", stderr: "pipe" });
      void (async () => {
        for await (const chunk of child.stdout) outputs[i] += new TextDecoder().decode(chunk);
      })();
      return child;
    });
    await waitUntil(() => outputs.every((out) => out.includes("passerelle started")), { what: "two worker processes started", timeoutMs: 30_000 });
    return {
      sweepTwice: () => Promise.all([sweepRenewals(enqueuer.gateway.deps), sweepRenewals(enqueuer.gateway.deps)]),
      charge: (job) => enqueuer.gateway.deps.queue.add("permits", "charge", job, { jobId: `dup.${crypto.randomUUID()}` }),
      chargeRuns: () => outputs.map((out) => out.split("\n").filter((line) => line.includes('"msg":"renewal charge job"')).length),
      async stop() {
        for (const child of children) child.kill();
        await Promise.all(children.map((child) => child.exited));
        await enqueuer.close();
      },
    };
  }
  const second = await startRigGateway({ sim, database, now: clock.now, prefix: testQueuePrefix(), workerOptions: { renewalSweepEveryMs: 3_600_000 } });
  return {
    sweepTwice: () => Promise.all([sweepRenewals(gw.gateway.deps), sweepRenewals(second.gateway.deps)]),
    charge: (job) => Promise.all([runRenewalCharge(second.gateway.deps, job), runRenewalCharge(gw.gateway.deps, job)]),
    chargeRuns: () => null,
    async stop() {
      await second.close();
      if (process.env.REDIS_URL) await deleteKeysUnderPrefix(process.env.REDIS_URL, second.config.queuePrefix);
    },
  };
}
