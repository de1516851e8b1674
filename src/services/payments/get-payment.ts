/**
 * One payment by id (contract §6, `GET /payments/{payment_id}`).
 */
import type { Environment } from "../../db/schema.ts";
import { NotFoundError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { isId } from "../ids.ts";
import { type PaymentDetailView, toPaymentView } from "./payment-view.ts";

export interface GetPaymentInput {
  tenantId: string;
  environment: Environment;
  paymentId: string;
}

/**
 * The payment, when it belongs to this tenant and environment.
 *
 * @example
 * ```ts
 * const payment = await getPayment(deps, { tenantId, environment: "sandbox", paymentId: "pay_01JD3Z6Q5W8B8Y4G1M7T2N9XKC" });
 * ```
 * @throws {NotFoundError} when there is no such payment, or it is another tenant's or environment's:
 *   the answer is the same, so it never reveals that the payment exists.
 */
export async function getPayment(deps: Pick<Deps, "db">, input: GetPaymentInput): Promise<PaymentDetailView> {
  const row = isId("pay", input.paymentId)
    ? await deps.db
        .selectFrom("payments")
        .selectAll()
        .where("id", "=", input.paymentId)
        .where("tenant_id", "=", input.tenantId)
        .where("environment", "=", input.environment)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new NotFoundError("Payment not found");
  const attempts = await deps.db.selectFrom("payment_attempts").selectAll().where("payment_id", "=", row.id).orderBy("attempt").execute();
  return {
    ...toPaymentView(row),
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      provider: a.provider,
      outcome: a.outcome,
      reason: a.reason,
      providerTransactionId: a.provider_transaction_id,
      error: a.error,
      createdAt: a.created_at.toISOString(),
      rescue: a.rescue,
      operator: a.operator ?? row.operator,
    })),
  };
}
