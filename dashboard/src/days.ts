/**
 * Whole days as a merchant picks them in a `date` field, in the viewer's own time zone, turned into the
 * API's windows of instants: [the first day's midnight, the midnight after the last day).
 */

const DAY_MS = 86_400_000;

/** A `date` field's value (the viewer's calendar) for a moment. */
export function dayValue(date: Date): string {
  return new Date(date.getTime() - date.getTimezoneOffset() * 60_000).toISOString().slice(0, 10);
}

/** The midnight a day starts at, in the viewer's time zone, as an ISO instant. */
export function startOfDay(day: string): string {
  return new Date(`${day}T00:00:00`).toISOString();
}

/** The midnight after a day (the end of a window that includes it), as an ISO instant. */
export function endOfDay(day: string): string {
  const next = new Date(`${day}T00:00:00`);
  next.setDate(next.getDate() + 1);
  return next.toISOString();
}

/** The window [from, to) of whole days, `to` day included. */
export function windowOf(fromDay: string, toDay: string): { from: string; to: string } {
  return { from: startOfDay(fromDay), to: endOfDay(toDay) };
}

/** `days` days before now. */
export function daysAgo(days: number): Date {
  return new Date(Date.now() - days * DAY_MS);
}
