/**
 * Never more out than in, fees included (issue 24): a payout or refund from the service's pooled account at a
 * provider spends the tenant's money there, and the provider's fee leaves that account with it. The amount
 * is reserved when the payout is recorded (`record-money-out.ts`); the fee is known only once the provider
 * created the payout (provider A's create answer), so right before the call that moves money
 * (`PayoutRequest.beforeSending`) the announced fee is set aside from what the tenant holds on that pooled
 * account (`<id>.fee_reserved`) — or, when it holds less, the payout is stopped: `failed` with
 * `insufficient_balance`, its reservation released, its event recorded, nothing sent. From a tenant's own
 * account the provider decides, as for the amount.
 *
 * @module
 */
import type { PayoutRow } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { availableOf, POOLED_ACCOUNT, reserveFee } from "../ledger/ledger.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";
import { ledgerSubjectOf } from "./record-money-out.ts";
import { lockPayout, stopBeforeSending } from "./apply-payout.ts";

/** The failure code of a payout stopped because the tenant's money on the pooled account could not pay its fee. */
export const FEE_NOT_COVERED = "insufficient_balance";

/**
 * Sets the announced fee aside, or stops the payout; answers whether it was stopped. Idempotent: a fee set
 * aside already (a step tried again) is not set aside twice.
 */
export async function coverFee(deps: Pick<Deps, "db" | "now" | "queue" | "logger">, row: PayoutRow, fee: number | null): Promise<{ stopped: boolean }> {
  if (row.provider_account !== POOLED_ACCOUNT || fee === null || fee <= 0) return { stopped: false };
  const now = deps.now();
  const decided = await deps.db.transaction().execute(async (tx) => {
    // The payment's row (a refund's), the payout's, then the tenant's: the order every writer takes them.
    const locked = await lockPayout(tx, row.id);
    if (locked.state !== "pending") return { stopped: true, deliveryIds: [] as string[] };
    const aside = await tx.selectFrom("ledger_entries").select("id").where("journal", "=", `${row.id}.fee_reserved`).executeTakeFirst();
    if (aside) return { stopped: false, deliveryIds: [] as string[] };
    await tx.selectFrom("tenants").select("id").where("id", "=", row.tenant_id).forUpdate().executeTakeFirstOrThrow();
    const subject = ledgerSubjectOf(locked);
    const available = await availableOf(tx, { ...subject, holding: subject.holding });
    if (available >= fee) {
      await reserveFee(tx, now, subject, fee);
      return { stopped: false, deliveryIds: [] as string[] };
    }
    const stopped = await stopBeforeSending(tx, now, row.id, FEE_NOT_COVERED);
    return { stopped: true, deliveryIds: stopped.deliveryIds };
  });
  if (decided.stopped)
    deps.logger.warn(
      { payoutId: row.id, fee },
      "a payout was stopped before sending: the tenant's money on the pooled account does not cover the provider's fee",
    );
  if (decided.deliveryIds.length > 0) await scheduleDeliveries(deps, decided.deliveryIds);
  return { stopped: decided.stopped };
}
