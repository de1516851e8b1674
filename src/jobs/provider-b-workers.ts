/**
 * Provider B's `ipn` queue (contract §8): process one stored IPN. Its `providerB-sync` queue is one of the
 * sync queues (`sync-workers.ts`). Registered by `registerWorkers`.
 */
import type { Deps } from "../services/deps.ts";
import { processIpn } from "../services/ipn/ipn-jobs.ts";
import { IPN_QUEUE, type IpnJobData } from "./queues.ts";

export interface ProviderBWorkerOptions {
  /** IPNs processed at once by this process. Default 20. */
  ipnConcurrency?: number;
}

/**
 * The time limit of a job that calls a provider: three calls of up to `PROVIDER_TIMEOUT_MS` each, and 30 s for
 * the database around them (`time-limit.ts`).
 */
export function providerJobTimeLimitMs(config: Pick<Deps["config"], "providerTimeoutMs">): number {
  return 3 * config.providerTimeoutMs + 30_000;
}

export function registerProviderBWorkers(deps: Deps, options: ProviderBWorkerOptions = {}): void {
  const timeLimitMs = providerJobTimeLimitMs(deps.config);
  deps.queue.process<IpnJobData>(IPN_QUEUE, (job) => processIpn(deps, job.data.ipnId), { concurrency: options.ipnConcurrency ?? 20, timeLimitMs });
}
