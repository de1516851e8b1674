/**
 * The sync queues (contract §8): one per provider the gateway runs, `<provider>-sync`, on which every
 * pending subject of that provider follows the one sync schedule (`services/payments/sync-chain.ts`). The
 * job name picks the step:
 *
 * | Job name                | Step                                   | Subjects                          |
 * |-------------------------|----------------------------------------|-----------------------------------|
 * | `sync`                  | `syncDirectPayment` (read and apply)   | direct payments of any provider   |
 * | `confirm-checkout`      | `syncCheckout` (confirm and apply)     | provider B checkouts              |
 * | `confirm-permit-charge` | `syncPermitCharge` (send or confirm)   | provider B permit charges         |
 * | `confirm-permit`        | `syncPermit` (confirm and apply)       | provider B permits                |
 * | `advance-payout`        | `syncPayout` (send, or read and apply) | payouts and refunds of any provider |
 *
 * Registered by `registerWorkers` (`mod.ts`); the chains themselves only enqueue (`jobs/queues.ts`), and import no step.
 *
 * @module
 */
import { syncQueueOf } from "../jobs/queues.ts";
import { CHECKOUT_SYNC, syncCheckout, type SyncJobData as CheckoutSyncJobData } from "../services/checkout/checkout-sync.ts";
import type { Deps } from "../services/deps.ts";
import { DIRECT_PAYMENT_SYNC, syncDirectPayment, type DirectPaymentSyncJobData } from "../services/direct-payments/sync-jobs.ts";
import { syncPermitCharge } from "../services/permits/charge-sync.ts";
import { CHARGE_SYNC, type ChargeSyncJobData } from "../services/permits/charge-sync-chain.ts";
import { PERMIT_SYNC, syncPermit, type PermitSyncJobData } from "../services/permits/permit-sync.ts";
import { syncPayout } from "../services/payouts/advance-payout.ts";
import { payoutChain, type PayoutSyncJobData } from "../services/payouts/payout-sync-chain.ts";
import { providerJobTimeLimitMs } from "./provider-job-time-limit.ts";

/** Each chain's step, by its job name. */
const STEPS: Record<string, (deps: Deps, data: unknown) => Promise<void>> = {
  [DIRECT_PAYMENT_SYNC.jobName]: (deps, data) => syncDirectPayment(deps, data as DirectPaymentSyncJobData),
  [CHECKOUT_SYNC.jobName]: (deps, data) => syncCheckout(deps, data as CheckoutSyncJobData),
  [CHARGE_SYNC.jobName]: (deps, data) => syncPermitCharge(deps, data as ChargeSyncJobData),
  [PERMIT_SYNC.jobName]: (deps, data) => syncPermit(deps, data as PermitSyncJobData),
  [payoutChain.jobName]: (deps, data) => syncPayout(deps, data as PayoutSyncJobData),
};

export interface SyncWorkerOptions {
  /** Steps run at once per provider queue by this process. Default 10. */
  concurrency?: number;
}

/**
 * Registers the `<provider>-sync` queue of every provider in `deps.providers`.
 *
 * @example
 * ```ts
 * registerSyncWorkers(deps); // providerA-sync, providerB-sync, and any other provider's
 * ```
 */
export function registerSyncWorkers(deps: Deps, options: SyncWorkerOptions = {}): void {
  const timeLimitMs = providerJobTimeLimitMs(deps.config);
  for (const provider of deps.providers.all) {
    const queue = syncQueueOf(provider.name);
    deps.queue.process<unknown>(
      queue,
      async (job) => {
        const step = STEPS[job.name];
        if (step) return step(deps, job.data);
        deps.logger.warn({ queue, jobName: job.name, jobId: job.id }, "a sync job of no known chain: dropped");
      },
      { concurrency: options.concurrency ?? 10, timeLimitMs },
    );
  }
}
