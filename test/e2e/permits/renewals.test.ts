/**
 * Renewals over real HTTP (issue 7 point 4, contract §5 and §8) on virtual time (issue 26 point 7): the
 * gateway's own renewal sweep — a repeatable job every 6 hours (02:00, 08:00, 14:00, 20:00) on its in-process
 * queue — and the charge jobs it enqueues, against the provider B simulator. The test moves the clock; every
 * sweep due on the way runs at its own time, and ends (with its charge jobs) before the next one. Nothing waits
 * on the wall clock but the work itself (provider B's answers, an IPN, a webhook delivery). What provider B
 * charged is counted at the simulator, what we recorded through `GET /providerB/permits/{id}/charges`. Two
 * workers renewing at once: `renewal-workers.test.ts`.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { runRenewalCharge } from "../../../src/services/permits/renewals.ts";
import type { TestDatabase } from "../../support/db.ts";
import { activePermit, type PermitRig } from "../../support/permit-rig.ts";
import type { RigGateway } from "../../support/provider-b-rig.ts";
import {
  advanceRenewals,
  advanceRenewalsTo,
  RENEWAL_SWEEP_EVERY_MS,
  listCharges,
  permitsQueueIdle,
  putSchedule,
  scheduleOf,
  startRenewalRigOnVirtualTime,
  type RecordingSimulator,
} from "../../support/renewal-rig.ts";
import { virtualTime } from "../../support/virtual-time.ts";
import { waitUntil } from "../../support/wait.ts";
import type { WebhookReceiver } from "../../support/webhook-receiver.ts";
import type { Json } from "../../support/json.ts";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** The time between two renewal sweeps. */
const SWEEP = RENEWAL_SWEEP_EVERY_MS;
// The renewal sweeps run at 02:00, 08:00, 14:00 and 20:00 UTC, when the schedules below fall due.
const time = virtualTime(new Date("2025-01-31T02:00:00Z"));
let rig: PermitRig<RecordingSimulator>;
let sim: RecordingSimulator;
let database: TestDatabase;
let gw: RigGateway;
let receiver: WebhookReceiver;

/** The number of charges recorded for a permit. */
async function chargeCount(tenantId: string, permitId: string): Promise<number> {
  return (await listCharges(gw, tenantId, permitId)).length;
}

beforeAll(async () => {
  ({ sim, database, gw, receiver } = rig = await startRenewalRigOnVirtualTime(time));
  await permitsQueueIdle(gw);
}, 60_000);

afterAll(() => rig?.stop());

describe("renewal schedules", () => {
  it("charges a monthly schedule exactly once per period across three periods, on the month-end rule", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await activePermit(gw, sim, tenantId);
    let schedule = await putSchedule(gw, tenantId, permitId, { amount: 5000, interval: "month", startAt: "2025-01-31T08:00:00Z", description: "Abonnement" });
    expect(schedule.nextChargeAt).toBe("2025-01-31T08:00:00.000Z");

    for (const [due, next] of [
      ["2025-01-31T08:00:00Z", "2025-02-28"],
      ["2025-02-28T08:00:00Z", "2025-03-31"],
      ["2025-03-31T08:00:00Z", "2025-04-30"],
    ] as const) {
      // Every sweep up to a minute before the due date: nothing.
      const before = sim.chargesOf(token).length;
      await advanceRenewalsTo(time, gw, new Date(new Date(due).getTime() - 60_000));
      expect(await chargeCount(tenantId, permitId)).toBe(before);
      expect(sim.chargesOf(token).length).toBe(before);
      // The sweep at the due date charges the period.
      await advanceRenewals(time, gw, 60_000);
      schedule = await scheduleOf(gw, tenantId, permitId);
      expect(schedule).toMatchObject({ status: "active", period: next, attempt: 0 });
      // The next sweeps charge nothing more within the period.
      await advanceRenewals(time, gw, 3 * SWEEP);
      expect(sim.chargesOf(token).length).toBe(before + 1);
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
    await advanceRenewalsTo(time, gw, "2025-04-02T12:00:00Z");
    const { tenantId } = await gw.tenantWithAccount(sim);
    const hook = await gw.call("POST", "/webhooks", tenantId, { url: `${receiver.url}/dunning`, events: ["permit.schedule.past_due"] });
    expect(hook.status).toBe(200);
    const { permitId, token } = await activePermit(gw, sim, tenantId);
    expect((await sim.permitControl(token, "fail-next")).status).toBe(200);
    const due = new Date("2025-04-04T08:00:00Z").getTime();
    let schedule = await putSchedule(gw, tenantId, permitId, { amount: 4000, interval: "month", startAt: new Date(due).toISOString(), description: "Avril" });

    const retries = [
      { at: due, attempt: 1, next: due + DAY },
      { at: due + DAY, attempt: 2, next: due + 3 * DAY },
      { at: due + 3 * DAY, attempt: 3, next: due + 5 * DAY },
    ];
    for (const step of retries) {
      await advanceRenewalsTo(time, gw, new Date(step.at - 1000));
      expect(await chargeCount(tenantId, permitId)).toBe(step.attempt - 1);
      await advanceRenewals(time, gw, 1000);
      schedule = await scheduleOf(gw, tenantId, permitId);
      expect(schedule).toMatchObject({ status: "active", period: "2025-04-04", attempt: step.attempt, nextChargeAt: new Date(step.next).toISOString() });
    }
    await advanceRenewalsTo(time, gw, new Date(due + 5 * DAY));
    schedule = await scheduleOf(gw, tenantId, permitId);
    expect(schedule).toMatchObject({ status: "past_due", nextChargeAt: null, pastDueAt: new Date(due + 5 * DAY).toISOString() });

    const charges = await listCharges(gw, tenantId, permitId);
    expect(charges.map((c) => [c.period, c.attempt, c.status, c.failReason]).sort()).toEqual(
      [0, 1, 2, 3].map((a) => ["2025-04-04", a, "failed", "insufficient_funds"]),
    );
    expect(sim.chargesOf(token).length).toBe(4);

    const receipt = await waitUntil(() => receiver.receipts.find((r) => r.path === "/dunning"), { what: "the past_due event", timeoutMs: 10_000 });
    const event = JSON.parse(receipt.body) as Json;
    expect(event).toMatchObject({ type: "permit.schedule.past_due", tenantId });
    expect(event.data).toMatchObject({
      permitId,
      scheduleId: schedule.id,
      status: "past_due",
      period: "2025-04-04",
      attempt: 3,
      failReason: "insufficient_funds",
      amount: 4000,
      currency: "XOF",
      customData: { plan: "gold", seats: 3 },
    });
    expect(event.data.chargeId).toBe(charges.find((c) => c.attempt === 3)!.chargeId);

    // A past_due schedule stops: the sweeps of the next 5 days charge nothing.
    await advanceRenewalsTo(time, gw, new Date(due + 10 * DAY));
    expect(await chargeCount(tenantId, permitId)).toBe(4);
    expect(sim.chargesOf(token).length).toBe(4);
  });

  it("leaves a pending charge waiting — never charged again — and moves on once provider B settles it", async () => {
    await advanceRenewalsTo(time, gw, "2025-04-16T08:00:00Z");
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await activePermit(gw, sim, tenantId);
    expect((await sim.permitControl(token, "pending-next")).status).toBe(200);
    const schedule = await putSchedule(gw, tenantId, permitId, { amount: 2500, interval: "week", startAt: "2025-04-16T14:00:00Z", description: "Panier" });
    await advanceRenewals(time, gw, SWEEP);
    const [pending] = await waitUntil(
      async () => {
        const charges = await listCharges(gw, tenantId, permitId);
        return charges.length === 1 && charges[0]!.invoiceToken ? charges : null;
      },
      { what: "the pending charge answered" },
    );
    expect(pending!.status).toBe("pending");
    // Three more sweeps: the charge stays pending, and is not charged again.
    await advanceRenewals(time, gw, 3 * SWEEP);
    expect(await chargeCount(tenantId, permitId)).toBe(1);
    expect(sim.chargesOf(token).length).toBe(1);
    expect(await scheduleOf(gw, tenantId, permitId)).toMatchObject({ period: schedule.period, attempt: 0 });

    // Provider B completes it (IPN); the next sweep moves the schedule to the next week.
    expect((await sim.press(pending!.invoiceToken, "pay")).status).toBe(200);
    await waitUntil(async () => (await listCharges(gw, tenantId, permitId))[0]!.status === "succeeded", {
      what: "the charge settled by IPN",
      timeoutMs: 10_000,
    });
    await advanceRenewals(time, gw, SWEEP);
    expect(await scheduleOf(gw, tenantId, permitId)).toMatchObject({ period: "2025-04-23", attempt: 0 });
    expect(sim.chargesOf(token).length).toBe(1);
  });

  it("stops renewing once the permit is revoked", async () => {
    const start = new Date("2025-04-18T08:00:00Z").getTime();
    await advanceRenewalsTo(time, gw, new Date(start));
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await activePermit(gw, sim, tenantId);
    await putSchedule(gw, tenantId, permitId, { amount: 1500, interval: "day", startAt: new Date(start + SWEEP).toISOString(), description: "Jour" });
    await advanceRenewals(time, gw, SWEEP);
    expect((await scheduleOf(gw, tenantId, permitId)).period).toBe("2025-04-19");

    const revoked = await gw.call("DELETE", `/providerB/permits/${permitId}`, tenantId);
    expect(revoked.status).toBe(200);
    expect(await scheduleOf(gw, tenantId, permitId)).toMatchObject({ status: "cancelled", nextChargeAt: null });
    // Three days of sweeps: nothing more.
    await advanceRenewalsTo(time, gw, new Date(start + 3 * DAY + SWEEP));
    expect(await chargeCount(tenantId, permitId)).toBe(1);
    expect(sim.chargesOf(token).length).toBe(1);
  });

  it("pauses a disabled tenant's schedule, and resumes with the period in progress only", async () => {
    const start = new Date("2025-04-23T14:00:00Z").getTime();
    await advanceRenewalsTo(time, gw, new Date(start - SWEEP));
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId, token } = await activePermit(gw, sim, tenantId);
    let schedule = await putSchedule(gw, tenantId, permitId, { amount: 1200, interval: "day", startAt: new Date(start).toISOString(), description: "Jour" });
    await advanceRenewals(time, gw, SWEEP);
    expect(await scheduleOf(gw, tenantId, permitId)).toMatchObject({ period: "2025-04-24" });

    await database.db.updateTable("tenants").set({ disabled: true }).where("id", "=", tenantId).execute();
    gw.gateway.deps.tenants.forget(tenantId);
    for (let day = 1; day <= 3; day++) {
      await advanceRenewalsTo(time, gw, new Date(start + day * DAY));
      // A charge job already queued for the period finds the tenant disabled and creates nothing.
      await runRenewalCharge(gw.gateway.deps, { scheduleId: schedule.id, period: "2025-04-24", attempt: 0 });
    }
    expect(sim.chargesOf(token).length).toBe(1);
    expect((await database.db.selectFrom("permit_charges").select("id").where("permit_id", "=", permitId).execute()).length).toBe(1);

    await database.db.updateTable("tenants").set({ disabled: false }).where("id", "=", tenantId).execute();
    gw.gateway.deps.tenants.forget(tenantId);
    // The next sweep charges the period in progress (the 4th), not the two missed.
    await advanceRenewals(time, gw, SWEEP);
    schedule = await scheduleOf(gw, tenantId, permitId);
    expect(schedule).toMatchObject({ status: "active", paused: false, period: "2025-04-27" });
    const charges = await listCharges(gw, tenantId, permitId);
    expect(charges.map((c) => c.period).sort()).toEqual(["2025-04-23", "2025-04-26"]);
    expect(sim.chargesOf(token).length).toBe(2);
  });
});
