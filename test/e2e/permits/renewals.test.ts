/**
 * Renewals over real HTTP (issue 7 point 4, contract §5 and §8): the sweep and the charge jobs against the
 * provider B simulator, with the gateway's clock (`deps.now`) moved by the test. What provider B charged is
 * counted at the simulator, what we recorded through `GET /providerB/permits/{id}/charges`.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { TEST_ENV } from "../../support/gateway.ts";
import { runRenewalCharge, sweepRenewals } from "../../../src/services/permits/renewals.ts";
import type { TestDatabase } from "../../support/db.ts";
import { activePermit, type PermitRig } from "../../support/permit-rig.ts";
import { startRigGateway, type RigGateway } from "../../support/provider-b-rig.ts";
import { testQueuePrefix, deleteKeysUnderPrefix } from "../../support/redis.ts";
import { listCharges, putSchedule, scheduleOf, startRenewalRig, testClock, type RecordingSimulator } from "../../support/renewal-rig.ts";
import { waitUntil } from "../../support/wait.ts";
import type { WebhookReceiver } from "../../support/webhook-receiver.ts";
import type { Json } from "../../support/json.ts";

const DAY = 86_400_000;
const clock = testClock(new Date("2025-01-31T09:00:00Z"));
let rig: PermitRig<RecordingSimulator>;
let sim: RecordingSimulator;
let database: TestDatabase;
let gw: RigGateway;
let receiver: WebhookReceiver;

/** Sweeps (twice at once, like two workers) and waits until the schedule has moved off `from` (period or attempt). */
async function sweepUntilMoved(tenantId: string, permitId: string, from: Json): Promise<Json> {
  await Promise.all([sweepRenewals(gw.gateway.deps), sweepRenewals(gw.gateway.deps)]);
  return waitUntil(
    async () => {
      const now = await scheduleOf(gw, tenantId, permitId);
      return now.period !== from.period || now.attempt !== from.attempt || now.status !== from.status ? now : null;
    },
    { what: `the schedule to move on from ${from.period}#${from.attempt}`, timeoutMs: 10_000 },
  );
}

/** Lets the charge jobs the sweep enqueued run, then checks nothing moved. */
async function expectNoCharge(tenantId: string, permitId: string, expectedCount: number): Promise<void> {
  await sweepRenewals(gw.gateway.deps);
  await Bun.sleep(300);
  expect((await listCharges(gw, tenantId, permitId)).length).toBe(expectedCount);
}

beforeAll(async () => {
  ({ sim, database, gw, receiver } = rig = await startRenewalRig(clock));
}, 60_000);

afterAll(() => rig?.stop());

describe("renewal schedules", () => {
  it("charges a monthly schedule exactly once per period across three periods, on the month-end rule", async () => {
    clock.set(new Date("2025-01-31T09:00:00Z"));
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await activePermit(gw, sim, tenantId);
    let schedule = await putSchedule(gw, tenantId, permitId, { amount: 5000, interval: "month", description: "Abonnement" });
    expect(schedule.nextChargeAt).toBe("2025-01-31T09:00:00.000Z");

    for (const [due, next] of [
      ["2025-01-31T09:00:00Z", "2025-02-28"],
      ["2025-02-28T09:00:00Z", "2025-03-31"],
      ["2025-03-31T09:00:00Z", "2025-04-30"],
    ] as const) {
      // Just before the due date: nothing.
      clock.set(new Date(new Date(due).getTime() - 60_000));
      await expectNoCharge(tenantId, permitId, sim.chargesOf(token).length);
      clock.set(new Date(due));
      schedule = await sweepUntilMoved(tenantId, permitId, schedule);
      expect(schedule).toMatchObject({ status: "active", period: next, attempt: 0 });
      // Sweeping again within the period charges nothing more.
      clock.advance(3_600_000);
      await expectNoCharge(tenantId, permitId, sim.chargesOf(token).length);
    }

    const charges = await listCharges(gw, tenantId, permitId);
    expect(charges.map((c) => [c.period, c.attempt, c.status, c.amount, c.scheduleId]).sort()).toEqual([
      ["2025-01-31", 0, "succeeded", 5000, schedule.id],
      ["2025-02-28", 0, "succeeded", 5000, schedule.id],
      ["2025-03-31", 0, "succeeded", 5000, schedule.id],
    ]);
    const atProvider = sim.chargesOf(token);
    expect(atProvider.length).toBe(3);
    expect(atProvider.map((c) => c.idempotencyKey).sort()).toEqual(charges.map((c) => c.chargeId).sort());
  });

  it("walks a failing renewal through the dunning schedule (due, +1d, +3d, +5d) to past_due, with its event delivered", async () => {
    clock.set(new Date("2025-05-10T12:00:00Z"));
    const { tenantId } = await gw.tenantWithAccount(sim);
    const hook = await gw.call("POST", "/webhooks", tenantId, { url: `${receiver.url}/dunning`, events: ["permit.schedule.past_due"] });
    expect(hook.status).toBe(200);
    const { permitId, token } = await activePermit(gw, sim, tenantId);
    expect((await sim.permitControl(token, "fail-next")).status).toBe(200);
    const due = new Date("2025-05-12T08:00:00Z").getTime();
    let schedule = await putSchedule(gw, tenantId, permitId, { amount: 4000, interval: "month", startAt: new Date(due).toISOString(), description: "Mai" });

    const retries = [
      { at: due, attempt: 1, next: due + DAY },
      { at: due + DAY, attempt: 2, next: due + 3 * DAY },
      { at: due + 3 * DAY, attempt: 3, next: due + 5 * DAY },
    ];
    for (const step of retries) {
      clock.set(new Date(step.at - 1000));
      await expectNoCharge(tenantId, permitId, step.attempt - 1);
      clock.set(new Date(step.at));
      schedule = await sweepUntilMoved(tenantId, permitId, schedule);
      expect(schedule).toMatchObject({ status: "active", period: "2025-05-12", attempt: step.attempt, nextChargeAt: new Date(step.next).toISOString() });
    }
    clock.set(new Date(due + 5 * DAY));
    schedule = await sweepUntilMoved(tenantId, permitId, schedule);
    expect(schedule).toMatchObject({ status: "past_due", nextChargeAt: null, pastDueAt: new Date(due + 5 * DAY).toISOString() });

    const charges = await listCharges(gw, tenantId, permitId);
    expect(charges.map((c) => [c.period, c.attempt, c.status, c.failReason]).sort()).toEqual(
      [0, 1, 2, 3].map((a) => ["2025-05-12", a, "failed", "insufficient_funds"]),
    );
    expect(sim.chargesOf(token).length).toBe(4);

    const receipt = await waitUntil(() => receiver.receipts.find((r) => r.path === "/dunning"), { what: "the past_due event", timeoutMs: 10_000 });
    const event = JSON.parse(receipt.body) as Json;
    expect(event).toMatchObject({ type: "permit.schedule.past_due", tenantId });
    expect(event.data).toMatchObject({
      permitId,
      scheduleId: schedule.id,
      status: "past_due",
      period: "2025-05-12",
      attempt: 3,
      failReason: "insufficient_funds",
      amount: 4000,
      currency: "XOF",
      customData: { plan: "gold", seats: 3 },
    });
    expect(event.data.chargeId).toBe(charges.find((c) => c.attempt === 3)!.chargeId);

    // A past_due schedule stops.
    clock.set(new Date(due + 40 * DAY));
    await expectNoCharge(tenantId, permitId, 4);
  });

  it("leaves a pending charge waiting — never charged again — and moves on once provider B settles it", async () => {
    clock.set(new Date("2025-06-01T10:00:00Z"));
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await activePermit(gw, sim, tenantId);
    expect((await sim.permitControl(token, "pending-next")).status).toBe(200);
    const schedule = await putSchedule(gw, tenantId, permitId, { amount: 2500, interval: "week", description: "Panier" });
    await sweepRenewals(gw.gateway.deps);
    const [pending] = await waitUntil(
      async () => {
        const charges = await listCharges(gw, tenantId, permitId);
        return charges.length === 1 && charges[0]!.invoiceToken ? charges : null;
      },
      { what: "the pending charge answered" },
    );
    expect(pending!.status).toBe("pending");
    for (let i = 0; i < 3; i++) {
      clock.advance(3_600_000);
      await expectNoCharge(tenantId, permitId, 1);
    }
    expect(sim.chargesOf(token).length).toBe(1);
    expect(await scheduleOf(gw, tenantId, permitId)).toMatchObject({ period: schedule.period, attempt: 0 });

    // Provider B completes it (IPN); the next sweep moves the schedule to the next week.
    expect((await sim.press(pending!.invoiceToken, "pay")).status).toBe(200);
    await waitUntil(async () => (await listCharges(gw, tenantId, permitId))[0]!.status === "succeeded", {
      what: "the charge settled by IPN",
      timeoutMs: 10_000,
    });
    const moved = await sweepUntilMoved(tenantId, permitId, schedule);
    expect(moved).toMatchObject({ period: "2025-06-08", attempt: 0 });
    expect(sim.chargesOf(token).length).toBe(1);
  });

  it("stops renewing once the permit is revoked", async () => {
    clock.set(new Date("2025-07-01T10:00:00Z"));
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await activePermit(gw, sim, tenantId);
    let schedule = await putSchedule(gw, tenantId, permitId, { amount: 1500, interval: "day", description: "Jour" });
    schedule = await sweepUntilMoved(tenantId, permitId, schedule);
    expect(schedule.period).toBe("2025-07-02");

    const revoked = await gw.call("DELETE", `/providerB/permits/${permitId}`, tenantId);
    expect(revoked.status).toBe(200);
    expect(await scheduleOf(gw, tenantId, permitId)).toMatchObject({ status: "cancelled", nextChargeAt: null });
    for (let day = 1; day <= 3; day++) {
      clock.set(new Date(new Date("2025-07-01T10:00:00Z").getTime() + day * DAY));
      await expectNoCharge(tenantId, permitId, 1);
    }
    expect(sim.chargesOf(token).length).toBe(1);
  });

  it("pauses a disabled tenant's schedule, and resumes with the period in progress only", async () => {
    const start = new Date("2025-08-01T10:00:00Z").getTime();
    clock.set(new Date(start));
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await activePermit(gw, sim, tenantId);
    let schedule = await putSchedule(gw, tenantId, permitId, { amount: 1200, interval: "day", description: "Jour" });
    schedule = await sweepUntilMoved(tenantId, permitId, schedule);

    await database.db.updateTable("tenants").set({ disabled: true }).where("id", "=", tenantId).execute();
    gw.gateway.deps.tenants.forget(tenantId);
    for (let day = 1; day <= 3; day++) {
      clock.set(new Date(start + day * DAY));
      await sweepRenewals(gw.gateway.deps);
      // A charge job already queued for the period finds the tenant disabled and creates nothing.
      await runRenewalCharge(gw.gateway.deps, { scheduleId: schedule.id, period: "2025-08-02", attempt: 0 });
    }
    await Bun.sleep(300);
    expect(sim.chargesOf(token).length).toBe(1);
    expect((await database.db.selectFrom("permit_charges").select("id").where("permit_id", "=", permitId).execute()).length).toBe(1);

    await database.db.updateTable("tenants").set({ disabled: false }).where("id", "=", tenantId).execute();
    gw.gateway.deps.tenants.forget(tenantId);
    clock.set(new Date(start + 3 * DAY + 3_600_000));
    await sweepRenewals(gw.gateway.deps);
    schedule = await waitUntil(
      async () => {
        const now = await scheduleOf(gw, tenantId, permitId);
        return now.period === "2025-08-05" ? now : null;
      },
      { what: "the period in progress paid" },
    );
    expect(schedule).toMatchObject({ status: "active", paused: false });
    const charges = await listCharges(gw, tenantId, permitId);
    expect(charges.map((c) => c.period).sort()).toEqual(["2025-08-01", "2025-08-04"]);
    expect(sim.chargesOf(token).length).toBe(2);
  });
});

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
