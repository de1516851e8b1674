/**
 * Renewals follow the customer's calendar (issue 13 point 6): a monthly schedule is charged once per month
 * of its time zone — the payer's country's by default — through the real sweep and charge jobs against the
 * provider B simulator, with the gateway's clock moved by the test across a leap year (2024: the clock stays
 * before the real one, so the API tokens minted now stay valid at the gateway's clock).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { sweepRenewals } from "../../../src/services/permits/renewals.ts";
import { activePermit, type PermitRig } from "../../support/permit-rig.ts";
import type { RigGateway } from "../../support/provider-b-rig.ts";
import { listCharges, putSchedule, scheduleOf, startRenewalRig, testClock, type RecordingSimulator } from "../../support/renewal-rig.ts";
import { waitUntil } from "../../support/wait.ts";

const clock = testClock(new Date("2024-01-20T12:00:00Z"));
let rig: PermitRig<RecordingSimulator>;
let sim: RecordingSimulator;
let gw: RigGateway;

beforeAll(async () => {
  ({ sim, gw } = rig = await startRenewalRig(clock));
}, 60_000);

afterAll(() => rig?.stop());

/** The local date (`YYYY-MM-DD`) of an instant in `timeZone`. */
function localDate(at: string | Date, timeZone: string): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" }).format(new Date(at));
}

/** The last day of each month of 2024 after January, then Jan 31 2025: where a Jan 31 schedule lands. */
const MONTH_ENDS_2024 = [
  "2024-01-31",
  "2024-02-29",
  "2024-03-31",
  "2024-04-30",
  "2024-05-31",
  "2024-06-30",
  "2024-07-31",
  "2024-08-31",
  "2024-09-30",
  "2024-10-31",
  "2024-11-30",
  "2024-12-31",
];

describe("a monthly schedule started at local midnight on January 31", () => {
  it("is charged exactly once per local month across a leap year, on the month's last day when it is short — in Porto-Novo (UTC+1) and in Dakar (UTC+0)", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    // Porto-Novo's zone comes from the payer's phone (+229); the second asks for Dakar's over its payer's default.
    const benin = await activePermit(gw, sim, tenantId, { customer: { name: "Koffi", phone: "+22997000000" } });
    const senegal = await activePermit(gw, sim, tenantId, { customer: { name: "Awa", phone: "+22997000001" } });
    const schedules = [
      { ...benin, zone: "Africa/Porto-Novo", body: { amount: 3000, interval: "month", startAt: "2024-01-31T00:00:00+01:00", description: "Abonnement" } },
      {
        ...senegal,
        zone: "Africa/Dakar",
        body: { amount: 3000, interval: "month", startAt: "2024-01-31T00:00:00Z", timeZone: "Africa/Dakar", description: "Abonnement" },
      },
    ];
    for (const s of schedules) expect(await putSchedule(gw, tenantId, s.permitId, s.body)).toMatchObject({ timeZone: s.zone, period: "2024-01-31" });

    for (const [month, key] of MONTH_ENDS_2024.entries()) {
      for (const s of schedules) {
        const due = new Date(`${key}T00:00:00${s.zone === "Africa/Porto-Novo" ? "+01:00" : "Z"}`).getTime();
        // A minute before local midnight of the due day: nothing is charged yet.
        clock.set(new Date(due - 60_000));
        await sweepRenewals(gw.gateway.deps);
        await Bun.sleep(50);
        expect((await listCharges(gw, tenantId, s.permitId)).length, `${s.zone} before ${key}`).toBe(month);
        // At local midnight: this month's charge, once, and the schedule moves to next month.
        clock.set(new Date(due));
        await Promise.all([sweepRenewals(gw.gateway.deps), sweepRenewals(gw.gateway.deps)]);
        const moved = await waitUntil(
          async () => {
            const now = await scheduleOf(gw, tenantId, s.permitId);
            return now.period !== key ? now : null;
          },
          { what: `${s.zone}: the ${key} period paid`, timeoutMs: 10_000 },
        );
        expect(moved).toMatchObject({ status: "active", attempt: 0, period: MONTH_ENDS_2024[month + 1] ?? "2025-01-31" });
      }
    }

    for (const s of schedules) {
      const charges = await listCharges(gw, tenantId, s.permitId);
      expect(charges.map((c) => c.period).sort(), s.zone).toEqual(MONTH_ENDS_2024);
      expect(charges.every((c) => c.status === "succeeded")).toBe(true);
      // Made on the due day of the customer's calendar: one charge in each local month, none missing.
      const madeIn = charges.map((c) => localDate(c.createdAt, s.zone)).sort();
      expect(madeIn, s.zone).toEqual(MONTH_ENDS_2024);
      expect(new Set(madeIn.map((d) => d.slice(0, 7))).size).toBe(12);
      expect(sim.chargesOf(s.token).length).toBe(12);
    }
  }, 120_000);
});
