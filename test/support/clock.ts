/**
 * A test's own clock for a gateway's deps: it stands for every clock of the test, the database's too. The
 * gateway on the machine's clock reads the times shared across processes (leases, locks, due times) from the
 * database's `now()` (`src/db/shared-clock.ts`); deps whose `now` a test moves must move those as well, so the
 * database's clock is dropped from them.
 *
 * @example
 * ```ts
 * const later = onTestClock(tg.gateway.deps, () => new Date(Date.now() + 86_400_000));
 * ```
 */
import type { Deps } from "../../src/services/deps.ts";

export function onTestClock<D extends Pick<Deps, "now" | "sharedClock">>(deps: D, now: () => Date): Omit<D, "sharedClock"> & { now: () => Date } {
  const { sharedClock: _database, ...rest } = deps;
  return { ...rest, now };
}
