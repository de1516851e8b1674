/**
 * The first `providerA-sync` run of a new direct payment (contract §8: 5 s after it was made), held in
 * this process until it is due instead of being enqueued when the payment is made.
 *
 * Most payments are settled before then by provider A's webhook (the sandbox approves in 2 s), and the
 * run would only read the row, find it final and stop. Enqueuing it anyway cost ~14 % of the gateway's
 * CPU per payment (the BullMQ add, then the worker's fetch, run and completion: ~4–5 Redis round trips)
 * plus one SELECT. So the payment is remembered here, and when its run is due:
 * - settled in this process meanwhile (a webhook, a status read or the create call's own failure moved
 *   it out of `pending`, through {@link markSettled}): nothing is enqueued — the run would do nothing;
 * - otherwise: the run is enqueued as before (job id `<pay_…>:0`, due now), so it runs 5 s after the
 *   payment was made (up to {@link TICK_MS} later), wherever the webhook went.
 *
 * Durability is the row's, as before: `next_sync_at` is written with the payment, so a payment whose
 * run was never enqueued here (the process stopped within those 5 s) is found by the sweeper's clause
 * (`sweepDirectPaymentSyncs`, every minute) and enqueued then. Before, the same sweeper covered a lost
 * enqueue; the window is now the 5 s before the run instead of the enqueue call.
 *
 * Memory: one entry per payment made in the last 5 s on this process (a `Map` of id → due time), at
 * most {@link MAX_HELD}; past that, the run is enqueued at once as before.
 */
import type { Deps } from "../deps.ts";
import type { JobQueue } from "../../jobs/queue.ts";
import { enqueueSync } from "./sync-jobs.ts";

/** Held payments of one queue beyond which the first run is enqueued at once. */
export const MAX_HELD = 100_000;
/** Due runs are enqueued in batches at most this often (a run is at most this late). */
export const TICK_MS = 100;

type HoldDeps = Pick<Deps, "queue" | "logger" | "now">;

interface Held {
  deps: HoldDeps;
  /** Payment id → due time on the monotonic clock (`performance.now()`), in insertion order = due order. */
  due: Map<string, number>;
  timer: ReturnType<typeof setTimeout> | undefined;
}

const heldByQueue = new WeakMap<JobQueue, Held>();

/**
 * Schedules the first sync run of a payment just recorded, due at `dueAt` on the gateway's clock.
 * Every caller uses the same wait (`syncWaitMs(0)`), so the order of calls is the order of due times.
 */
export function scheduleFirstSync(deps: HoldDeps, paymentId: string, dueAt: Date): void {
  let held = heldByQueue.get(deps.queue);
  if (!held) heldByQueue.set(deps.queue, (held = { deps, due: new Map(), timer: undefined }));
  if (held.due.size >= MAX_HELD) {
    void enqueueSync(deps, { paymentId, attempt: 0 }, dueAt);
    return;
  }
  const waitMs = Math.max(0, dueAt.getTime() - deps.now().getTime());
  held.due.set(paymentId, performance.now() + waitMs);
  if (held.timer === undefined) arm(held, waitMs);
}

/** The payment left `pending` (its state is final): its held first run has nothing to do. */
export function markSettled(deps: Pick<Deps, "queue">, paymentId: string): void {
  heldByQueue.get(deps.queue)?.due.delete(paymentId);
}

/**
 * Enqueues every held run now, each with the wait it has left, and stops holding: for a process that
 * stops (call it before the queue closes), so that its payments' first runs keep their time instead of
 * waiting for the sweeper. Resolves when every enqueue answered (none rejects).
 */
export async function releaseHeldFirstSyncs(deps: Pick<Deps, "queue">): Promise<number> {
  const held = heldByQueue.get(deps.queue);
  if (!held) return 0;
  heldByQueue.delete(deps.queue);
  if (held.timer !== undefined) clearTimeout(held.timer);
  const now = performance.now();
  const base = held.deps.now().getTime();
  const runs = [...held.due].map(([paymentId, due]) => enqueueSync(held.deps, { paymentId, attempt: 0 }, new Date(base + Math.max(0, due - now))));
  await Promise.all(runs);
  return runs.length;
}

/** How many first runs are held (for tests). */
export function heldFirstSyncs(deps: Pick<Deps, "queue">): number {
  return heldByQueue.get(deps.queue)?.due.size ?? 0;
}

function arm(held: Held, waitMs: number): void {
  const timer = setTimeout(() => fire(held), Math.max(waitMs, TICK_MS));
  timer.unref?.();
  held.timer = timer;
}

function fire(held: Held): void {
  held.timer = undefined;
  const now = performance.now();
  const dueAt = held.deps.now();
  for (const [paymentId, due] of held.due) {
    if (due > now) {
      arm(held, due - now);
      return;
    }
    held.due.delete(paymentId);
    // Never rejects: a failed enqueue is logged, and the sweeper enqueues it from the row.
    void enqueueSync(held.deps, { paymentId, attempt: 0 }, dueAt);
  }
}
