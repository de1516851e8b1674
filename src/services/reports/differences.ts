/**
 * Reconciliation differences: a record whose provider state differs from ours, as a sync step or a
 * notification's re-read found it (ours final, the provider's another). Ours is kept — states only move
 * forward — and the difference is kept for the accountant (`GET /reports/reconciliation`), one row per
 * record, its last sighting updated.
 *
 * @module
 */
import type { Kysely, Transaction } from "kysely";
import type { Currency, Database, Environment, Payment, PaymentState } from "../../db/schema.ts";

export interface Difference {
  subjectId: string;
  subjectKind: "payment" | "payout" | "refund";
  tenantId: string;
  environment: Environment;
  provider: string;
  ourState: string;
  providerState: string;
  providerStatus: string;
  amount: number;
  currency: Currency;
}

/** Records (or updates) the difference of one record. */
export async function recordDifference(db: Kysely<Database> | Transaction<Database>, now: Date, d: Difference): Promise<void> {
  await db
    .insertInto("reconciliation_differences")
    .values({
      subject_id: d.subjectId,
      subject_kind: d.subjectKind,
      tenant_id: d.tenantId,
      environment: d.environment,
      provider: d.provider,
      our_state: d.ourState,
      provider_state: d.providerState,
      provider_status: d.providerStatus,
      amount: d.amount,
      currency: d.currency,
      first_seen_at: now,
      last_seen_at: now,
    })
    .onConflict((oc) =>
      oc.column("subject_id").doUpdateSet({ our_state: d.ourState, provider_state: d.providerState, provider_status: d.providerStatus, last_seen_at: now }),
    )
    .execute();
}

/**
 * After a payment was read from its provider and the answer applied: when ours is final and the
 * provider's state is another that the order of states would not take (a success we hold as refunded, a
 * payment it says failed or pending that we hold as paid), records the difference.
 */
export async function noteDifferenceOfPayment(
  db: Kysely<Database>,
  now: Date,
  payment: Pick<Payment, "id" | "tenant_id" | "environment" | "provider" | "state" | "amount" | "currency">,
  report: { state: PaymentState; providerStatus: string },
): Promise<void> {
  if (payment.state === "pending" || payment.state === report.state) return;
  await recordDifference(db, now, {
    subjectId: payment.id,
    subjectKind: "payment",
    tenantId: payment.tenant_id,
    environment: payment.environment,
    provider: payment.provider,
    ourState: payment.state,
    providerState: report.state,
    providerStatus: report.providerStatus,
    amount: Number(payment.amount),
    currency: payment.currency,
  });
}
