/**
 * When a failed delivery is tried again (contract §6): `WEBHOOK_RETRY_SCHEDULE` gives the wait after
 * each failed attempt (default 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h: 8 attempts in all), each wait
 * moved by up to ±20 % so that deliveries failed together do not come back together, and a receiver's
 * `Retry-After` is honoured up to twice the scheduled wait.
 *
 * `Retry-After` only ever pushes an attempt later, never earlier than the schedule: a receiver answering
 * `Retry-After: 0` to every attempt would otherwise burn the whole 37-hour schedule in seconds.
 */

/** How far a scheduled wait may move either way. */
export const RETRY_JITTER = 0.2;

/** Attempts a delivery gets before it is `failed`: the first one plus one per scheduled wait. */
export function maxDeliveryAttempts(schedule: readonly number[]): number {
  return schedule.length + 1;
}

/**
 * The wait before the attempt after `failedAttempt` (1-based), or null when that was the last one.
 * `random` returns a number in [0, 1) (inject a fixed one in tests).
 *
 * @example
 * ```ts
 * retryDelayMs({ schedule: [5_000, 300_000], failedAttempt: 1, random: () => 0.5 }); // 5000
 * retryDelayMs({ schedule: [5_000, 300_000], failedAttempt: 1, random: () => 0 });   // 4000
 * retryDelayMs({ schedule: [5_000], failedAttempt: 1, retryAfterMs: 60_000 });         // 10000 (2 × 5 s at most)
 * retryDelayMs({ schedule: [5_000], failedAttempt: 2 });                               // null: no attempt left
 * ```
 */
export function retryDelayMs(input: {
  schedule: readonly number[];
  failedAttempt: number;
  random?: () => number;
  /** The receiver's `Retry-After`, already in milliseconds (see {@link parseRetryAfter}). */
  retryAfterMs?: number | undefined;
}): number | null {
  const scheduled = input.schedule[input.failedAttempt - 1];
  if (scheduled === undefined || input.failedAttempt < 1) return null;
  const random = (input.random ?? Math.random)();
  const jittered = Math.round(scheduled * (1 + (random * 2 - 1) * RETRY_JITTER));
  if (input.retryAfterMs === undefined) return jittered;
  return Math.max(jittered, Math.min(input.retryAfterMs, 2 * scheduled));
}

/**
 * A `Retry-After` header in milliseconds from `now`: delay-seconds (`120`) or an HTTP date
 * (`Wed, 21 Oct 2026 07:28:00 GMT`). Undefined when absent or unreadable; a date in the past is 0.
 *
 * @example
 * ```ts
 * parseRetryAfter("120", new Date()); // 120000
 * parseRetryAfter("soon", new Date()); // undefined
 * ```
 */
export function parseRetryAfter(value: string | null | undefined, now: Date): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // Only the date forms HTTP allows, so that a bare number with a sign or a fraction is not read as a year.
  if (!/[a-z]/i.test(text)) return undefined;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now.getTime());
}
