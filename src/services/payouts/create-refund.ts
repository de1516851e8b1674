/**
 * `POST /payments/{payment_id}/refunds`: give a paid payment back, fully or in part. Neither provider has a
 * refund API, so a refund is a payout to the phone that paid (`PaymentProvider.payerOf`), through a provider
 * that pays out to the payer's operator (the payment's own first). The sum of a payment's refunds that have
 * not failed, with what its provider gave back by itself, never exceeds what was collected: the check and the
 * refund's row are one transaction, with the payment's row locked, so concurrent refunds queue on it.
 *
 * @module
 */
import type { Transaction } from "kysely";
import { z } from "zod";
import { DOCUMENTED_MAX_AMOUNT } from "../amounts.ts";
import type { Database, Environment, Payment } from "../../db/schema.ts";
import { AppError, ConflictError, MoneyRuleError, NotFoundError, ValidationError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { toRefundView, type RefundView } from "./payout-view.ts";
import { internationalNumber } from "../countries.ts";
import { moneyOutByKey, payoutRoutes, recordMoneyOut, routeWithAccount } from "./record-money-out.ts";
import { lockPaymentRow } from "../payments/transition.ts";
import { excessOf, refundsNotFailed } from "./refund-room.ts";

/** The body of `POST /payments/{payment_id}/refunds`. */
export const refundRequest = z
  .object({
    amount: z.number().int().min(1).optional().meta({
      description: "Whole units; by default all that is left to refund; at most MAX_AMOUNT (the maximum shown is its default)",
      example: 1000,
      maximum: DOCUMENTED_MAX_AMOUNT,
    }),
    reason: z.string().trim().min(1).max(255).optional().meta({ description: "Why, in your words (shown on the refund)", example: "Damaged item" }),
  })
  .meta({ id: "RefundRequest" });

export type RefundRequest = z.infer<typeof refundRequest>;

/** What is left to refund of a payment: what it collected less what its provider gave back by itself and our refunds that have not failed. */
async function refundable(tx: Transaction<Database>, payment: Pick<Payment, "id" | "amount" | "refunded_by_provider">): Promise<number> {
  return -excessOf(payment, await refundsNotFailed(tx, payment.id));
}

/**
 * Records a refund of the payment and answers it (`pending`).
 *
 * @throws {NotFoundError} when the payment is not the tenant's in that environment; {@link ConflictError} (409
 *   `payment_not_refundable`) when it is not paid, fully refunded, or its payer cannot be paid back;
 *   {@link MoneyRuleError} (422) `amount_exceeds_refundable`, a provider's limit or the balance.
 */
export async function createRefund(
  deps: Deps,
  request: { tenantId: string; environment: Environment; paymentId: string; input: RefundRequest; idempotencyKey?: string },
): Promise<RefundView> {
  const { tenantId, environment, paymentId, input } = request;
  // The key's refund, committed by an earlier run of this request: answered as it stands, never made again
  // (before the checks below, which that very refund has since changed: the payment may be refunded in full).
  const made = await moneyOutByKey(deps.db, { tenantId, environment, purpose: "refund", paymentId, key: request.idempotencyKey });
  if (made) {
    const same = (input.amount === undefined || Number(made.amount) === input.amount) && made.reason === (input.reason ?? null);
    if (!same) throw new AppError(422, "idempotency_mismatch", "This Idempotency-Key was already used with another request body");
    return toRefundView(made);
  }
  if (input.amount !== undefined && input.amount > deps.config.maxAmount)
    throw new ValidationError([`amount must not be greater than ${deps.config.maxAmount}`]);
  const payment = await deps.db
    .selectFrom("payments")
    .selectAll()
    .where("id", "=", paymentId)
    .where("tenant_id", "=", tenantId)
    .where("environment", "=", environment)
    .executeTakeFirst();
  if (!payment) throw new NotFoundError("Payment not found");
  if (payment.state !== "succeeded")
    throw new ConflictError(`Payment ${paymentId} is ${payment.state}: only a succeeded payment can be refunded`, "payment_not_refundable");
  const payer = deps.providers.find(payment.provider)?.payerOf?.(payment) ?? null;
  if (!payer) throw new ConflictError(`${payment.provider} does not tell which wallet paid ${paymentId}: it cannot be refunded`, "payment_not_refundable");
  const routes = payoutRoutes(deps, payer.operator, payer.phone.country, payment.provider);
  if (routes.length === 0)
    throw new ConflictError(
      `No provider this gateway runs pays out to ${payer.operator} in ${payer.phone.country}: ${paymentId} cannot be refunded`,
      "payment_not_refundable",
    );
  const { route, account } = await routeWithAccount(deps, routes, tenantId, environment);
  const international = internationalNumber(payer.phone.number, payer.phone.country);
  const row = await recordMoneyOut(deps, {
    tenantId,
    environment,
    purpose: "refund",
    paymentId,
    route,
    account,
    description: `Refund of ${paymentId}`,
    ...(input.reason !== undefined && { reason: input.reason }),
    recipient: { ...payer, phone: { number: international, country: payer.phone.country } },
    ...(request.idempotencyKey !== undefined && { idempotencyKey: request.idempotencyKey }),
    // The payment's row before the tenant's: the order of every writer of its refunds (refund-room.ts).
    lockFirst: (tx) => lockPaymentRow(tx, paymentId),
    async resolveAmount(tx) {
      const locked = await lockPaymentRow(tx, paymentId);
      if (locked.state !== "succeeded")
        throw new ConflictError(`Payment ${paymentId} is ${locked.state}: only a succeeded payment can be refunded`, "payment_not_refundable");
      const left = await refundable(tx, locked);
      if (left <= 0 && Number(locked.refunded_by_provider) > 0)
        throw new ConflictError(
          `Payment ${paymentId} was refunded at ${payment.provider} (${locked.provider_status}): nothing is left to refund through Passerelle`,
          "payment_not_refundable",
        );
      if (left <= 0) throw new ConflictError(`Payment ${paymentId} has been refunded in full`, "payment_not_refundable");
      if (input.amount === undefined) return left;
      if (input.amount > left)
        throw new MoneyRuleError("amount_exceeds_refundable", `amount ${input.amount} is greater than the ${left} ${payment.currency} left to refund`);
      return input.amount;
    },
  });
  return toRefundView(row);
}
