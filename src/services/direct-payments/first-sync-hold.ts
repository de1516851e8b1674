/**
 * The types of a gateway's hold of first sync steps (`Deps.syncHold`, built by `first-sync.ts`): a module of
 * types only, so that `deps.ts` names them without importing the code that uses `Deps`.
 *
 * @module
 */
import type { Logger } from "pino";
import type { JobQueue } from "../../jobs/queue.ts";
import type { ProviderName } from "../../providers/provider.ts";

/** What holding a step needs of the gateway. */
export interface HoldDeps {
  queue: JobQueue;
  logger: Logger;
  now: () => Date;
}

/** A payment just recorded, whose chain starts here. */
export interface NewPayment {
  id: string;
  provider: ProviderName;
  createdAt: Date;
}

/** The first steps a gateway holds (see the module's header). */
export interface FirstSyncHold {
  /** Holds step 0 of `payment`, just recorded: enqueued when due unless the payment settles first. */
  hold(deps: HoldDeps, payment: NewPayment): void;
  /** The payment left `pending` (its state is final): its held step has nothing to do. */
  settled(paymentId: string): void;
  /**
   * Enqueues every held step now, each with the wait it has left, and stops holding: for a gateway that
   * stops (call it before the queue closes), so that its payments' first steps keep their time instead of
   * waiting for the sweeper. Resolves when every enqueue answered (none rejects) with how many there were.
   */
  release(): Promise<number>;
  /** How many first steps are held. */
  readonly size: number;
}
