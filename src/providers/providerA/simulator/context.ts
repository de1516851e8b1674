/**
 * What the simulator's routes share: its memory (transactions, payouts), its clock and timers and webhook sender, its sandbox delays, and
 * where its links point. One per simulator instance; nothing module-wide.
 */
import type { Ledger } from "./ledger.ts";
import type { PayoutLedger } from "./payouts/ledger.ts";
import type { SandboxClock } from "./sandbox-outcome.ts";
import type { Timers } from "./timers.ts";
import type { WebhookSender } from "./webhook-sender.ts";

export interface SimulatorContext extends SandboxClock {
  ledger: Ledger;
  /** Payouts and balances. */
  payouts: PayoutLedger;
  timers: Timers;
  now: () => Date;
  webhooks: WebhookSender;
  /** The absolute URL the simulator is reached at, for the links it hands out. */
  linkBase(request: Request): string;
}
