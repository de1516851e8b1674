/**
 * The `<provider>-sync` job of a checkout (contract §8): confirms one pending checkout with its provider on the sync
 * schedule after its creation (`payments/sync-chain.ts`) so that a lost IPN never means a lost payment.
 * Still pending after 24 h → flagged for the operator (an alert log line), never assumed failed. The
 * sweeper re-creates a missing chain (see {@link sweepCheckoutSyncs}).
 */
import type { PaymentState } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { defineSyncChain, syncWindowStart, type SyncStepData } from "../payments/sync-chain.ts";
import { confirmAndApply } from "./apply-confirmation.ts";

export type SyncJobData = SyncStepData<"paymentId">;

export const CHECKOUT_SYNC = defineSyncChain({
  jobName: "confirm-checkout",
  idField: "paymentId",
  label: "checkout sync",
  logExpired: (logger, paymentId) =>
    logger.error({ alert: "providerB_checkout_stuck", paymentId }, "provider B checkout still pending after 24 h; left pending for the operator"),
});

/**
 * One run of the sync job: confirm and apply, then enqueue the next step while the checkout is pending
 * and younger than 24 h. A provider failure is logged and the schedule goes on.
 */
export async function syncCheckout(deps: Deps, job: SyncJobData): Promise<void> {
  // The whole row: confirmAndApply decides from it (one read of the payment per run).
  const payment = await deps.db.selectFrom("payments").selectAll().where("id", "=", job.paymentId).executeTakeFirst();
  if (payment?.kind !== "checkout" || payment.state !== "pending") return;
  let state: PaymentState = payment.state;
  try {
    const result = await confirmAndApply(deps, payment.id, { payment });
    if (result.outcome !== "mismatch") state = result.state;
  } catch (err) {
    deps.logger.warn({ err, paymentId: payment.id, step: job.step }, "provider B sync could not confirm; trying again at the next step");
  }
  if (state !== "pending") return;
  await CHECKOUT_SYNC.enqueueNext(deps, { subjectId: payment.id, provider: payment.provider, createdAt: payment.created_at, step: job.step });
}

/**
 * Sweeper clause: every pending checkout younger than 24 h whose sync chain has no live job
 * (Redis lost, a crash between two steps) gets a sync now. Bounded per run.
 */
export async function sweepCheckoutSyncs(deps: Pick<Deps, "db" | "queue" | "logger" | "now">, options: { limit?: number } = {}): Promise<number> {
  const rows = await deps.db
    .selectFrom("payments")
    .select(["id", "provider", "created_at"])
    .where("kind", "=", "checkout")
    .where("state", "=", "pending")
    .where("created_at", ">", syncWindowStart(deps.now()))
    .orderBy("created_at")
    .limit(options.limit ?? 1000)
    .execute();
  return CHECKOUT_SYNC.resume(deps, rows);
}
