/**
 * The calendar of a renewal schedule, as pure functions of its anchor (`startAt`), interval and count.
 *
 * Period `n` is due at `anchor + n × count × interval`, always computed from the anchor, never from the
 * previous period: a monthly schedule started on the 31st is due on Feb 28 (29), then Mar 31 again, not
 * Mar 28. Months are calendar months in UTC; the due time keeps the anchor's time of day. A period's key
 * is the UTC date of its due day (`YYYY-MM-DD`), unique per schedule since periods are at least a day apart.
 *
 * @example
 * ```ts
 * const anchor = new Date("2025-01-31T09:00:00Z");
 * periodDueAt({ anchor, interval: "month", count: 1 }, 1); // 2025-02-28T09:00:00Z
 * periodDueAt({ anchor, interval: "month", count: 1 }, 2); // 2025-03-31T09:00:00Z
 * ```
 *
 * @module
 */
import type { ScheduleInterval } from "../../db/schema.ts";

/** What a schedule's calendar depends on. */
export interface Cadence {
  anchor: Date;
  interval: ScheduleInterval;
  /** Every `count` days, weeks or months (integer ≥ 1). */
  count: number;
}

const DAY_MS = 86_400_000;

/** The number of days of a month (`month` 0–11, may be outside that range: it carries into the year). */
function daysInMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/** When period `index` (≥ 0) is due. */
export function periodDueAt(cadence: Cadence, index: number): Date {
  if (!Number.isInteger(index) || index < 0) throw new RangeError(`period index must be an integer ≥ 0, got ${index}`);
  const { anchor, interval, count } = cadence;
  if (interval === "day") return new Date(anchor.getTime() + index * count * DAY_MS);
  if (interval === "week") return new Date(anchor.getTime() + index * count * 7 * DAY_MS);
  const months = anchor.getUTCMonth() + index * count;
  const year = anchor.getUTCFullYear() + Math.floor(months / 12);
  const month = ((months % 12) + 12) % 12;
  const day = Math.min(anchor.getUTCDate(), daysInMonth(year, month));
  return new Date(
    Date.UTC(year, month, day, anchor.getUTCHours(), anchor.getUTCMinutes(), anchor.getUTCSeconds(), anchor.getUTCMilliseconds()),
  );
}

/** A period's key: the UTC date of its due day, `YYYY-MM-DD`. */
export function periodKey(dueAt: Date): string {
  return dueAt.toISOString().slice(0, 10);
}

/**
 * The latest period due at or before `now` (the period in progress), or -1 when `now` is before the
 * anchor. This is what a schedule catches up to after a pause: never the periods in between.
 */
export function currentPeriodIndex(cadence: Cadence, now: Date): number {
  const { anchor, interval, count } = cadence;
  const elapsed = now.getTime() - anchor.getTime();
  if (elapsed < 0) return -1;
  if (interval === "day" || interval === "week") return Math.floor(elapsed / ((interval === "day" ? 1 : 7) * count * DAY_MS));
  // An estimate from whole calendar months, then corrected: the month-end clamp moves due dates by days only.
  const monthsApart = (now.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (now.getUTCMonth() - anchor.getUTCMonth());
  let index = Math.max(0, Math.floor(monthsApart / count));
  while (index > 0 && periodDueAt(cadence, index) > now) index--;
  while (periodDueAt(cadence, index + 1) <= now) index++;
  return index;
}

/** A position in the calendar: the period's index, key and due date. */
export interface Period {
  index: number;
  key: string;
  dueAt: Date;
}

/** Period `index` of the cadence. */
export function periodAt(cadence: Cadence, index: number): Period {
  const dueAt = periodDueAt(cadence, index);
  return { index, key: periodKey(dueAt), dueAt };
}

/**
 * Where a schedule collects next, from `now`: the period in progress (the first one when `now` is before
 * the anchor), moved on while its key is not after `afterKey` (the last period the schedule already has a
 * charge for), so a re-positioned schedule never reuses a charged period.
 */
export function startingPeriod(cadence: Cadence, now: Date, afterKey?: string | null): Period {
  let period = periodAt(cadence, Math.max(0, currentPeriodIndex(cadence, now)));
  while (afterKey && period.key <= afterKey) period = periodAt(cadence, period.index + 1);
  return period;
}

/**
 * The period after a paid one at `index`: the next one, or — when more have come due meanwhile (a charge
 * left pending for long, a late retry) — the one in progress at `now`, skipping those in between.
 */
export function nextPeriodAfterPaid(cadence: Cadence, index: number, now: Date): Period {
  return periodAt(cadence, Math.max(index + 1, currentPeriodIndex(cadence, now)));
}
