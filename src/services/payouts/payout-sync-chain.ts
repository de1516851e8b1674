/**
 * The sync chain of a pending payout or refund, on the one schedule of every pending subject
 * (`payments/sync-chain.ts`) and on its provider's queue (`<provider>-sync`, job name `advance-payout`).
 * Step 0 runs at once when the payout is recorded: it sends it. Every step moves the payout at its provider
 * as far as it safely can (`advance-payout.ts`); still pending after 24 h, it is left for the operator,
 * never assumed failed.
 *
 * Declared here without its step: `record-money-out.ts` enqueues it and `workers/sync-workers.ts` runs it.
 *
 * @module
 */
import { defineSyncChain, type SyncStepData } from "../payments/sync-chain.ts";

export type PayoutSyncJobData = SyncStepData<"payoutId">;

export const payoutChain = defineSyncChain({
  jobName: "advance-payout",
  idField: "payoutId",
  label: "payout sync",
  logExpired: (logger, payoutId, context) => logger.warn({ payoutId, ...context }, "payout still pending after 24 h: left for the operator"),
});
