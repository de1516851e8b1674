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

/** What a list of money out is filtered by: the state in the table's words, and the creation time (`from` inclusive, `to` exclusive). */
interface MoneyOutFilters {
  limit: number;
  cursor?: string;
  state?: "pending" | "sent" | "failed";
  from?: Date;
  to?: Date;
}

/** One page of the tenant's rows of one purpose, newest first (`po_` or `rf_` cursors). */
async function pageOfMoneyOut(deps: Pick<Deps, "db">, purpose: "payout" | "refund", input: Scope & MoneyOutFilters) {
  let query = scoped(deps, input).where("purpose", "=", purpose);
  if (input.state !== undefined) query = query.where("state", "=", input.state);
  if (input.from !== undefined) query = query.where("created_at", ">=", input.from);
  if (input.to !== undefined) query = query.where("created_at", "<", input.to);
  if (input.cursor !== undefined) query = query.where("id", "<", decodeCursor(purpose === "payout" ? "po" : "rf", input.cursor));
  return toPage(
    await query
      .orderBy("id", "desc")
      .limit(input.limit + 1)
      .execute(),
    input.limit,
  );
}

/** One page of the tenant's payouts, newest first. */
export async function listPayouts(deps: Pick<Deps, "db">, input: Scope & MoneyOutFilters): Promise<{ data: PayoutView[]; nextCursor: string | null }> {
  const page = await pageOfMoneyOut(deps, "payout", input);
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

/** The tenant's refunds of every payment, newest first; by state (a refund's words) and creation time. */
export async function listAllRefunds(
  deps: Pick<Deps, "db">,
  input: Scope & Omit<MoneyOutFilters, "state"> & { state?: RefundState },
): Promise<{ data: RefundView[]; nextCursor: string | null }> {
  const { state, ...rest } = input;
  const page = await pageOfMoneyOut(deps, "refund", { ...rest, ...(state !== undefined && { state: state === "succeeded" ? "sent" : state }) });
  return { data: page.rows.map(toRefundView), nextCursor: page.nextCursor };
}

/** One refund of the tenant. @throws {NotFoundError} */
export async function getRefund(deps: Pick<Deps, "db">, input: Scope & { refundId: string }): Promise<RefundView> {
  const row = await scoped(deps, input).where("purpose", "=", "refund").where("id", "=", input.refundId).executeTakeFirst();
  if (!row) throw new NotFoundError("Refund not found");
  return toRefundView(row);
}
