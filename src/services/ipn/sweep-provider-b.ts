/**
 * Provider B's clauses of the periodic sweep (contract §8): stored IPNs that were never processed, pending
 * checkouts, permit charges and permits whose sync job is missing, and orphan IPNs to re-match or expire. Runs in the `sweeper` job
 * beside the delivery sweep; a failure here is logged and never stops the other clauses.
 */
import { sweepCheckoutSyncs } from "../checkout/checkout-sync.ts";
import { sweepChargeSyncs } from "../permits/charge-sync.ts";
import { sweepPermitSyncs } from "../permits/permit-sync.ts";
import type { Deps } from "../deps.ts";
import { sweepUnprocessedIpns } from "./ipn-jobs.ts";
import { sweepOrphans } from "./orphans.ts";

export interface ProviderBSweepReport {
  ipnsEnqueued: number;
  syncsEnqueued: number;
  chargeSyncsEnqueued: number;
  permitSyncsEnqueued: number;
  orphansRematched: number;
  orphansExpired: number;
}

/** One sweep of provider B's work. Never throws. */
export async function sweepProviderB(deps: Deps, options: { ipnMinAgeMs?: number } = {}): Promise<ProviderBSweepReport> {
  const report: ProviderBSweepReport = {
    ipnsEnqueued: 0,
    syncsEnqueued: 0,
    chargeSyncsEnqueued: 0,
    permitSyncsEnqueued: 0,
    orphansRematched: 0,
    orphansExpired: 0,
  };
  const step = async (name: string, run: () => Promise<void>) => {
    try {
      await run();
    } catch (err) {
      deps.logger.error({ err, clause: name }, "provider B sweep clause failed");
    }
  };
  await step("ipns", async () => void (report.ipnsEnqueued = await sweepUnprocessedIpns(deps, { minAgeMs: options.ipnMinAgeMs })));
  await step("syncs", async () => void (report.syncsEnqueued = await sweepCheckoutSyncs(deps)));
  await step("charge-syncs", async () => void (report.chargeSyncsEnqueued = await sweepChargeSyncs(deps)));
  await step("permit-syncs", async () => void (report.permitSyncsEnqueued = await sweepPermitSyncs(deps)));
  await step("orphans", async () => {
    const { rematched, expired } = await sweepOrphans(deps);
    report.orphansRematched = rematched;
    report.orphansExpired = expired;
  });
  return report;
}
