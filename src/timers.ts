/**
 * The clock and the timers something waits on: the process's ({@link REAL_TIMERS}), or virtual time a test
 * moves forward (`test/support/virtual-time.ts`), so a test of a 5 s sync step or a retry's backoff advances
 * the time instead of waiting for it. The in-process queue's delays, retries and repeats, a gateway's held
 * first sync steps, and what a gateway waits on by itself (`Deps.timers`: an idempotency lock's renewal beat and
 * the retries of an answer the database was away for, the rate limiter's lease, a route's circuit breaker's
 * pause; and, given to providers as `ProviderContext.timers`, provider A's client's waits before retrying a
 * refused connection) run on them. A module of no layer, importing nothing, so that the queue machinery, the
 * services and the provider port (and a provider's folder) take the one definition.
 *
 * @module
 */

/** A clock and the timers armed against it. */
export interface Timers {
  /** Milliseconds since the epoch, never going back. */
  now(): number;
  /** Calls `callback` once `ms` have passed on {@link Timers.now}'s clock; the answer cancels it. */
  setTimeout(callback: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

/** A timer armed by {@link Timers.setTimeout}. */
export interface TimerHandle {
  /** Lets the process exit while the timer is armed (a no-op for virtual timers). */
  unref?(): unknown;
}

/**
 * The process's clock (monotonic, on the epoch's scale: a wall-clock step does not move a due time) and its
 * timers.
 *
 * @example
 * ```ts
 * const timer = REAL_TIMERS.setTimeout(() => console.log("5 s later"), 5_000);
 * REAL_TIMERS.clearTimeout(timer);
 * ```
 */
export const REAL_TIMERS: Timers = {
  now: () => performance.timeOrigin + performance.now(),
  setTimeout: (callback, ms) => setTimeout(callback, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};
