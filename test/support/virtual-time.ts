/**
 * Virtual time for tests where the code waits (a sync step 5 s after a payment, a retry's backoff, a repeat, a
 * lock's renewal, a lease, a circuit's pause): a clock and timers the test moves forward with
 * {@link VirtualTime.advance} instead of waiting for the wall clock. Give it to the gateway
 * (`createGateway(config, { timers: time.timers, queue })`, its `now` and `deps.timers` then follow) and to the
 * in-process queue (`createMemoryQueue({ timers: time.timers })`): what waits on a due time (delays, retries,
 * repeats, held first sync steps, an idempotency lock's renewal beat and the retries of an answer the database
 * was away for, the rate limiter's lease, a route's circuit breaker's pause, provider A's client's waits before
 * retrying a refused connection) runs when the test reaches that time, never before. BullMQ's delays are Redis's, so a test on virtual time runs the in-process queue on both
 * passes.
 */
import type { TimerHandle, Timers } from "../../src/timers.ts";
import { waitUntil } from "./wait.ts";

interface VirtualTimer extends TimerHandle {
  due: number;
  order: number;
  callback: () => void;
}

export interface VirtualTime {
  /** What the gateway and the queue read the time from and arm their timers on. */
  readonly timers: Timers;
  /** The virtual now, as `deps.now` answers it. */
  now(): Date;
  /**
   * Moves the clock `ms` forward, firing every timer that falls due on the way, in due order, each at its own
   * time; between two, the work a fired timer started gets a turn of the event loop (its own timers armed then
   * fire in the same advance when due). Work that takes real time (a job's statements, a provider call) goes on
   * after the advance: wait for what it does with `waitUntil`, or give `settle`, awaited before the first timer
   * and after each one (a queue gone idle, say), so that what a timer started ends before the next one fires.
   */
  advance(ms: number, options?: { settle?: () => Promise<unknown> }): Promise<void>;
  /** Timers armed and not yet fired. */
  readonly armed: number;
  /** How long until the first armed timer falls due (ms), or undefined when none is armed. */
  nextDueIn(): number | undefined;
}

/**
 * Virtual time starting at `start` (default: the wall clock's now).
 *
 * @example
 * ```ts
 * const time = virtualTime();
 * const queue = createMemoryQueue({ timers: time.timers });
 * await queue.add("q", "job", {}, { delayMs: 5_000 });
 * await time.advance(5_000); // the job is due now, and runs
 * ```
 */
export function virtualTime(start: Date = new Date()): VirtualTime {
  let current = start.getTime();
  let nextOrder = 0;
  const armed = new Set<VirtualTimer>();
  const timers: Timers = {
    now: () => current,
    setTimeout(callback, ms) {
      const timer: VirtualTimer = { due: current + Math.max(0, ms), order: nextOrder++, callback, unref: () => timer };
      armed.add(timer);
      return timer;
    },
    clearTimeout(handle) {
      armed.delete(handle as VirtualTimer);
    },
  };
  const firstDue = (until: number): VirtualTimer | undefined => {
    let first: VirtualTimer | undefined;
    for (const timer of armed) {
      if (timer.due > until) continue;
      if (!first || timer.due < first.due || (timer.due === first.due && timer.order < first.order)) first = timer;
    }
    return first;
  };
  return {
    timers,
    now: () => new Date(current),
    async advance(ms, options = {}) {
      const until = current + ms;
      // A timer whose callback starts async work may arm the next one only after a few turns: let them run.
      const settle = async () => {
        for (let turn = 0; turn < 5; turn++) await Bun.sleep(0);
        await options.settle?.();
      };
      await settle();
      for (let timer = firstDue(until); timer; timer = firstDue(until)) {
        armed.delete(timer);
        current = Math.max(current, timer.due);
        timer.callback();
        await settle();
      }
      current = until;
    },
    get armed() {
      return armed.size;
    },
    nextDueIn() {
      const first = firstDue(Number.POSITIVE_INFINITY);
      return first && first.due - current;
    },
  };
}

/**
 * Moves `time` through waits that work in flight arms one after the other (a client's gaps before retrying): each
 * gap once it is the next timer due, exactly `gap` ms away. Fails the test with `what` when one is not armed
 * within `timeoutMs` (the work waited on another clock, or not at all).
 *
 * @example
 * ```ts
 * const answer = api("/payments", { method: "POST", json }); // provider A refuses the connection
 * await advanceThroughWaits(time, [100, 400], { what: "provider A's client" });
 * expect((await answer).status).toBe(502);
 * ```
 */
export async function advanceThroughWaits(time: VirtualTime, gapsMs: readonly number[], options: { what: string; timeoutMs?: number }): Promise<void> {
  for (const gap of gapsMs) {
    await waitUntil(() => time.nextDueIn() === gap, {
      what: `${options.what} to arm a ${gap} ms wait`,
      timeoutMs: options.timeoutMs,
      lastSeen: () => time.nextDueIn(),
    });
    await time.advance(gap);
  }
}
