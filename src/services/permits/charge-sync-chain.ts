/**
 * The `<provider>-sync` chain of a pending permit charge (on the queue of the provider of standing authorisations), declared on its own: the charge's creation
 * (`charges.ts`) starts it and its job (`charge-sync.ts`) steps it, and neither needs to import the other.
 *
 * @module
 */
import { defineSyncChain, type SyncStepData } from "../payments/sync-chain.ts";

export type ChargeSyncJobData = SyncStepData<"chargeId">;

/** Job name `confirm-permit-charge` on the provider's `<provider>-sync` (beside the checkout's `confirm-checkout`). */
export const CHARGE_SYNC = defineSyncChain({
  jobName: "confirm-permit-charge",
  idField: "chargeId",
  label: "permit charge sync",
  logExpired: (logger, chargeId) =>
    logger.error({ alert: "providerB_charge_stuck", chargeId }, "permit charge still pending after 24 h; left pending for the operator"),
});
