/**
 * The tenant's payments of every kind, newest first, in pages (contract §6, `GET /payments`).
 */
import type { Environment, PaymentKind, PaymentState } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { decodeCursor, encodeCursor } from "../paging.ts";
import { assertKnownProvider, toPaymentView, type PaymentView } from "./payment-view.ts";

export interface ListPaymentsInput {
  tenantId: string;
  environment: Environment;
  /** Page size, 1–100 (the router enforces it). */
  limit: number;
  /** A `nextCursor` from the page before; absent for the first page. */
  cursor?: string;
  provider?: string;
  kind?: PaymentKind;
  state?: PaymentState;
  providerTransactionId?: string;
  reference?: string;
}

export interface PaymentPage {
  data: PaymentView[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/**
 * One page of a tenant's payments in one environment, newest first, optionally filtered. Paging is by
 * keyset on the id, so rows created meanwhile never shift a page: no duplicates, no gaps.
 *
 * @example
 * ```ts
 * let page = await listPayments(deps, { tenantId, environment: "sandbox", limit: 20, state: "succeeded" });
 * while (page.nextCursor) page = await listPayments(deps, { tenantId, environment: "sandbox", limit: 20, state: "succeeded", cursor: page.nextCursor });
 * ```
 * @throws {ValidationError} for a cursor this list did not hand out, or a provider the gateway does not run.
 */
export async function listPayments(deps: Pick<Deps, "db" | "providers">, input: ListPaymentsInput): Promise<PaymentPage> {
  assertKnownProvider(deps, input.provider);
  const after = input.cursor === undefined ? undefined : decodeCursor("pay", input.cursor);
  let query = deps.db.selectFrom("payments").selectAll().where("tenant_id", "=", input.tenantId).where("environment", "=", input.environment);
  if (input.provider !== undefined) query = query.where("provider", "=", input.provider);
  if (input.kind !== undefined) query = query.where("kind", "=", input.kind);
  if (input.state !== undefined) query = query.where("state", "=", input.state);
  if (input.providerTransactionId !== undefined) query = query.where("provider_transaction_id", "=", input.providerTransactionId);
  if (input.reference !== undefined) query = query.where("reference", "=", input.reference);
  if (after !== undefined) query = query.where("id", "<", after);
  // One row more than asked tells whether another page follows.
  const rows = await query
    .orderBy("id", "desc")
    .limit(input.limit + 1)
    .execute();
  const page = rows.slice(0, input.limit);
  return {
    data: page.map(toPaymentView),
    nextCursor: rows.length > input.limit ? encodeCursor(page[page.length - 1]!.id) : null,
  };
}
