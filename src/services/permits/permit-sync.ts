/**
 * The `<provider>-sync` chain of a pending permit (on the queue of the provider of standing authorisations) (contract §8), so that a lost permit IPN never leaves an
 * authorised permit `pending`: on the checkout's schedule after the permit's creation
 * (`payments/sync-chain.ts`) the permit is confirmed with provider B (only the confirmed answer counts,
 * checked against our record) and applied by the code the IPN uses (`confirmPermitAndApply`: the status,
 * its event and, when it ended, the schedule cancel, in one transaction). The chain stops as soon as the
 * permit is no longer pending. Still pending after 24 h: the customer has not authorised it; the chain
 * stops (a later IPN, or a `DELETE`, still settles it). The sweeper re-creates a lost chain.
 */
import type { PermitStatus } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { defineSyncChain, syncWindowStart, type SyncStepData } from "../payments/sync-chain.ts";
import { checkoutProviderOf } from "../checkout/checkout-provider.ts";
import { confirmPermitAndApply } from "./apply-permit-status.ts";

export type PermitSyncJobData = SyncStepData<"permitId">;

/** Job name `confirm-permit` on the provider's `<provider>-sync` (beside `confirm-checkout` and `confirm-permit-charge`). */
export const PERMIT_SYNC = defineSyncChain({
  jobName: "confirm-permit",
  idField: "permitId",
  label: "permit sync",
  logExpired: (logger, permitId) => logger.info({ permitId }, "permit still pending after 24 h (not authorised at provider B); its sync chain stops"),
});

/**
 * One run of the chain: confirm and apply, then the next step while the permit is pending and younger
 * than 24 h. A provider failure (502/504) or a confirm that does not match our record (alerted by
 * `confirmPermitAndApply`) changes nothing, and the chain goes on.
 */
export async function syncPermit(deps: Deps, job: PermitSyncJobData): Promise<void> {
  const permit = await deps.db.selectFrom("permits").select(["id", "status", "created_at"]).where("id", "=", job.permitId).executeTakeFirst();
  if (permit?.status !== "pending") return;
  let status: PermitStatus = permit.status;
  try {
    const result = await confirmPermitAndApply(deps, permit.id);
    if (result.outcome !== "mismatch") status = result.status;
  } catch (err) {
    deps.logger.warn({ err, permitId: permit.id, step: job.step }, "permit sync could not confirm with provider B; trying again at the next step");
  }
  if (status !== "pending") return;
  await PERMIT_SYNC.enqueueNext(deps, { subjectId: permit.id, provider: checkoutProviderOf(deps).name, createdAt: permit.created_at, step: job.step });
}

/**
 * Sweeper clause: every pending permit younger than 24 h whose sync chain has no live job (Redis lost, a
 * process killed between two steps, an enqueue that failed at creation) gets a step now. Bounded per run.
 */
export async function sweepPermitSyncs(deps: Pick<Deps, "db" | "queue" | "logger" | "now" | "providers">, options: { limit?: number } = {}): Promise<number> {
  return PERMIT_SYNC.resume(deps, await pendingInSyncWindow(deps, "permits", options.limit));
}

/** The pending permits (or permit charges) still on their sync schedule, oldest first, at most `limit` (default 1000). */
export async function pendingInSyncWindow(
  deps: Pick<Deps, "db" | "now" | "providers">,
  table: "permits" | "permit_charges",
  limit = 1000,
): Promise<{ id: string; provider: string; created_at: Date }[]> {
  // Permits and their charges are held by the provider of standing authorisations (chosen by what it does).
  const provider = checkoutProviderOf(deps).name;
  const rows = await deps.db
    .selectFrom(table)
    .select(["id", "created_at"])
    .where("status", "=", "pending")
    .where("created_at", ">", syncWindowStart(deps.now()))
    .orderBy("created_at")
    .limit(limit)
    .execute();
  return rows.map((row) => ({ ...row, provider }));
}
