import { describe, expect, it } from "bun:test";
import { currentPeriodIndex, nextPeriodAfterPaid, periodDueAt, periodKey, startingPeriod, type Cadence } from "../../../src/services/permits/schedule-math.ts";

const keys = (cadence: Cadence, n: number) => Array.from({ length: n }, (_, i) => periodKey(periodDueAt(cadence, i), cadence.timeZone));
/** A UTC+0 zone without daylight saving: the calendar of these tests is UTC's. */
const UTC0 = "Africa/Abidjan";

describe("schedule calendar", () => {
  it("charges a schedule started on Jan 31 on the last day of February, then on the 31st again", () => {
    const cadence: Cadence = { anchor: new Date("2025-01-31T09:30:00Z"), interval: "month", count: 1, timeZone: UTC0 };
    expect(keys(cadence, 7)).toEqual(["2025-01-31", "2025-02-28", "2025-03-31", "2025-04-30", "2025-05-31", "2025-06-30", "2025-07-31"]);
    expect(periodDueAt(cadence, 1).toISOString()).toBe("2025-02-28T09:30:00.000Z");
  });

  it("uses February 29 in a leap year", () => {
    const cadence: Cadence = { anchor: new Date("2024-01-31T00:00:00Z"), interval: "month", count: 1, timeZone: UTC0 };
    expect(keys(cadence, 3)).toEqual(["2024-01-31", "2024-02-29", "2024-03-31"]);
  });

  it("returns to the 30th after February (Aug 30 → Sep 30 → Oct 30 → … → Feb 28 → Mar 30)", () => {
    const cadence: Cadence = { anchor: new Date("2025-08-30T12:00:00Z"), interval: "month", count: 1, timeZone: UTC0 };
    expect(keys(cadence, 8)).toEqual(["2025-08-30", "2025-09-30", "2025-10-30", "2025-11-30", "2025-12-30", "2026-01-30", "2026-02-28", "2026-03-30"]);
  });

  it("clamps the 29th only in a non-leap February", () => {
    const cadence: Cadence = { anchor: new Date("2025-01-29T00:00:00Z"), interval: "month", count: 1, timeZone: UTC0 };
    expect(keys(cadence, 3)).toEqual(["2025-01-29", "2025-02-28", "2025-03-29"]);
    const leap: Cadence = { anchor: new Date("2028-01-29T00:00:00Z"), interval: "month", count: 1, timeZone: UTC0 };
    expect(keys(leap, 2)).toEqual(["2028-01-29", "2028-02-29"]);
  });

  it("counts months with intervalCount and across years", () => {
    const quarterly: Cadence = { anchor: new Date("2025-11-30T00:00:00Z"), interval: "month", count: 3, timeZone: UTC0 };
    expect(keys(quarterly, 4)).toEqual(["2025-11-30", "2026-02-28", "2026-05-30", "2026-08-30"]);
  });

  it("adds whole days and weeks, keeping the time of day", () => {
    const daily: Cadence = { anchor: new Date("2025-02-27T23:00:00Z"), interval: "day", count: 2, timeZone: UTC0 };
    expect(keys(daily, 3)).toEqual(["2025-02-27", "2025-03-01", "2025-03-03"]);
    const weekly: Cadence = { anchor: new Date("2025-12-29T06:00:00Z"), interval: "week", count: 1, timeZone: UTC0 };
    expect(periodDueAt(weekly, 1).toISOString()).toBe("2026-01-05T06:00:00.000Z");
  });

  it("rejects a negative or fractional period index", () => {
    const cadence: Cadence = { anchor: new Date("2025-01-01T00:00:00Z"), interval: "day", count: 1, timeZone: UTC0 };
    expect(() => periodDueAt(cadence, -1)).toThrow(RangeError);
    expect(() => periodDueAt(cadence, 1.5)).toThrow(RangeError);
  });
});

describe("the period in progress", () => {
  const cadence: Cadence = { anchor: new Date("2025-01-31T10:00:00Z"), interval: "month", count: 1, timeZone: UTC0 };

  it("is -1 before the anchor and 0 at it", () => {
    expect(currentPeriodIndex(cadence, new Date("2025-01-31T09:59:59Z"))).toBe(-1);
    expect(currentPeriodIndex(cadence, new Date("2025-01-31T10:00:00Z"))).toBe(0);
  });

  it("moves on exactly at each clamped due date", () => {
    expect(currentPeriodIndex(cadence, new Date("2025-02-28T09:59:59Z"))).toBe(0);
    expect(currentPeriodIndex(cadence, new Date("2025-02-28T10:00:00Z"))).toBe(1);
    expect(currentPeriodIndex(cadence, new Date("2025-03-30T10:00:00Z"))).toBe(1);
    expect(currentPeriodIndex(cadence, new Date("2025-03-31T10:00:00Z"))).toBe(2);
    expect(currentPeriodIndex(cadence, new Date("2027-01-31T10:00:00Z"))).toBe(24);
  });

  it("agrees with the due dates for every day of two years, for every interval", () => {
    for (const cad of [
      cadence,
      { anchor: new Date("2025-08-30T00:00:00Z"), interval: "month", count: 2, timeZone: UTC0 } satisfies Cadence,
      { anchor: new Date("2025-03-03T08:00:00Z"), interval: "week", count: 2, timeZone: UTC0 } satisfies Cadence,
      { anchor: new Date("2025-03-03T08:00:00Z"), interval: "day", count: 3, timeZone: UTC0 } satisfies Cadence,
      { anchor: new Date("2028-01-30T23:00:00Z"), interval: "month", count: 1, timeZone: "Africa/Porto-Novo" } satisfies Cadence,
      { anchor: new Date("2025-01-31T08:00:00Z"), interval: "month", count: 1, timeZone: "Europe/Paris" } satisfies Cadence,
      { anchor: new Date("2025-03-01T01:30:00Z"), interval: "day", count: 1, timeZone: "America/New_York" } satisfies Cadence,
    ]) {
      for (let d = 0; d < 730; d++) {
        const now = new Date(cad.anchor.getTime() + d * 86_400_000 + 3_600_000);
        const index = currentPeriodIndex(cad, now);
        expect(periodDueAt(cad, index) <= now).toBe(true);
        expect(periodDueAt(cad, index + 1) > now).toBe(true);
      }
    }
  });

  it("starts a schedule at the period in progress, never at one already charged", () => {
    const daily: Cadence = { anchor: new Date("2025-01-01T00:00:00Z"), interval: "day", count: 1, timeZone: UTC0 };
    expect(startingPeriod(daily, new Date("2024-12-01T00:00:00Z")).key).toBe("2025-01-01");
    expect(startingPeriod(daily, new Date("2025-01-10T05:00:00Z")).key).toBe("2025-01-10");
    expect(startingPeriod(daily, new Date("2025-01-10T05:00:00Z"), "2025-01-10").key).toBe("2025-01-11");
    expect(startingPeriod(daily, new Date("2025-01-10T05:00:00Z"), "2025-01-14").key).toBe("2025-01-15");
  });

  it("after a paid period, goes to the next one, or to the one in progress when several came due", () => {
    const weekly: Cadence = { anchor: new Date("2025-01-01T00:00:00Z"), interval: "week", count: 1, timeZone: UTC0 };
    expect(nextPeriodAfterPaid(weekly, 0, new Date("2025-01-04T00:00:00Z"))).toMatchObject({ index: 1, key: "2025-01-08" });
    expect(nextPeriodAfterPaid(weekly, 0, new Date("2025-01-30T00:00:00Z"))).toMatchObject({ index: 4, key: "2025-01-29" });
  });
});

describe("the customer's calendar (a schedule's time zone)", () => {
  /** The local month (`YYYY-MM`) of each of the first `n` due dates in `timeZone`. */
  const localMonths = (cadence: Cadence, n: number) => keys(cadence, n).map((key) => key.slice(0, 7));
  const monthsOf2028 = [
    "2028-01",
    "2028-02",
    "2028-03",
    "2028-04",
    "2028-05",
    "2028-06",
    "2028-07",
    "2028-08",
    "2028-09",
    "2028-10",
    "2028-11",
    "2028-12",
    "2029-01",
  ];

  it("charges a schedule started at local midnight on Jan 31 in Porto-Novo (UTC+1) once per local month of a leap year, on the last day of short months", () => {
    const cadence: Cadence = { anchor: new Date("2028-01-31T00:00:00+01:00"), interval: "month", count: 1, timeZone: "Africa/Porto-Novo" };
    expect(keys(cadence, 13)).toEqual([
      "2028-01-31",
      "2028-02-29",
      "2028-03-31",
      "2028-04-30",
      "2028-05-31",
      "2028-06-30",
      "2028-07-31",
      "2028-08-31",
      "2028-09-30",
      "2028-10-31",
      "2028-11-30",
      "2028-12-31",
      "2029-01-31",
    ]);
    expect(localMonths(cadence, 13)).toEqual(monthsOf2028);
    // Always at local midnight: 23:00 UTC the day before.
    for (let i = 0; i < 13; i++) expect(periodDueAt(cadence, i).toISOString()).toMatch(/T23:00:00\.000Z$/);
    expect(periodDueAt(cadence, 1).toISOString()).toBe("2028-02-28T23:00:00.000Z");
    expect(periodDueAt(cadence, 2).toISOString()).toBe("2028-03-30T23:00:00.000Z");
  });

  it("charges a UTC+0 zone's schedule (Dakar) once per month of 2028 too, Feb 29 included", () => {
    const cadence: Cadence = { anchor: new Date("2028-01-31T00:00:00Z"), interval: "month", count: 1, timeZone: "Africa/Dakar" };
    expect(localMonths(cadence, 13)).toEqual(monthsOf2028);
    expect(keys(cadence, 4)).toEqual(["2028-01-31", "2028-02-29", "2028-03-31", "2028-04-30"]);
    expect(periodDueAt(cadence, 1).toISOString()).toBe("2028-02-29T00:00:00.000Z");
  });

  it("keeps the local time of day across a daylight saving change", () => {
    const paris: Cadence = { anchor: new Date("2025-03-15T09:00:00+01:00"), interval: "month", count: 1, timeZone: "Europe/Paris" };
    expect(periodDueAt(paris, 1).toISOString()).toBe("2025-04-15T07:00:00.000Z"); // 09:00 CEST
    const weekly: Cadence = { anchor: new Date("2025-03-28T09:00:00+01:00"), interval: "week", count: 1, timeZone: "Europe/Paris" };
    expect(periodDueAt(weekly, 1).toISOString()).toBe("2025-04-04T07:00:00.000Z");
  });

  it("names a period by its local due day, and the period in progress follows local midnight", () => {
    const cadence: Cadence = { anchor: new Date("2028-01-30T23:00:00Z"), interval: "month", count: 1, timeZone: "Africa/Porto-Novo" };
    expect(periodKey(new Date("2028-02-28T23:00:00Z"), "Africa/Porto-Novo")).toBe("2028-02-29");
    expect(currentPeriodIndex(cadence, new Date("2028-02-28T22:59:59Z"))).toBe(0);
    expect(currentPeriodIndex(cadence, new Date("2028-02-28T23:00:00Z"))).toBe(1);
  });

  it("never restarts on a charged due date that a new time zone gives another local date", () => {
    // Charged 2025-03-10 at 23:30 UTC, the UTC calendar's 2025-03-10; in Porto-Novo that instant is on the 11th.
    const daily: Cadence = { anchor: new Date("2025-03-01T23:30:00Z"), interval: "day", count: 1, timeZone: "Africa/Porto-Novo" };
    const now = new Date("2025-03-10T23:45:00Z");
    expect(startingPeriod(daily, now, "2025-03-10").key).toBe("2025-03-11");
    expect(startingPeriod(daily, now, "2025-03-10", new Date("2025-03-10T23:30:00Z"))).toMatchObject({
      key: "2025-03-12",
      dueAt: new Date("2025-03-11T23:30:00Z"),
    });
  });
});
