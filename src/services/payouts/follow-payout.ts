/**
 * What a provider's inbound route calls once it has verified a notification about a payout (provider A's
 * `payout.sent`/`payout.failed` webhooks, provider B's disburse callback): the domain finds the payout by
 * our id (the provider's `merchant_reference` / `disburse_id`), reads it again from the provider — never
 * trusting the notification's body — and applies the answer (`advance-payout.ts`).
 *
 * @module
 */
import type { PayoutRow } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { advancePayout } from "./advance-payout.ts";

/**
 * Follows our payout `payoutId` at `provider`: `undefined` when no payout of ours of that provider has
 * that id (the route answers it like a known one, so the provider stops retrying).
 *
 * @example
 * ```ts
 * // in a provider's inbound route, after its signature checked out:
 * await followPayout(deps, { provider: "providerA", payoutId: body.merchant_reference });
 * ```
 */
export async function followPayout(deps: Deps, ref: { provider: string; payoutId: string }): Promise<PayoutRow | undefined> {
  const row = await deps.db.selectFrom("payouts").select(["id", "provider"]).where("id", "=", ref.payoutId).executeTakeFirst();
  if (row?.provider !== ref.provider) return undefined;
  return advancePayout(deps, row.id);
}
