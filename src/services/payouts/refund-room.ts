/**
 * The rule every refund of ours keeps, whoever else refunds (docs/money-out.md, "Refunded at the provider"):
 * what the payment's provider gave back by itself (`payments.refunded_by_provider`) plus our refunds of it
 * that have not failed never add up to more than it collected. These are the reads that rule needs, made
 * with the payment's row locked by the caller (`lockPaymentRow`, payments/transition.ts), so a provider's word and our sending
 * decisions queue on the same row.
 *
 * Lock order, for every writer of a payment's refunds: the payment's row, then the tenant's (a new refund
 * from the pooled account locks it; a ledger entry's foreign key waits on it), then the refunds' rows. A
 * writer holding the payment and writing the ledger never waits on one that holds the tenant and waits for
 * the payment.
 *
 * @module
 */
import type { Transaction } from "kysely";
import type { Database, Payment, PayoutRow } from "../../db/schema.ts";
import { recordDifference } from "../reports/differences.ts";

/** The sum of the payment's refunds that have not failed. */
export async function refundsNotFailed(tx: Transaction<Database>, paymentId: string): Promise<number> {
  const row = await tx
    .selectFrom("payouts")
    .select((eb) => eb.fn.coalesce(eb.fn.sum<string>("amount"), eb.lit(0)).as("taken"))
    .where("payment_id", "=", paymentId)
    .where("purpose", "=", "refund")
    .where("state", "<>", "failed")
    .executeTakeFirstOrThrow();
  return Number(row.taken);
}

/** By how much `refunds` (ours, not failed) and what the provider gave back exceed what the payment collected; 0 or less when they fit. */
export function excessOf(payment: Pick<Payment, "amount" | "refunded_by_provider">, refunds: number): number {
  return Number(payment.refunded_by_provider) + refunds - Number(payment.amount);
}

/**
 * A refund of ours that went out although the payment's provider gave the payment back by itself: money
 * out twice, kept for the operator (`GET /reports/reconciliation`, the refund's line: ours `sent`, the
 * provider's `refunded`, with the payment's provider status).
 */
export function noteRefundBeyondProvider(tx: Transaction<Database>, now: Date, payment: Payment, refund: PayoutRow): Promise<void> {
  return recordDifference(tx, now, {
    subjectId: refund.id,
    subjectKind: "refund",
    tenantId: refund.tenant_id,
    environment: refund.environment,
    // The provider whose word this is: the payment's.
    provider: payment.provider,
    ourState: refund.state,
    providerState: "refunded",
    providerStatus: payment.provider_status ?? "refunded",
    amount: Number(refund.amount),
    currency: refund.currency,
  });
}
