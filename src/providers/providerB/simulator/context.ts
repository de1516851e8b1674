/**
 * What every part of one provider B simulator shares: its store, its IPN sender, its clock, how it calls out
 * (a disbursement's callback probe), the disbursements' timers, and how it tells where it is reachable.
 */
import type { FetchLike, IpnSender } from "./ipn-sender.ts";
import type { SimulatorStore } from "./store.ts";

/** What a disbursement's timers and probes need; `close()` of the simulator stops its timers. */
export interface DisburseDesk {
  /** How long a sandbox disbursement below 1000 or above 5000 stays pending. */
  delayMs: number;
  /** How long the empty POST to a callback URL may take. */
  probeTimeoutMs: number;
  timers: Set<ReturnType<typeof setTimeout>>;
}

export interface SimulatorContext {
  store: SimulatorStore;
  ipn: IpnSender;
  now: () => Date;
  /** What posts to merchants' URLs outside the IPN sender (get-invoice's empty POST to the callback URL). */
  fetch: FetchLike;
  disburse: DisburseDesk;
  /**
   * The URL the simulator's own pages start from, as the caller of `request` sees it: the `publicBaseUrl`
   * option, or the request's origin followed by the mount path (a mount strips its prefix from the URL).
   */
  baseUrlOf: (request: Request) => string;
  /** Writes the store to the simulator's state file, when it has one (after a change a timer made). */
  saveState(): void;
}
