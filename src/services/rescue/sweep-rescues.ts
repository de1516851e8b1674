/**
 * The sweeper's part of the rescue (issue 31 point 3), run once a sweep (`workers/mod.ts`):
 *
 * - pushes unanswered for `RESCUE_AFTER` offer a rescue (`offer.ts`);
 * - a rescued payment not paid yet has its earlier pushes read again from their providers: a late approval of the
 *   first push wins even when its notification was lost (the payment's sync schedule reads only the attempt it
 *   points at). Each is followed as an abandoned attempt (`payments/abandoned-attempts.ts`), which gives the payment
 *   back to the attempt that was paid.
 *
 * @module
 */
import { sql } from "kysely";
import type { Deps } from "../deps.ts";
import { followAbandonedAttempt } from "../payments/abandoned-attempts.ts";
import { offerStalledRescues, RESCUE_WINDOW_MS } from "./offer.ts";

/** Earlier pushes read per sweep, at most (the oldest rescues first; what is left waits for the next sweep). */
const EARLIER_PUSHES_PER_SWEEP = 100;

/**
 * Reads again the pushes a rescued payment moved on from, while it is not paid: those its provider took, with an
 * id, neither settled nor abandoned (`error` is set on both), within the rescue window.
 *
 * @example
 * ```ts
 * const { read } = await followEarlierPushes(deps);
 * ```
 */
export async function followEarlierPushes(deps: Deps): Promise<{ read: number }> {
  const now = deps.now();
  const earlier = await deps.db
    .selectFrom("payment_attempts as a")
    .innerJoin("payment_rescues as r", "r.payment_id", "a.payment_id")
    .innerJoin("payments as p", "p.id", "a.payment_id")
    .select(["a.provider", "a.provider_transaction_id"])
    .where("p.state", "in", ["pending", "failed"])
    .where("p.created_at", ">", new Date(now.getTime() - RESCUE_WINDOW_MS))
    .where("a.outcome", "=", "started")
    .where("a.error", "is", null)
    .where("a.provider_transaction_id", "is not", null)
    .where(sql<boolean>`(a.provider, a.provider_transaction_id) is distinct from (p.provider, p.provider_transaction_id)`)
    .orderBy("r.created_at")
    .limit(EARLIER_PUSHES_PER_SWEEP)
    .execute();
  for (const push of earlier) await followAbandonedAttempt(deps, { provider: push.provider, providerPaymentId: push.provider_transaction_id! });
  return { read: earlier.length };
}

/** One sweep's rescue work: offers for stalled pushes, then the earlier pushes of rescued payments read again. */
export async function sweepRescues(deps: Deps): Promise<void> {
  await offerStalledRescues(deps);
  await followEarlierPushes(deps);
}
