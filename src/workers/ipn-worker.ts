/**
 * The `ipn` queue (contract §8): process one stored signed notification, an IPN of the checkout provider
 * (provider B's in the default registry; `services/ipn/ipn-jobs.ts`). Registered by `registerWorkers`.
 *
 * @module
 */
import { IPN_QUEUE, type IpnJobData } from "../jobs/queues.ts";
import type { Deps } from "../services/deps.ts";
import { processIpn } from "../services/ipn/ipn-jobs.ts";
import { providerJobTimeLimitMs } from "./provider-job-time-limit.ts";

export interface IpnWorkerOptions {
  /** IPNs processed at once by this process. Default 20. */
  ipnConcurrency?: number;
}

/**
 * Registers the `ipn` queue's handler on `deps.queue`.
 *
 * @example
 * ```ts
 * registerIpnWorker(deps, { ipnConcurrency: 5 });
 * ```
 */
export function registerIpnWorker(deps: Deps, options: IpnWorkerOptions = {}): void {
  const timeLimitMs = providerJobTimeLimitMs(deps.config);
  deps.queue.process<IpnJobData>(IPN_QUEUE, (job) => processIpn(deps, job.data.ipnId), { concurrency: options.ipnConcurrency ?? 20, timeLimitMs });
}
