/**
 * Renewal charge jobs racing the schedule (contract §5): a `DELETE …/schedule` or a `PUT` that moves the
 * schedule landing after a charge job checked its schedule but before it wrote the charge; and a period
 * whose failed charge later succeeds (provider B confirms the invoice completed) — never charged again.
 * The interleavings are forced: the job's database handle runs the racing call just before the job's
 * charge transaction begins (the transaction that locks the schedule row and checks it again).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { Kysely } from "kysely";
import type { Database } from "../../../src/db/schema.ts";
import type { Deps } from "../../../src/services/deps.ts";
import { createPermitCharge, executePermitCharge, RenewalNotDueError } from "../../../src/services/permits/charges.ts";
import { applyRenewalOutcome, runRenewalCharge, sweepRenewals } from "../../../src/services/permits/renewals.ts";
import type { TestDatabase } from "../../support/db.ts";
import { activePermit, type PermitRig } from "../../support/permit-rig.ts";
import type { RigGateway } from "../../support/provider-b-rig.ts";
import { chargeRows, putSchedule, scheduleOf, schedulePath, startRenewalRig, testClock, type RecordingSimulator } from "../../support/renewal-rig.ts";
import { waitUntil } from "../../support/wait.ts";

const DAY = 86_400_000;
const clock = testClock(new Date("2025-03-10T09:00:00Z"));
let rig: PermitRig<RecordingSimulator>;
let sim: RecordingSimulator;
let database: TestDatabase;
let gw: RigGateway;

async function chargePayments(tenantId: string) {
  return database.db.selectFrom("payments").select("id").where("tenant_id", "=", tenantId).where("kind", "=", "permit_charge").execute();
}

/**
 * The gateway's deps, with a database handle that runs `race` once, just before the first transaction
 * begins — in a renewal job, after its checks of the schedule and before its charge is written.
 */
function depsRacedBy(race: () => Promise<unknown>): Deps {
  const real = gw.gateway.deps.db;
  let raced = false;
  const db = new Proxy(real, {
    get(target, property) {
      if (property === "transaction")
        return () => {
          const builder = target.transaction();
          return {
            execute: async (callback: Parameters<typeof builder.execute>[0]) => {
              if (!raced) {
                raced = true;
                await race();
              }
              return builder.execute(callback);
            },
          };
        };
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  }) as Kysely<Database>;
  return { ...gw.gateway.deps, db };
}

beforeAll(async () => {
  ({ sim, database, gw } = rig = await startRenewalRig(clock));
}, 60_000);

afterAll(() => rig?.stop());

describe("a renewal charge job racing its schedule", () => {
  it("DELETE …/schedule after the job checked the schedule, before its charge: nothing is written, nothing charged", async () => {
    clock.set(new Date("2025-03-10T09:00:00Z"));
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await activePermit(gw, sim, tenantId);
    const schedule = await putSchedule(gw, tenantId, permitId, { amount: 3000, interval: "day", description: "Jour" });
    expect(schedule).toMatchObject({ status: "active", period: "2025-03-10", attempt: 0 });

    let cancelled: Response | undefined;
    const deps = depsRacedBy(async () => (cancelled = await gw.call("DELETE", schedulePath(permitId), tenantId)));
    await runRenewalCharge(deps, { scheduleId: schedule.id, period: schedule.period, attempt: 0 });

    expect(cancelled?.status).toBe(200);
    expect(await scheduleOf(gw, tenantId, permitId)).toMatchObject({ status: "cancelled", nextChargeAt: null });
    expect(await chargeRows(database, permitId)).toEqual([]);
    expect(await chargePayments(tenantId)).toEqual([]);
    expect(sim.chargesOf(token)).toEqual([]);
  });

  it("a PUT that moves the schedule after the job checked it: the job's period is not charged, the new one is", async () => {
    clock.set(new Date("2025-03-12T09:00:00Z"));
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await activePermit(gw, sim, tenantId);
    const schedule = await putSchedule(gw, tenantId, permitId, { amount: 3000, interval: "day", description: "Jour" });
    expect(schedule.period).toBe("2025-03-12");

    // A weekly cadence from the 14th instead.
    const startAt = "2025-03-14T08:00:00.000Z";
    const deps = depsRacedBy(() => putSchedule(gw, tenantId, permitId, { amount: 4500, interval: "week", startAt, description: "Semaine" }));
    await runRenewalCharge(deps, { scheduleId: schedule.id, period: "2025-03-12", attempt: 0 });
    expect(await scheduleOf(gw, tenantId, permitId)).toMatchObject({ status: "active", period: "2025-03-14", attempt: 0, amount: 4500 });
    expect(await chargeRows(database, permitId)).toEqual([]);
    expect(sim.chargesOf(token)).toEqual([]);

    // The moved schedule is charged at its own due date, once.
    clock.set(new Date(startAt));
    await sweepRenewals(gw.gateway.deps);
    const moved = await waitUntil(
      async () => {
        const now = await scheduleOf(gw, tenantId, permitId);
        return now.period === "2025-03-21" ? now : null;
      },
      { what: "the moved schedule's first period paid" },
    );
    expect(moved).toMatchObject({ status: "active", attempt: 0 });
    expect((await chargeRows(database, permitId)).map((c) => [c.period, c.attempt, c.status, Number(c.amount)])).toEqual([
      ["2025-03-14", 0, "succeeded", 4500],
    ]);
    expect(sim.chargesOf(token).length).toBe(1);
  });

  it("a renewal its schedule no longer expects is refused by createPermitCharge itself (cancelled, other period, other attempt)", async () => {
    clock.set(new Date("2025-03-20T09:00:00Z"));
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId } = await activePermit(gw, sim, tenantId);
    const schedule = await putSchedule(gw, tenantId, permitId, { amount: 1000, interval: "day", description: "Jour" });
    const input = { tenantId, environment: "sandbox" as const, permitId, amount: 1000, description: "Jour" };
    for (const renewal of [
      { scheduleId: schedule.id, period: "2025-03-19", attempt: 0 },
      { scheduleId: schedule.id, period: "2025-03-20", attempt: 1 },
    ])
      await expect(createPermitCharge(gw.gateway.deps, { ...input, renewal })).rejects.toBeInstanceOf(RenewalNotDueError);
    expect((await gw.call("DELETE", schedulePath(permitId), tenantId)).status).toBe(200);
    await expect(
      createPermitCharge(gw.gateway.deps, { ...input, renewal: { scheduleId: schedule.id, period: "2025-03-20", attempt: 0 } }),
    ).rejects.toBeInstanceOf(RenewalNotDueError);
    expect(await chargeRows(database, permitId)).toEqual([]);
    expect(await chargePayments(tenantId)).toEqual([]);
  });
});

describe("a period whose failed charge later succeeds", () => {
  it("is not retried and not charged again: the schedule moves to the next period", async () => {
    const due = new Date("2025-04-02T08:00:00Z").getTime();
    clock.set(new Date(due));
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await activePermit(gw, sim, tenantId);
    expect((await sim.permitControl(token, "fail-next")).status).toBe(200);
    const schedule = await putSchedule(gw, tenantId, permitId, { amount: 2000, interval: "month", startAt: new Date(due).toISOString(), description: "Avril" });

    // Attempt 0 fails: the schedule waits for its first retry, a day after the due date.
    await sweepRenewals(gw.gateway.deps);
    const waiting = await waitUntil(
      async () => {
        const now = await scheduleOf(gw, tenantId, permitId);
        return now.attempt === 1 ? now : null;
      },
      { what: "the first dunning retry scheduled" },
    );
    expect(waiting).toMatchObject({ status: "active", period: "2025-04-02", nextChargeAt: new Date(due + DAY).toISOString() });
    const [failed] = await chargeRows(database, permitId);
    expect(failed).toMatchObject({ status: "failed", attempt: 0 });

    // Provider B later completes that invoice (the customer topped up): IPN → confirm → succeeded.
    expect((await sim.permitControl(token, "succeed-next")).status).toBe(200);
    expect((await sim.press(failed!.invoice_token!, "pay")).status).toBe(200);
    await waitUntil(async () => (await chargeRows(database, permitId))[0]!.status === "succeeded", {
      what: "the failed charge settled as succeeded",
      timeoutMs: 10_000,
    });

    // The retry the schedule still shows is no longer due: neither its queued job nor a direct create charges.
    await runRenewalCharge(gw.gateway.deps, { scheduleId: schedule.id, period: "2025-04-02", attempt: 1 });
    await expect(
      createPermitCharge(gw.gateway.deps, {
        tenantId,
        environment: "sandbox",
        permitId,
        amount: 2000,
        description: "Avril",
        renewal: { scheduleId: schedule.id, period: "2025-04-02", attempt: 1 },
      }),
    ).rejects.toBeInstanceOf(RenewalNotDueError);
    expect((await chargeRows(database, permitId)).length).toBe(1);

    // At the retry's time the sweep counts the period as paid and moves on to May, without charging.
    clock.set(new Date(due + DAY));
    await sweepRenewals(gw.gateway.deps);
    const moved = await waitUntil(
      async () => {
        const now = await scheduleOf(gw, tenantId, permitId);
        return now.period === "2025-05-02" ? now : null;
      },
      { what: "the schedule to move to May" },
    );
    expect(moved).toMatchObject({ status: "active", attempt: 0, nextChargeAt: "2025-05-02T08:00:00.000Z" });
    await sweepRenewals(gw.gateway.deps);
    await Bun.sleep(300);
    expect((await chargeRows(database, permitId)).map((c) => [c.period, c.attempt, c.status])).toEqual([["2025-04-02", 0, "succeeded"]]);
    expect(sim.chargesOf(token).length).toBe(1);
  });

  it("a retry that failed while an earlier attempt succeeded late does not schedule another retry: the period is paid", async () => {
    const due = new Date("2025-06-03T08:00:00Z").getTime();
    clock.set(new Date(due));
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await activePermit(gw, sim, tenantId);
    expect((await sim.permitControl(token, "fail-next")).status).toBe(200);
    const schedule = await putSchedule(gw, tenantId, permitId, { amount: 2500, interval: "month", startAt: new Date(due).toISOString(), description: "Juin" });
    await sweepRenewals(gw.gateway.deps);
    await waitUntil(async () => ((await scheduleOf(gw, tenantId, permitId)).attempt === 1 ? true : null), { what: "the first retry scheduled" });

    // The retry's job writes and sends its charge (failed again) but has not applied the outcome yet…
    clock.set(new Date(due + DAY));
    const { charge: retry } = await createPermitCharge(gw.gateway.deps, {
      tenantId,
      environment: "sandbox",
      permitId,
      amount: 2500,
      description: "Juin",
      renewal: { scheduleId: schedule.id, period: "2025-06-03", attempt: 1 },
    });
    expect((await executePermitCharge(gw.gateway.deps, retry.id)).status).toBe("failed");
    // …when provider B completes the first attempt's invoice after all.
    const first = (await chargeRows(database, permitId)).find((c) => c.attempt === 0)!;
    expect((await sim.press(first.invoice_token!, "pay")).status).toBe(200);
    await waitUntil(async () => (await chargeRows(database, permitId)).find((c) => c.attempt === 0)!.status === "succeeded", {
      what: "the first attempt settled as succeeded",
      timeoutMs: 10_000,
    });

    await applyRenewalOutcome(gw.gateway.deps, retry.id);
    expect(await scheduleOf(gw, tenantId, permitId)).toMatchObject({ status: "active", period: "2025-07-03", attempt: 0 });
    expect(sim.chargesOf(token).length).toBe(2);
  });
});
