/**
 * What a provider's inbound route calls once it has verified a notification about one of its push
 * collections: the domain finds the payment by the provider's id, reads it again from the provider
 * (`readPayment`, never trusting the notification's body) and applies the answer by the order of states,
 * with its event and deliveries. Provider A's webhook routes do the same with account-scoped look-ups.
 *
 * @module
 */
import type { Payment } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { syncFromProvider } from "./refresh.ts";

/**
 * Follows the provider's payment `providerPaymentId`: `undefined` when no payment of ours has that id
 * (the route answers it like a known one, so the provider stops retrying).
 *
 * @example
 * ```ts
 * // in a provider's inbound route, after its signature checked out:
 * await followPayment(deps, { provider: "providerC", providerPaymentId: body.id });
 * ```
 */
export async function followPayment(deps: Deps, ref: { provider: string; providerPaymentId: string }): Promise<Payment | undefined> {
  const row = await deps.db
    .selectFrom("payments")
    .selectAll()
    .where("provider", "=", ref.provider)
    .where("kind", "=", "direct_payment")
    .where("provider_transaction_id", "=", ref.providerPaymentId)
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
  return row ? syncFromProvider(deps, row) : undefined;
}
