/**
 * Reading payouts and refunds: `GET /payouts` (filters: state, date range; newest first, in pages),
 * `GET /payouts/{id}`, `GET /payments/{id}/refunds`, `GET /refunds/{id}`. A tenant reads its own, in the
 * token's environment; another's is 404.
 *
 * @module
 */
import type { Environment } from "../../db/schema.ts";
import { NotFoundError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { decodeCursor, toPage } from "../paging.ts";
import { type PayoutView, type RefundState, type RefundView, toPayoutView, toRefundView } from "./payout-view.ts";

interface Scope {
  tenantId: string;
  environment: Environment;
}

function scoped(deps: Pick<Deps, "db">, scope: Scope) {
  return deps.db.selectFrom("payouts").selectAll().where("tenant_id", "=", scope.tenantId).where("environment", "=", scope.environment);
}

/** One page of the tenant's payouts, newest first. */
export async function listPayouts(
  deps: Pick<Deps, "db">,
  input: Scope & { limit: number; cursor?: string; state?: "pending" | "sent" | "failed"; from?: Date; to?: Date },
): Promise<{ data: PayoutView[]; nextCursor: string | null }> {
  let query = scoped(deps, input).where("purpose", "=", "payout");
  if (input.state !== undefined) query = query.where("state", "=", input.state);
  if (input.from !== undefined) query = query.where("created_at", ">=", input.from);
  if (input.to !== undefined) query = query.where("created_at", "<", input.to);
  if (input.cursor !== undefined) query = query.where("id", "<", decodeCursor("po", input.cursor));
  const page = toPage(
    await query
      .orderBy("id", "desc")
      .limit(input.limit + 1)
      .execute(),
    input.limit,
  );
  return { data: page.rows.map(toPayoutView), nextCursor: page.nextCursor };
}

/** One payout of the tenant. @throws {NotFoundError} */
export async function getPayout(deps: Pick<Deps, "db">, input: Scope & { payoutId: string }): Promise<PayoutView> {
  const row = await scoped(deps, input).where("purpose", "=", "payout").where("id", "=", input.payoutId).executeTakeFirst();
  if (!row) throw new NotFoundError("Payout not found");
  return toPayoutView(row);
}

/** The refunds of one payment of the tenant, newest first. @throws {NotFoundError} when the payment is not the tenant's. */
export async function listRefunds(
  deps: Pick<Deps, "db">,
  input: Scope & { paymentId: string; limit: number; cursor?: string; state?: RefundState },
): Promise<{ data: RefundView[]; nextCursor: string | null }> {
  const payment = await deps.db
    .selectFrom("payments")
    .select("id")
    .where("id", "=", input.paymentId)
    .where("tenant_id", "=", input.tenantId)
    .where("environment", "=", input.environment)
    .executeTakeFirst();
  if (!payment) throw new NotFoundError("Payment not found");
  let query = scoped(deps, input).where("purpose", "=", "refund").where("payment_id", "=", input.paymentId);
  if (input.state !== undefined) query = query.where("state", "=", input.state === "succeeded" ? "sent" : input.state);
  if (input.cursor !== undefined) query = query.where("id", "<", decodeCursor("rf", input.cursor));
  const page = toPage(
    await query
      .orderBy("id", "desc")
      .limit(input.limit + 1)
      .execute(),
    input.limit,
  );
  return { data: page.rows.map(toRefundView), nextCursor: page.nextCursor };
}

/** The tenant's refunds of every payment, newest first; by state and creation time (`from` inclusive, `to` exclusive). */
export async function listAllRefunds(
  deps: Pick<Deps, "db">,
  input: Scope & { limit: number; cursor?: string; state?: RefundState; from?: Date; to?: Date },
): Promise<{ data: RefundView[]; nextCursor: string | null }> {
  let query = scoped(deps, input).where("purpose", "=", "refund");
  if (input.state !== undefined) query = query.where("state", "=", input.state === "succeeded" ? "sent" : input.state);
  if (input.from !== undefined) query = query.where("created_at", ">=", input.from);
  if (input.to !== undefined) query = query.where("created_at", "<", input.to);
  if (input.cursor !== undefined) query = query.where("id", "<", decodeCursor("rf", input.cursor));
  const page = toPage(
    await query
      .orderBy("id", "desc")
      .limit(input.limit + 1)
      .execute(),
    input.limit,
  );
  return { data: page.rows.map(toRefundView), nextCursor: page.nextCursor };
}

/** One refund of the tenant. @throws {NotFoundError} */
export async function getRefund(deps: Pick<Deps, "db">, input: Scope & { refundId: string }): Promise<RefundView> {
  const row = await scoped(deps, input).where("purpose", "=", "refund").where("id", "=", input.refundId).executeTakeFirst();
  if (!row) throw new NotFoundError("Refund not found");
  return toRefundView(row);
}
