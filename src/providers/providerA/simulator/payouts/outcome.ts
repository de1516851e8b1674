/**
 * What the sandbox does with a started payout, by amount, like the pay-ins (spec §8's rule, ours: the real
 * sandbox decides by number): it goes `started` → `processing` at once (after a short step); then below
 * 1000 it is sent after the approve delay, 1000 to 5000 inclusive wait for Send or Fail on the console,
 * and above 5000 it fails after the decline delay. A scheduled payout starts at its `scheduled_at`.
 */
import type { Timers } from "../timers.ts";
import type { PayoutLedger, SimPayout } from "./ledger.ts";

/** The `last_error_code` of a sandbox failure: our choice (the provider documents no list). */
export const SANDBOX_PAYOUT_FAILURE_CODE = "PAYOUT_DELIVERY_FAILED";

export type PayoutOutcome = { kind: "send" } | { kind: "await_console" } | { kind: "fail"; lastErrorCode: string };

/** The sandbox's answer to a payout of `amount`. */
export function payoutOutcomeFor(amount: number): PayoutOutcome {
  if (amount < 1000) return { kind: "send" };
  if (amount <= 5000) return { kind: "await_console" };
  return { kind: "fail", lastErrorCode: SANDBOX_PAYOUT_FAILURE_CODE };
}

export interface PayoutClock {
  payouts: PayoutLedger;
  timers: Timers;
  now: () => Date;
  approveDelayMs: number;
  declineDelayMs: number;
}

/** Plays a just-started payout to its end (unless the console ends it first). */
export function playPayoutOutcome(clock: PayoutClock, payout: SimPayout): void {
  const step = Math.max(1, Math.floor(clock.approveDelayMs / 4));
  const untilStart = payout.scheduledAt ? Math.max(0, payout.scheduledAt.getTime() - clock.now().getTime()) : 0;
  clock.timers.after(untilStart, () => {
    if (payout.status === "scheduled") clock.payouts.advance(payout, "started");
    clock.timers.after(step, () => {
      if (payout.status !== "started") return;
      clock.payouts.advance(payout, "processing");
      const outcome = payoutOutcomeFor(payout.amount);
      const inFlight = () => payout.status === "processing";
      if (outcome.kind === "send") clock.timers.after(clock.approveDelayMs, () => inFlight() && clock.payouts.settle(payout, "sent"));
      if (outcome.kind === "fail") clock.timers.after(clock.declineDelayMs, () => inFlight() && clock.payouts.settle(payout, "failed", outcome.lastErrorCode));
    });
  });
}

/**
 * Plays again what a payout in flight was waiting for when the simulator stopped (its timers are gone):
 * from `scheduled` or `started` as a payout just started, from `processing` its ending by amount.
 */
export function resumePayoutOutcome(clock: PayoutClock, payout: SimPayout): void {
  if (payout.status === "scheduled" || payout.status === "started") {
    playPayoutOutcome(clock, payout);
    return;
  }
  if (payout.status !== "processing") return;
  const outcome = payoutOutcomeFor(payout.amount);
  const inFlight = () => payout.status === "processing";
  if (outcome.kind === "send") clock.timers.after(clock.approveDelayMs, () => inFlight() && clock.payouts.settle(payout, "sent"));
  if (outcome.kind === "fail") clock.timers.after(clock.declineDelayMs, () => inFlight() && clock.payouts.settle(payout, "failed", outcome.lastErrorCode));
}
