/**
 * `GET /providerA/transaction/{transaction_id}/status` and `…/is-approved` (spec endpoints 2–3, contract
 * §4): the caller's direct payment by provider A's id, refreshed on read when it is pending.
 */
import type { Environment } from "../../config.ts";
import type { Payment } from "../../db/schema.ts";
import { NotFoundError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { refreshOnRead } from "./refresh.ts";
import { directPaymentStatus, isApprovedStatus, toTransactionStatusView, type IsApprovedView, type TransactionStatusView } from "./status.ts";

export interface TransactionLookup {
  tenantId: string;
  environment: Environment;
  transactionId: number;
}

/**
 * The caller's payment with that provider A id. Provider ids are unique per account, so a tenant with its
 * own account and the service's may have two; the newest is shown.
 *
 * @throws {NotFoundError} when it is not the caller's (tenant and environment): never reveals another's.
 */
async function findTransaction(deps: Pick<Deps, "db">, lookup: TransactionLookup): Promise<Payment> {
  const row = await deps.db
    .selectFrom("payments")
    .selectAll()
    .where("tenant_id", "=", lookup.tenantId)
    .where("environment", "=", lookup.environment)
    .where("provider", "=", "providerA")
    .where("provider_transaction_id", "=", String(lookup.transactionId))
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
  if (!row) throw new NotFoundError("Transaction not found");
  return row;
}

/** The detailed status (refreshed from provider A when pending and not read in the last second). */
export async function getTransactionStatus(deps: Deps, lookup: TransactionLookup): Promise<TransactionStatusView> {
  return toTransactionStatusView(await refreshOnRead(deps, await findTransaction(deps, lookup)));
}

/** `{ transactionId, approved, status }`. */
export async function isTransactionApproved(deps: Deps, lookup: TransactionLookup): Promise<IsApprovedView> {
  const row = await refreshOnRead(deps, await findTransaction(deps, lookup));
  const status = directPaymentStatus(row);
  return { transactionId: lookup.transactionId, approved: isApprovedStatus(status), status };
}
