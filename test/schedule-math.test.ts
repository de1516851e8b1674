import { describe, expect, it } from "bun:test";
import { currentPeriodIndex, nextPeriodAfterPaid, periodDueAt, periodKey, startingPeriod, type Cadence } from "../src/services/permits/schedule-math.ts";

const keys = (cadence: Cadence, n: number) => Array.from({ length: n }, (_, i) => periodKey(periodDueAt(cadence, i)));

describe("schedule calendar", () => {
  it("charges a schedule started on Jan 31 on the last day of February, then on the 31st again", () => {
    const cadence: Cadence = { anchor: new Date("2025-01-31T09:30:00Z"), interval: "month", count: 1 };
    expect(keys(cadence, 7)).toEqual(["2025-01-31", "2025-02-28", "2025-03-31", "2025-04-30", "2025-05-31", "2025-06-30", "2025-07-31"]);
    expect(periodDueAt(cadence, 1).toISOString()).toBe("2025-02-28T09:30:00.000Z");
  });

  it("uses February 29 in a leap year", () => {
    const cadence: Cadence = { anchor: new Date("2024-01-31T00:00:00Z"), interval: "month", count: 1 };
    expect(keys(cadence, 3)).toEqual(["2024-01-31", "2024-02-29", "2024-03-31"]);
  });

  it("returns to the 30th after February (Aug 30 → Sep 30 → Oct 30 → … → Feb 28 → Mar 30)", () => {
    const cadence: Cadence = { anchor: new Date("2025-08-30T12:00:00Z"), interval: "month", count: 1 };
    expect(keys(cadence, 8)).toEqual(["2025-08-30", "2025-09-30", "2025-10-30", "2025-11-30", "2025-12-30", "2026-01-30", "2026-02-28", "2026-03-30"]);
  });

  it("clamps the 29th only in a non-leap February", () => {
    const cadence: Cadence = { anchor: new Date("2025-01-29T00:00:00Z"), interval: "month", count: 1 };
    expect(keys(cadence, 3)).toEqual(["2025-01-29", "2025-02-28", "2025-03-29"]);
    const leap: Cadence = { anchor: new Date("2028-01-29T00:00:00Z"), interval: "month", count: 1 };
    expect(keys(leap, 2)).toEqual(["2028-01-29", "2028-02-29"]);
  });

  it("counts months with intervalCount and across years", () => {
    const quarterly: Cadence = { anchor: new Date("2025-11-30T00:00:00Z"), interval: "month", count: 3 };
    expect(keys(quarterly, 4)).toEqual(["2025-11-30", "2026-02-28", "2026-05-30", "2026-08-30"]);
  });

  it("adds whole days and weeks, keeping the time of day", () => {
    const daily: Cadence = { anchor: new Date("2025-02-27T23:00:00Z"), interval: "day", count: 2 };
    expect(keys(daily, 3)).toEqual(["2025-02-27", "2025-03-01", "2025-03-03"]);
    const weekly: Cadence = { anchor: new Date("2025-12-29T06:00:00Z"), interval: "week", count: 1 };
    expect(periodDueAt(weekly, 1).toISOString()).toBe("2026-01-05T06:00:00.000Z");
  });

  it("rejects a negative or fractional period index", () => {
    const cadence: Cadence = { anchor: new Date("2025-01-01T00:00:00Z"), interval: "day", count: 1 };
    expect(() => periodDueAt(cadence, -1)).toThrow(RangeError);
    expect(() => periodDueAt(cadence, 1.5)).toThrow(RangeError);
  });
});

describe("the period in progress", () => {
  const cadence: Cadence = { anchor: new Date("2025-01-31T10:00:00Z"), interval: "month", count: 1 };

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
      { anchor: new Date("2025-08-30T00:00:00Z"), interval: "month", count: 2 } satisfies Cadence,
      { anchor: new Date("2025-03-03T08:00:00Z"), interval: "week", count: 2 } satisfies Cadence,
      { anchor: new Date("2025-03-03T08:00:00Z"), interval: "day", count: 3 } satisfies Cadence,
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
    const daily: Cadence = { anchor: new Date("2025-01-01T00:00:00Z"), interval: "day", count: 1 };
    expect(startingPeriod(daily, new Date("2024-12-01T00:00:00Z")).key).toBe("2025-01-01");
    expect(startingPeriod(daily, new Date("2025-01-10T05:00:00Z")).key).toBe("2025-01-10");
    expect(startingPeriod(daily, new Date("2025-01-10T05:00:00Z"), "2025-01-10").key).toBe("2025-01-11");
    expect(startingPeriod(daily, new Date("2025-01-10T05:00:00Z"), "2025-01-14").key).toBe("2025-01-15");
  });

  it("after a paid period, goes to the next one, or to the one in progress when several came due", () => {
    const weekly: Cadence = { anchor: new Date("2025-01-01T00:00:00Z"), interval: "week", count: 1 };
    expect(nextPeriodAfterPaid(weekly, 0, new Date("2025-01-04T00:00:00Z"))).toMatchObject({ index: 1, key: "2025-01-08" });
    expect(nextPeriodAfterPaid(weekly, 0, new Date("2025-01-30T00:00:00Z"))).toMatchObject({ index: 4, key: "2025-01-29" });
  });
});
