/**
 * The first step of a new direct payment's sync chain (contract §8: 5 s after it was made), held in the
 * process that made it until it is due instead of being enqueued when the payment is made.
 *
 * Most payments are settled before then by their provider's webhook (provider A's sandbox approves in 2 s),
 * and the step would only read the row, find it final and stop. Enqueuing it anyway cost ~14 % of the
 * gateway's CPU per payment (the BullMQ add, then the worker's fetch, run and completion: ~4–5 Redis round
 * trips) plus one SELECT. So the payment is remembered here, and when its step is due:
 * - settled in this process meanwhile (a webhook, a status read or the create call's own failure moved
 *   it out of `pending`: `applyDirectPaymentUpdate` calls {@link FirstSyncHold.settled}): nothing is
 *   enqueued — the step would do nothing;
 * - otherwise: step 0 is enqueued, due now (job id `<pay_…>.sync0` on the provider's sync queue), so it runs
 *   5 s after the payment was made (up to {@link TICK_MS} later), wherever the webhook went.
 *
 * The hold is the gateway's (`Deps.syncHold`, built by `createGateway`): two gateways in one process hold
 * nothing in common. Durability is the row's: a pending payment whose step 0 was never enqueued here (the
 * process stopped within those 5 s without {@link FirstSyncHold.release}) is found by the sweeper's clause
 * (`sweepDirectPaymentSyncs`, every minute) and its chain re-created then.
 *
 * Memory: one entry per payment made in the last 5 s on this gateway, at most {@link MAX_HELD}; past that,
 * step 0 is enqueued at once (delayed by the queue).
 */
import { REAL_TIMERS, type TimerHandle, type Timers } from "../../timers.ts";
import type { FirstSyncHold, HoldDeps, NewPayment } from "./first-sync-hold.ts";
import { syncOffsetMs } from "../payments/sync-chain.ts";
import { DIRECT_PAYMENT_SYNC } from "./sync-jobs.ts";

/** Held payments beyond which the first step is enqueued at once. */
export const MAX_HELD = 100_000;
/** Due steps are enqueued in batches at most this often (a step is at most this late). */
export const TICK_MS = 100;

export type { FirstSyncHold, HoldDeps, NewPayment } from "./first-sync-hold.ts";

interface Held {
  payment: NewPayment;
  /** Due time on the hold's clock (`timers.now()`: monotonic, or a test's virtual time). */
  due: number;
}

/**
 * A gateway's hold of first steps (`Deps.syncHold`), on the process's timers or a test's virtual time.
 *
 * @example
 * ```ts
 * const syncHold = createFirstSyncHold();
 * syncHold.hold(deps, { id: paymentId, provider: "providerA", createdAt: now });
 * ```
 */
export function createFirstSyncHold(timers: Timers = REAL_TIMERS): FirstSyncHold {
  let holdDeps: HoldDeps | undefined;
  /** Payment id → held step, in insertion order = due order (every payment waits the same {@link syncOffsetMs}(0)). */
  const held = new Map<string, Held>();
  let timer: TimerHandle | undefined;

  const enqueue = (deps: HoldDeps, payment: NewPayment, now: boolean): Promise<boolean> =>
    // Never rejects: a failed enqueue is logged, and the sweeper re-creates the chain from the row.
    DIRECT_PAYMENT_SYNC.enqueue(deps, { subjectId: payment.id, provider: payment.provider, createdAt: payment.createdAt, step: 0, now });

  const arm = (waitMs: number): void => {
    timer = timers.setTimeout(fire, Math.max(waitMs, TICK_MS));
    timer.unref?.();
  };

  function fire(): void {
    timer = undefined;
    const now = timers.now();
    for (const [paymentId, entry] of held) {
      if (entry.due > now) {
        arm(entry.due - now);
        return;
      }
      held.delete(paymentId);
      void enqueue(holdDeps!, entry.payment, true);
    }
  }

  return {
    hold(deps, payment) {
      if (held.size >= MAX_HELD) {
        void enqueue(deps, payment, false);
        return;
      }
      holdDeps ??= deps;
      const waitMs = Math.max(0, payment.createdAt.getTime() + syncOffsetMs(0) - deps.now().getTime());
      held.set(payment.id, { payment, due: timers.now() + waitMs });
      if (timer === undefined) arm(waitMs);
    },
    settled(paymentId) {
      held.delete(paymentId);
    },
    async release() {
      if (timer !== undefined) timers.clearTimeout(timer);
      timer = undefined;
      const entries = [...held.values()];
      held.clear();
      if (!holdDeps) return 0;
      await Promise.all(entries.map((entry) => enqueue(holdDeps!, entry.payment, false)));
      return entries.length;
    },
    get size() {
      return held.size;
    },
  };
}

/**
 * Enqueues the steps `deps`' gateway holds (see {@link FirstSyncHold.release}); `createGateway`'s `stop()`
 * calls it before the queue closes.
 */
export function releaseHeldFirstSyncs(deps: { syncHold: FirstSyncHold }): Promise<number> {
  return deps.syncHold.release();
}
