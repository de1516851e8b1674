/**
 * Provider B's queues (contract §8): `ipn` (process one stored IPN) and `providerB-sync` (confirm one
 * pending checkout on its schedule). Registered by `registerWorkers`.
 */
import { PROVIDER_B_SYNC_QUEUE, syncCheckout, type SyncJobData } from "../services/checkout/checkout-sync.ts";
import type { Deps } from "../services/deps.ts";
import { IPN_QUEUE, processIpn, type IpnJobData } from "../services/ipn/ipn-jobs.ts";

export interface ProviderBWorkerOptions {
  /** IPNs processed at once by this process. Default 20. */
  ipnConcurrency?: number;
  /** Sync confirms at once. Default 10. */
  syncConcurrency?: number;
}

export function registerProviderBWorkers(deps: Deps, options: ProviderBWorkerOptions = {}): void {
  deps.queue.process<IpnJobData>(IPN_QUEUE, (job) => processIpn(deps, job.data.ipnId), { concurrency: options.ipnConcurrency ?? 20 });
  deps.queue.process<SyncJobData>(PROVIDER_B_SYNC_QUEUE, (job) => syncCheckout(deps, job.data), { concurrency: options.syncConcurrency ?? 10 });
}
