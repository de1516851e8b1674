/**
 * What the provider's sandbox does with a USSD push, by amount in FCFA (spec §8, providers.md): below
 * 1000 the customer "approves" within a few seconds; 1000 to 5000 inclusive wait for someone to approve
 * or decline on the sandbox console; above 5000 the operator refuses.
 */
import type { Ledger, SimTransaction } from "./ledger.ts";
import type { Timers } from "./timers.ts";

export type SandboxOutcome = { kind: "approve" } | { kind: "await_console" } | { kind: "decline"; lastErrorCode: string };

/** The error code the sandbox declines large amounts with. */
export const SANDBOX_DECLINE_CODE = "INSUFFICIENT_FUND_ERROR";

/** The sandbox's answer to a push of `amount`. */
export function sandboxOutcomeFor(amount: number): SandboxOutcome {
  if (amount < 1000) return { kind: "approve" };
  if (amount <= 5000) return { kind: "await_console" };
  return { kind: "decline", lastErrorCode: SANDBOX_DECLINE_CODE };
}

export interface SandboxClock {
  ledger: Ledger;
  timers: Timers;
  approveDelayMs: number;
  declineDelayMs: number;
}

/**
 * Plays the sandbox's answer to a push that was just sent: approval or decline after its delay (unless
 * the console settled the transaction first), or nothing until the console does.
 */
export function playSandboxOutcome(clock: SandboxClock, trx: SimTransaction): void {
  const outcome = sandboxOutcomeFor(trx.amount);
  if (outcome.kind === "approve") clock.timers.after(clock.approveDelayMs, () => trx.status === "pending" && clock.ledger.settle(trx, "approved"));
  if (outcome.kind === "decline")
    clock.timers.after(clock.declineDelayMs, () => trx.status === "pending" && clock.ledger.settle(trx, "declined", outcome.lastErrorCode));
}
