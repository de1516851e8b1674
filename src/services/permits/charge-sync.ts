/**
 * The `providerB-sync` chain of a pending permit charge (contract §8), on the checkout's schedule after the
 * charge's creation (`payments/sync-chain.ts`). Each step: a charge provider B never answered is sent again
 * under its own idempotency key (provider B answers its first result, never a second charge); an answered
 * `pending` one is confirmed through its invoice. Still pending after 24 h → flagged for the operator (an
 * alert log line), never assumed failed. The sweeper re-creates a lost chain.
 */
import type { PermitChargeStatus } from "../../db/schema.ts";
import { checkoutProviderOf } from "../checkout/checkout-provider.ts";
import type { Deps } from "../deps.ts";
import { confirmChargeAndApply } from "./charge-settle.ts";
import { CHARGE_SYNC, type ChargeSyncJobData } from "./charge-sync-chain.ts";
import { executePermitCharge } from "./charges.ts";
import { pendingInSyncWindow } from "./permit-sync.ts";

/** One run of the chain: send or confirm, then the next step while the charge is pending and younger than 24 h. */
export async function syncPermitCharge(deps: Deps, job: ChargeSyncJobData): Promise<void> {
  const charge = await deps.db
    .selectFrom("permit_charges")
    .select(["id", "status", "provider_answered_at", "created_at"])
    .where("id", "=", job.chargeId)
    .executeTakeFirst();
  if (charge?.status !== "pending") return;
  let status: PermitChargeStatus = charge.status;
  try {
    status = charge.provider_answered_at === null ? (await executePermitCharge(deps, charge.id)).status : await confirmedStatus(deps, charge.id);
  } catch (err) {
    deps.logger.warn({ err, chargeId: charge.id, step: job.step }, "permit charge sync could not reach provider B; trying again at the next step");
  }
  if (status !== "pending") return;
  await CHARGE_SYNC.enqueueNext(deps, { subjectId: charge.id, provider: checkoutProviderOf(deps).name, createdAt: charge.created_at, step: job.step });
}

async function confirmedStatus(deps: Deps, chargeId: string): Promise<PermitChargeStatus> {
  const result = await confirmChargeAndApply(deps, chargeId);
  if (result.outcome !== "mismatch") return result.status;
  return "pending";
}

/**
 * Sweeper clause: every pending permit charge younger than 24 h whose sync chain has no live job (Redis
 * lost, a process killed between two steps) gets a step now. Bounded per run.
 */
export async function sweepChargeSyncs(deps: Pick<Deps, "db" | "queue" | "logger" | "now" | "providers">, options: { limit?: number } = {}): Promise<number> {
  return CHARGE_SYNC.resume(deps, await pendingInSyncWindow(deps, "permit_charges", options.limit));
}
