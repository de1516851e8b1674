/**
 * Provider B's queues (contract §8): `ipn` (process one stored IPN) and `providerB-sync` (confirm one
 * pending checkout, send / confirm one pending permit charge, or confirm one pending permit, on its
 * schedule — by job name).
 * Registered by `registerWorkers`.
 */
import { syncCheckout, type SyncJobData } from "../services/checkout/checkout-sync.ts";
import { PROVIDER_B_SYNC_QUEUE } from "../services/payments/sync-chain.ts";
import { syncPermitCharge } from "../services/permits/charge-sync.ts";
import { CHARGE_SYNC, type ChargeSyncJobData } from "../services/permits/charge-sync-chain.ts";
import { PERMIT_SYNC, syncPermit, type PermitSyncJobData } from "../services/permits/permit-sync.ts";
import type { Deps } from "../services/deps.ts";
import { IPN_QUEUE, processIpn, type IpnJobData } from "../services/ipn/ipn-jobs.ts";

export interface ProviderBWorkerOptions {
  /** IPNs processed at once by this process. Default 20. */
  ipnConcurrency?: number;
  /** Sync confirms at once. Default 10. */
  syncConcurrency?: number;
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
  deps.queue.process<SyncJobData | ChargeSyncJobData | PermitSyncJobData>(
    PROVIDER_B_SYNC_QUEUE,
    (job) => {
      if (job.name === CHARGE_SYNC.jobName) return syncPermitCharge(deps, job.data as ChargeSyncJobData);
      if (job.name === PERMIT_SYNC.jobName) return syncPermit(deps, job.data as PermitSyncJobData);
      return syncCheckout(deps, job.data as SyncJobData);
    },
    { concurrency: options.syncConcurrency ?? 10, timeLimitMs },
  );
}
