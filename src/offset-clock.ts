/**
 * The gateway's clock moved by an offset read from a file (`TEST_CLOCK_OFFSET_FILE`): for the fault campaign
 * only (`scripts/campaign/faults.ts`, fault `clock-jump`), which writes a number of milliseconds there to make
 * one process's clock jump forward and, later, back — as a machine's clock does when it is stepped. It moves
 * `deps.now()` only, the clock the services read (record times, signature windows, renewal due dates); token
 * lifetimes, BullMQ's delays and the database's `now()` keep the machine's clock (on a machine whose clock is
 * stepped they would move too: the fault is the services' clock moving alone). The times shared across
 * processes (deliveries' due times and leases, idempotency locks) are the database's (`db/shared-clock.ts`):
 * the jump does not move them.
 *
 * The file holds a whole number of milliseconds (missing or unreadable: 0) and is read again every `pollMs`.
 *
 * @example
 * ```ts
 * const clock = createOffsetClock("/tmp/clock-api1");   // the file says 120000
 * clock.now();                                         // two minutes ahead of the machine
 * clock.stop();
 * ```
 *
 * @module
 */
import { readFileSync } from "node:fs";

/** A clock `offset` milliseconds ahead of the machine's, `offset` read from a file. */
export interface OffsetClock {
  now: () => Date;
  /** Stops reading the file. */
  stop(): void;
}

function readOffsetMs(file: string): number {
  try {
    const offset = Number(readFileSync(file, "utf8").trim());
    return Number.isSafeInteger(offset) ? offset : 0;
  } catch {
    return 0;
  }
}

/** The machine's clock plus the offset in `file`, read now and every `pollMs` (default 100). */
export function createOffsetClock(file: string, pollMs = 100): OffsetClock {
  let offsetMs = readOffsetMs(file);
  const timer = setInterval(() => {
    offsetMs = readOffsetMs(file);
  }, pollMs);
  // The poll alone does not keep a process alive.
  timer.unref?.();
  return { now: () => new Date(Date.now() + offsetMs), stop: () => clearInterval(timer) };
}
