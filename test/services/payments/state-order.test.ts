// The order of payment states (contract §4 "Order of states", §5): the one rule of every applier.
import { describe, expect, it } from "bun:test";
import type { PaymentState } from "../../../src/db/schema.ts";
import { mayMove, nextState } from "../../../src/services/payments/state-order.ts";

const STATES: PaymentState[] = ["pending", "failed", "cancelled", "succeeded", "refunded"];

/** Every allowed move, written out from the contract rather than from the ranks. */
const ALLOWED = new Set([
  // Out of pending: to any outcome (refunded included: the provider says it was paid, then refunded).
  "pending>failed",
  "pending>cancelled",
  "pending>succeeded",
  "pending>refunded",
  // A paid state wins over failed and cancelled (a late success; a customer paying after cancelling once).
  "failed>succeeded",
  "cancelled>succeeded",
  // refunded follows a paid state, and wins over what a paid state wins over.
  "succeeded>refunded",
  "failed>refunded",
  "cancelled>refunded",
]);

describe("the order of payment states", () => {
  it("allows exactly the contract's moves", () => {
    for (const from of STATES)
      for (const to of STATES)
        expect({ move: `${from}>${to}`, allowed: mayMove(from, to) }).toEqual({ move: `${from}>${to}`, allowed: ALLOWED.has(`${from}>${to}`) });
  });

  it("never moves back to pending, never leaves refunded, never moves between failed and cancelled", () => {
    for (const from of STATES) expect(mayMove(from, "pending")).toBe(false);
    for (const to of STATES) expect(mayMove("refunded", to)).toBe(false);
    expect(mayMove("failed", "cancelled")).toBe(false);
    expect(mayMove("cancelled", "failed")).toBe(false);
  });

  it("nextState is the proposed state when the move is allowed, the current one otherwise", () => {
    expect(nextState("pending", "succeeded")).toBe("succeeded");
    expect(nextState("failed", "succeeded")).toBe("succeeded");
    expect(nextState("succeeded", "failed")).toBe("succeeded");
    expect(nextState("succeeded", "pending")).toBe("succeeded");
    expect(nextState("succeeded", "refunded")).toBe("refunded");
    expect(nextState("refunded", "succeeded")).toBe("refunded");
    expect(nextState("cancelled", "failed")).toBe("cancelled");
  });
});
