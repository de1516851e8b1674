/**
 * What one delivery attempt leads to (contract §6), as a pure function of its result: 2xx is delivered;
 * 410 Gone disables the endpoint and ends the delivery; anything else — another status, a timeout, a
 * refused connection — waits for the next attempt of the schedule, or ends the delivery after the last
 * one. An endpoint that has failed every attempt for 5 days is disabled.
 */
import { maxDeliveryAttempts, parseRetryAfter, retryDelayMs } from "./retry-schedule.ts";

/** An endpoint whose attempts have all failed for this long is disabled. */
export const FAILING_ENDPOINT_DISABLE_MS = 5 * 86_400_000;

/** How an attempt ended, as the delivery log records it. */
export interface AttemptResult {
  /** The HTTP status, or null when no answer came (timeout, refused connection, refused target). */
  status: number | null;
  /** Why the attempt failed without an answer, or a note about the answer (a redirect not followed). */
  error: string | null;
  headers: Headers | null;
  /** True when trying again cannot help (the URL itself is refused, not its current DNS answer). */
  permanent: boolean;
}

export type AttemptOutcome = { state: "succeeded" } | { state: "pending"; retryInMs: number } | { state: "failed"; disableEndpoint: string | null };

/**
 * Decides the delivery's next state after attempt `attempt` (1-based).
 *
 * @example
 * ```ts
 * decideOutcome({ status: 503, error: null, headers: new Headers(), permanent: false }, { attempt: 1, schedule: [5000], now, failingSince: null });
 * // { state: "pending", retryInMs: 4000…6000 }
 * ```
 */
export function decideOutcome(
  result: AttemptResult,
  ctx: {
    attempt: number;
    schedule: readonly number[];
    now: Date;
    /** The endpoint's `failing_since` before this attempt; undefined for a direct target URL. */
    failingSince: Date | null | undefined;
    random?: () => number;
  },
): AttemptOutcome {
  if (result.status !== null && result.status >= 200 && result.status < 300) return { state: "succeeded" };
  const isEndpoint = ctx.failingSince !== undefined;
  if (result.status === 410) {
    return { state: "failed", disableEndpoint: isEndpoint ? `the endpoint answered 410 Gone on ${ctx.now.toISOString()}` : null };
  }
  if (isEndpoint && ctx.failingSince && ctx.now.getTime() - ctx.failingSince.getTime() >= FAILING_ENDPOINT_DISABLE_MS) {
    return { state: "failed", disableEndpoint: `every delivery attempt failed for 5 days (since ${ctx.failingSince.toISOString()})` };
  }
  if (result.permanent || ctx.attempt >= maxDeliveryAttempts(ctx.schedule)) return { state: "failed", disableEndpoint: null };
  const retryInMs = retryDelayMs({
    schedule: ctx.schedule,
    failedAttempt: ctx.attempt,
    random: ctx.random,
    retryAfterMs: parseRetryAfter(result.headers?.get("retry-after"), ctx.now),
  });
  return retryInMs === null ? { state: "failed", disableEndpoint: null } : { state: "pending", retryInMs };
}

/** The delivery's `last_error` after an attempt: the error, or the status that was not 2xx. */
export function describeFailure(result: AttemptResult): string | null {
  if (result.error) return result.error;
  if (result.status !== null && (result.status < 200 || result.status >= 300)) return `answered HTTP ${result.status}`;
  return null;
}
