/**
 * The calendar of a renewal schedule, as pure functions of its anchor (`startAt`), interval, count and time
 * zone — the customer's calendar, not UTC's.
 *
 * Period `n` is due at `anchor + n × count × interval` on the wall clock of the schedule's IANA time zone,
 * always computed from the anchor, never from the previous period: a monthly schedule started at local
 * midnight on Jan 31 is due at local midnight on Feb 28 (29), then Mar 31 again, not Mar 28. The due time
 * keeps the anchor's local time of day (a wall time a DST change skips is moved forward, Temporal's
 * `compatible` rule). A period's key is the local date of its due day (`YYYY-MM-DD`), unique per schedule
 * since periods are at least a day apart. The calendar arithmetic is Temporal's (`temporal-polyfill`):
 * month lengths, leap years and offsets are never computed by hand here.
 *
 * @example
 * ```ts
 * const anchor = new Date("2028-01-30T23:00:00Z"); // Jan 31, 00:00 in Porto-Novo (UTC+1)
 * const cadence = { anchor, interval: "month", count: 1, timeZone: "Africa/Porto-Novo" } as const;
 * periodAt(cadence, 1); // { index: 1, key: "2028-02-29", dueAt: 2028-02-28T23:00:00Z }
 * periodAt(cadence, 2); // { index: 2, key: "2028-03-31", dueAt: 2028-03-30T23:00:00Z }
 * ```
 *
 * @module
 */
import { Temporal } from "temporal-polyfill";
import type { ScheduleInterval } from "../../db/schema.ts";

/** What a schedule's calendar depends on. */
export interface Cadence {
  anchor: Date;
  interval: ScheduleInterval;
  /** Every `count` days, weeks or months (integer ≥ 1). */
  count: number;
  /** The IANA time zone whose calendar the periods follow, e.g. `Africa/Porto-Novo`. */
  timeZone: string;
}

const DAY_MS = 86_400_000;

/** The anchor on the schedule's wall clock. */
function localAnchor(cadence: Cadence): Temporal.ZonedDateTime {
  return Temporal.Instant.fromEpochMilliseconds(cadence.anchor.getTime()).toZonedDateTimeISO(cadence.timeZone);
}

/** When period `index` (≥ 0) is due. */
export function periodDueAt(cadence: Cadence, index: number): Date {
  if (!Number.isInteger(index) || index < 0) throw new RangeError(`period index must be an integer ≥ 0, got ${index}`);
  const steps = index * cadence.count;
  const duration = cadence.interval === "day" ? { days: steps } : cadence.interval === "week" ? { weeks: steps } : { months: steps };
  // `constrain` clamps a day the month lacks to its last day (Jan 31 + 1 month = Feb 28/29); adding to the
  // anchor, not to the previous period, brings the schedule back to the 31st in March.
  const due = localAnchor(cadence).add(duration, { overflow: "constrain" });
  return new Date(due.epochMilliseconds);
}

/** A period's key: the date of its due day in the schedule's time zone, `YYYY-MM-DD`. */
export function periodKey(dueAt: Date, timeZone: string): string {
  return Temporal.Instant.fromEpochMilliseconds(dueAt.getTime()).toZonedDateTimeISO(timeZone).toPlainDate().toString();
}

/**
 * The latest period due at or before `now` (the period in progress), or -1 when `now` is before the
 * anchor. This is what a schedule catches up to after a pause: never the periods in between.
 */
export function currentPeriodIndex(cadence: Cadence, now: Date): number {
  const { anchor, interval, count } = cadence;
  if (now.getTime() < anchor.getTime()) return -1;
  // An estimate, then corrected against the due dates themselves: month lengths, the month-end clamp and
  // DST changes move due dates by days or hours only.
  let index: number;
  if (interval === "month") {
    const from = localAnchor(cadence);
    const to = Temporal.Instant.fromEpochMilliseconds(now.getTime()).toZonedDateTimeISO(cadence.timeZone);
    index = Math.floor(((to.year - from.year) * 12 + (to.month - from.month)) / count);
  } else {
    index = Math.floor((now.getTime() - anchor.getTime()) / ((interval === "day" ? 1 : 7) * count * DAY_MS));
  }
  index = Math.max(0, index);
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
  return { index, key: periodKey(dueAt, cadence.timeZone), dueAt };
}

/**
 * Where a schedule collects next, from `now`: the period in progress (the first one when `now` is before
 * the anchor), moved on while its key is not after `afterKey` (the last period the schedule already has a
 * charge for) or it is due at or before `afterDue` (that period's due date, when known), so a re-positioned
 * schedule never reuses a charged period, even when a new time zone gives its due day another date.
 */
export function startingPeriod(cadence: Cadence, now: Date, afterKey?: string | null, afterDue?: Date | null): Period {
  let period = periodAt(cadence, Math.max(0, currentPeriodIndex(cadence, now)));
  while ((afterKey && period.key <= afterKey) || (afterDue && period.dueAt <= afterDue)) period = periodAt(cadence, period.index + 1);
  return period;
}

/**
 * The period after a paid one at `index`: the next one, or — when more have come due meanwhile (a charge
 * left pending for long, a late retry) — the one in progress at `now`, skipping those in between.
 */
export function nextPeriodAfterPaid(cadence: Cadence, index: number, now: Date): Period {
  return periodAt(cadence, Math.max(index + 1, currentPeriodIndex(cadence, now)));
}
