/**
 * The order of a payment's states (contract §4 "Order of states", §5): the one rule every applier follows,
 * whatever provider reported the state and whatever kind the payment is (a direct payment, a checkout, a
 * permit charge).
 *
 * States only move forward, by rank: `pending` < `failed` = `cancelled` < `succeeded` < `refunded`.
 * - a paid state (`succeeded`) wins over `pending`, `failed` and `cancelled`: a provider may report a late
 *   success, and a customer may pay after cancelling once (§5: `completed` wins over `cancelled` and `failed`);
 * - `refunded` follows a paid state (or a state whose payment we missed: the provider says it was paid);
 * - `failed` and `cancelled` only replace `pending` — neither replaces the other;
 * - nothing moves a record back to `pending`, and nothing leaves `refunded`.
 *
 * @module
 */
import type { PaymentState } from "../../db/schema.ts";

const RANK: Record<PaymentState, number> = { pending: 0, failed: 1, cancelled: 1, succeeded: 2, refunded: 3 };

/**
 * May a payment in state `from` move to `to`?
 *
 * @example
 * ```ts
 * mayMove("cancelled", "succeeded"); // true: a late payment wins
 * mayMove("failed", "cancelled"); // false
 * ```
 */
export function mayMove(from: PaymentState, to: PaymentState): boolean {
  return RANK[to] > RANK[from];
}

/** The state a payment moves to when `proposed` is reported: `proposed`, or `current` when the order forbids the move. */
export function nextState(current: PaymentState, proposed: PaymentState): PaymentState {
  return mayMove(current, proposed) ? proposed : current;
}
