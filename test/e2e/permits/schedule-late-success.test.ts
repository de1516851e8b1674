/**
 * A late success after `past_due` heals the schedule (issue 13 point 7): a renewal whose dunning ran out
 * (`past_due`) and whose charge provider B then completes after all (the customer topped up) is `active`
 * again, the period counts as paid, the next charge is the next period's — and the paid period is never
 * charged again, by the sweep, a charge job still queued for it, or a direct create. Also when the late
 * success races the last retry's outcome. Real sweeps and charge jobs against the provider B simulator;
 * the gateway's clock is moved by the test.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { confirmChargeAndApply } from "../../../src/services/permits/charge-settle.ts";
import { createPermitCharge, executePermitCharge, RenewalNotDueError } from "../../../src/services/permits/charges.ts";
import { applyRenewalOutcome, runRenewalCharge, sweepRenewals } from "../../../src/services/permits/renewals.ts";
import type { TestDatabase } from "../../support/db.ts";
import { activePermit, type PermitRig } from "../../support/permit-rig.ts";
import type { RigGateway } from "../../support/provider-b-rig.ts";
import { chargeRows, putSchedule, scheduleOf, startRenewalRig, testClock, type RecordingSimulator } from "../../support/renewal-rig.ts";
import { waitUntil } from "../../support/wait.ts";
import type { Json } from "../../support/json.ts";

const DAY = 86_400_000;
const clock = testClock(new Date("2025-04-02T08:00:00Z"));
let rig: PermitRig<RecordingSimulator>;
let sim: RecordingSimulator;
let database: TestDatabase;
let gw: RigGateway;

beforeAll(async () => {
  ({ sim, database, gw } = rig = await startRenewalRig(clock));
}, 60_000);

afterAll(() => rig?.stop());

async function eventsOf(tenantId: string, type: string) {
  return database.db
    .selectFrom("events")
    .selectAll()
    .where("tenant_id", "=", tenantId)
    .where("type", "=", type as never)
    .execute();
}

/** The schedule's row, read from the database (the API may be down during a race). */
async function scheduleRow(permitId: string) {
  return database.db.selectFrom("permit_schedules").selectAll().where("permit_id", "=", permitId).executeTakeFirstOrThrow();
}

/** Sweeps at `at` and waits until the schedule has moved off its position (period, attempt or status). */
async function sweepAt(tenantId: string, permitId: string, at: number): Promise<Json> {
  const before = await scheduleOf(gw, tenantId, permitId);
  clock.set(new Date(at));
  await sweepRenewals(gw.gateway.deps);
  return waitUntil(
    async () => {
      const now = await scheduleOf(gw, tenantId, permitId);
      return now.period !== before.period || now.attempt !== before.attempt || now.status !== before.status ? now : null;
    },
    { what: `the schedule to move on from ${before.period}#${before.attempt}`, timeoutMs: 10_000 },
  );
}

/**
 * A monthly schedule due at `due` whose every charge fails, walked through the sweep to its last dunning
 * attempt (+5 d): attempts 0–2 failed and applied, the schedule `active` at attempt 3.
 */
async function scheduleAtLastAttempt(due: number, description: string) {
  clock.set(new Date(due));
  const { tenantId } = await gw.tenantWithAccount(sim);
  const { permitId, token } = await activePermit(gw, sim, tenantId);
  expect((await sim.permitControl(token, "fail-next")).status).toBe(200);
  const schedule = await putSchedule(gw, tenantId, permitId, { amount: 2000, interval: "month", startAt: new Date(due).toISOString(), description });
  for (const [at, attempt] of [
    [due, 1],
    [due + DAY, 2],
    [due + 3 * DAY, 3],
  ] as const)
    expect(await sweepAt(tenantId, permitId, at)).toMatchObject({ status: "active", attempt });
  clock.set(new Date(due + 5 * DAY));
  return { tenantId, permitId, token, schedule };
}

/** Checks that nothing charges the paid period again: the sweep now, its charge jobs, a direct create. */
async function expectPeriodNeverChargedAgain(tenantId: string, permitId: string, scheduleId: string, period: string, charges: number) {
  await sweepRenewals(gw.gateway.deps);
  for (const attempt of [0, 3, 4]) await runRenewalCharge(gw.gateway.deps, { scheduleId, period, attempt });
  await expect(
    createPermitCharge(gw.gateway.deps, {
      tenantId,
      environment: "sandbox",
      permitId,
      amount: 2000,
      description: "encore",
      renewal: { scheduleId, period, attempt: 4 },
    }),
  ).rejects.toBeInstanceOf(RenewalNotDueError);
  await Bun.sleep(300);
  expect((await chargeRows(database, permitId)).length).toBe(charges);
}

describe("a renewal that succeeds after its schedule went past_due", () => {
  it("returns the schedule to active at the next period, counts the period as paid, and never charges it again", async () => {
    const due = new Date("2025-04-02T08:00:00Z").getTime();
    const { tenantId, permitId, token, schedule } = await scheduleAtLastAttempt(due, "Avril");
    const pastDue = await sweepAt(tenantId, permitId, due + 5 * DAY);
    expect(pastDue).toMatchObject({ status: "past_due", period: "2025-04-02", nextChargeAt: null, pastDueAt: new Date(due + 5 * DAY).toISOString() });
    expect((await chargeRows(database, permitId)).map((c) => [c.attempt, c.status])).toEqual([
      [0, "failed"],
      [1, "failed"],
      [2, "failed"],
      [3, "failed"],
    ]);

    // Days later provider B completes the last attempt's invoice after all: IPN → confirm → succeeded.
    clock.set(new Date(due + 8 * DAY));
    expect((await sim.permitControl(token, "succeed-next")).status).toBe(200);
    const last = (await chargeRows(database, permitId)).find((c) => c.attempt === 3)!;
    expect((await sim.press(last.invoice_token!, "pay")).status).toBe(200);
    const healed = await waitUntil(
      async () => {
        const now = await scheduleOf(gw, tenantId, permitId);
        return now.status === "active" ? now : null;
      },
      { what: "the schedule active again", timeoutMs: 10_000 },
    );
    expect(healed).toMatchObject({
      id: schedule.id,
      status: "active",
      period: "2025-05-02",
      attempt: 0,
      pastDueAt: null,
      nextChargeAt: "2025-05-02T08:00:00.000Z",
    });
    expect((await chargeRows(database, permitId)).find((c) => c.id === last.id)).toMatchObject({ status: "succeeded" });
    // The charge's event, recorded with the move.
    expect((await eventsOf(tenantId, "permit.charge.succeeded")).map((e) => e.data.chargeId)).toEqual([last.id]);

    // The renewal tick after the late success: April is paid, nothing charges it again.
    await expectPeriodNeverChargedAgain(tenantId, permitId, schedule.id, "2025-04-02", 4);
    clock.set(new Date(due + 20 * DAY));
    await expectPeriodNeverChargedAgain(tenantId, permitId, schedule.id, "2025-04-02", 4);

    // May is charged at its due date, once.
    const may = await sweepAt(tenantId, permitId, new Date("2025-05-02T08:00:00Z").getTime());
    expect(may).toMatchObject({ status: "active", period: "2025-06-02", attempt: 0 });
    await sweepRenewals(gw.gateway.deps);
    await Bun.sleep(300);
    expect((await chargeRows(database, permitId)).map((c) => [c.period, c.attempt, c.status])).toEqual([
      ["2025-04-02", 0, "failed"],
      ["2025-04-02", 1, "failed"],
      ["2025-04-02", 2, "failed"],
      ["2025-04-02", 3, "succeeded"],
      ["2025-05-02", 0, "succeeded"],
    ]);
    expect(sim.chargesOf(token).length).toBe(5);
  });

  it("leaves a cancelled schedule cancelled", async () => {
    const due = new Date("2025-07-07T08:00:00Z").getTime();
    const { tenantId, permitId, token } = await scheduleAtLastAttempt(due, "Juillet");
    await sweepAt(tenantId, permitId, due + 5 * DAY);
    expect((await gw.call("DELETE", `/providerB/permits/${permitId}/schedule`, tenantId)).status).toBe(200);
    const first = (await chargeRows(database, permitId)).find((c) => c.attempt === 0)!;
    expect((await sim.permitControl(token, "succeed-next")).status).toBe(200);
    expect((await sim.press(first.invoice_token!, "pay")).status).toBe(200);
    await waitUntil(async () => (await chargeRows(database, permitId)).find((c) => c.attempt === 0)!.status === "succeeded", {
      what: "the late success",
      timeoutMs: 10_000,
    });
    expect(await scheduleOf(gw, tenantId, permitId)).toMatchObject({ status: "cancelled", nextChargeAt: null });
  });
});

describe("a late success racing the last retry's outcome", () => {
  const orders = {
    "the late success first": async (apply: () => Promise<unknown>, lateSuccess: () => Promise<unknown>) => {
      await lateSuccess();
      await apply();
    },
    "past_due first": async (apply: () => Promise<unknown>, lateSuccess: () => Promise<unknown>) => {
      await apply();
      await lateSuccess();
    },
    "at once": async (apply: () => Promise<unknown>, lateSuccess: () => Promise<unknown>) => {
      await Promise.all([apply(), lateSuccess(), apply(), lateSuccess()]);
    },
  };
  let month = 8;

  for (const [order, run] of Object.entries(orders)) {
    it(`ends active at the next period, the period paid once (${order})`, async () => {
      const due = new Date(`2025-${String(month++).padStart(2, "0")}-04T08:00:00Z`).getTime();
      const { tenantId, permitId, token, schedule } = await scheduleAtLastAttempt(due, "Course");
      // The last retry's job wrote and sent its charge (failed) but has not applied the outcome yet…
      const { charge: retry } = await createPermitCharge(gw.gateway.deps, {
        tenantId,
        environment: "sandbox",
        permitId,
        amount: 2000,
        description: "Course",
        renewal: { scheduleId: schedule.id, period: schedule.period, attempt: 3 },
      });
      expect((await executePermitCharge(gw.gateway.deps, retry.id)).status).toBe("failed");
      // …when provider B completes the first attempt's invoice. Its IPN is held off (gateway down), so the
      // late success lands exactly when this test applies it.
      const first = (await chargeRows(database, permitId)).find((c) => c.attempt === 0)!;
      expect((await sim.permitControl(token, "succeed-next")).status).toBe(200);
      await gw.down();
      try {
        expect((await sim.press(first.invoice_token!, "pay")).status).toBe(200);
        await run(
          () => applyRenewalOutcome(gw.gateway.deps, retry.id),
          () => confirmChargeAndApply(gw.gateway.deps, first.id),
        );
        const row = await scheduleRow(permitId);
        const next = new Date(due);
        next.setUTCMonth(next.getUTCMonth() + 1);
        expect(row).toMatchObject({ status: "active", attempt: 0, past_due_at: null, period: next.toISOString().slice(0, 10) });
        expect(row.next_attempt_at.toISOString()).toBe(next.toISOString());
        const pastDueEvents = (await eventsOf(tenantId, "permit.schedule.past_due")).length;
        if (order === "the late success first") expect(pastDueEvents).toBe(0);
        if (order === "past_due first") expect(pastDueEvents).toBe(1);
        expect(pastDueEvents).toBeLessThanOrEqual(1);
      } finally {
        gw.up();
      }
      await expectPeriodNeverChargedAgain(tenantId, permitId, schedule.id, schedule.period, 4);
      expect((await chargeRows(database, permitId)).map((c) => [c.attempt, c.status])).toEqual([
        [0, "succeeded"],
        [1, "failed"],
        [2, "failed"],
        [3, "failed"],
      ]);
      expect(sim.chargesOf(token).length).toBe(4);
    });
  }
});
