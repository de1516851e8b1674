/**
 * A payment paid through an attempt it had moved on from (issue 16): failover leaves an attempt only when
 * its provider provably did not act, yet a provider may still report a success there (a customer who paid
 * the abandoned invoice by other means, a provider that refused and charged anyway). Its notification names
 * no payment any more — the payment carries its last attempt's ids — so the provider's inbound route hands
 * it here when it finds none. The attempt is read again from its provider with its own account (the
 * notification's body is never applied), and a success is recorded once:
 *
 * - the payment not yet paid: it becomes the attempt's (its provider, account and ids) and is applied as
 *   that provider's word — `succeeded`, one `payment.completed`;
 * - the payment paid already (through another attempt): the customer paid twice; ours stays as it is (one
 *   `payment.completed`) and the second payment is kept as a reconciliation difference, to refund.
 *
 * @module
 */
import type { Payment } from "../../db/schema.ts";
import { ProviderCallError } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { applyDirectPaymentUpdate } from "../direct-payments/apply-update.ts";
import { recordDifference } from "../reports/differences.ts";

/**
 * Follows the attempt that `provider` knows as `providerPaymentId`, when it belongs to a payment that has
 * moved on from it. Answers false when no such attempt exists (the caller goes on as for an unknown id).
 *
 * @example
 * ```ts
 * // in a provider's inbound route, after its signature checked out and no payment has that id:
 * if (!(await followAbandonedAttempt(deps, { provider: "providerA", providerPaymentId: "412" }))) logUnknown();
 * ```
 */
export async function followAbandonedAttempt(deps: Deps, ref: { provider: string; providerPaymentId: string }): Promise<boolean> {
  const attempt = await deps.db
    .selectFrom("payment_attempts")
    .innerJoin("payments", "payments.id", "payment_attempts.payment_id")
    .selectAll("payment_attempts")
    .where("payment_attempts.provider", "=", ref.provider)
    .where("payment_attempts.provider_transaction_id", "=", ref.providerPaymentId)
    .where((eb) => eb.or([eb("payments.provider", "!=", ref.provider), eb("payments.provider_transaction_id", "is distinct from", ref.providerPaymentId)]))
    .orderBy("payment_attempts.created_at", "desc")
    .limit(1)
    .executeTakeFirst();
  if (!attempt) return false;
  const provider = deps.providers.find(attempt.provider);
  const payment = await deps.db.selectFrom("payments").selectAll().where("id", "=", attempt.payment_id).executeTakeFirstOrThrow();
  if (!provider) return true;
  // The payment as this attempt left it at its provider.
  const asAttempt: Payment = {
    ...payment,
    provider: attempt.provider,
    provider_account: attempt.provider_account,
    credential_version: attempt.credential_version,
    provider_transaction_id: ref.providerPaymentId,
  };
  let report: Awaited<ReturnType<typeof provider.readPayment>>;
  try {
    report = await provider.readPayment(deps, asAttempt);
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    deps.logger.warn({ paymentId: payment.id, attempt: attempt.attempt, kind: error.kind }, "could not read an abandoned attempt from its provider");
    return true;
  }
  if (report?.state !== "succeeded") return true;
  const now = deps.now();
  await deps.db
    .updateTable("payment_attempts")
    .set({ error: `${attempt.error ? `${attempt.error}; ` : ""}paid at ${provider.label} after the payment had moved on`, ended_at: now })
    .where("payment_id", "=", attempt.payment_id)
    .where("attempt", "=", attempt.attempt)
    .execute();
  if (payment.state === "succeeded" || payment.state === "refunded") {
    deps.logger.warn({ alert: "paid_twice", paymentId: payment.id, provider: attempt.provider }, "a payment was paid again through an abandoned attempt");
    await recordDifference(deps.db, now, {
      subjectId: payment.id,
      subjectKind: "payment",
      tenantId: payment.tenant_id,
      environment: payment.environment,
      provider: attempt.provider,
      ourState: payment.state,
      providerState: "succeeded",
      providerStatus: `${report.providerStatus}: paid again through attempt ${attempt.attempt} (${ref.providerPaymentId}); ours was paid through ${payment.provider}`,
      amount: Number(payment.amount),
      currency: payment.currency,
    });
    return true;
  }
  // Not paid yet: the money came through this attempt, so the payment is this attempt's from now on — with the
  // wallet it was made with, when a rescue try moved the payment to another (issue 31 point 3).
  const moved = await deps.db
    .updateTable("payments")
    .set({
      provider: attempt.provider,
      provider_account: attempt.provider_account,
      credential_version: attempt.credential_version,
      provider_transaction_id: ref.providerPaymentId,
      reference: null,
      provider_status: null,
      ...(attempt.operator !== null && { operator: attempt.operator }),
      ...(attempt.payment_method !== null && { payment_method: attempt.payment_method }),
      ...(attempt.customer !== null && { customer: attempt.customer }),
      updated_at: now,
    })
    .where("id", "=", payment.id)
    .where("state", "in", ["pending", "failed", "cancelled"])
    .returningAll()
    .executeTakeFirst();
  if (moved) {
    await applyDirectPaymentUpdate(deps, payment.id, { kind: "provider", report });
    // The attempts it moved on to are abandoned: one of them paid too would be a difference to refund (above).
    await deps.db
      .updateTable("payment_attempts")
      .set({ error: `abandoned: the payment was paid through attempt ${attempt.attempt}`, ended_at: now })
      .where("payment_id", "=", payment.id)
      .where("attempt", ">", attempt.attempt)
      .where("outcome", "in", ["started", "unknown"])
      .execute();
  }
  return true;
}
