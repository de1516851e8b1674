/**
 * What the simulator's routes share: its memory, its timers and webhook sender, its sandbox delays, and
 * where its links point. One per simulator instance; nothing module-wide.
 */
import type { Ledger } from "./ledger.ts";
import type { SandboxClock } from "./sandbox-outcome.ts";
import type { Timers } from "./timers.ts";
import type { WebhookSender } from "./webhook-sender.ts";

export interface SimulatorContext extends SandboxClock {
  ledger: Ledger;
  timers: Timers;
  webhooks: WebhookSender;
  /** The absolute URL the simulator is reached at, for the links it hands out. */
  linkBase(request: Request): string;
}
