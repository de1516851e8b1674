/**
 * The simulator's records as provider A serialises them (providers.md, "Provider A"): the `v1/transaction`
 * object its API answers with and the `v1/event` body its webhooks carry.
 */
import type { SimTransaction } from "./ledger.ts";
import { CURRENCY_IDS } from "./wire.ts";

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** A transaction as the provider serialises it (the fields its SDKs read; `klass` builds SDK objects). */
export function renderTransaction(trx: SimTransaction) {
  return {
    klass: "v1/transaction",
    id: trx.id,
    reference: trx.reference,
    transaction_key: trx.transactionKey,
    merchant_reference: trx.merchantReference,
    amount: trx.amount,
    description: trx.description,
    callback_url: trx.callbackUrl,
    status: trx.status,
    mode: trx.mode,
    operation: "payment",
    customer_id: trx.customerId,
    currency_id: CURRENCY_IDS[trx.currencyIso] ?? null,
    account_id: trx.accountId,
    commission: 0,
    fees: 0,
    fixed_commission: 0,
    amount_debited: trx.approvedAt ? trx.amount : 0,
    amount_transferred: 0,
    metadata: {},
    custom_metadata: trx.customMetadata,
    last_error_code: trx.lastErrorCode,
    receipt_url: null,
    created_at: iso(trx.createdAt),
    updated_at: iso(trx.updatedAt),
    approved_at: iso(trx.approvedAt),
    declined_at: iso(trx.declinedAt),
    canceled_at: iso(trx.canceledAt),
    refunded_at: iso(trx.refundedAt),
    approved_partially_refunded_at: iso(trx.partiallyRefundedAt),
    transferred_at: null,
    deleted_at: null,
  };
}

export type WireTransaction = ReturnType<typeof renderTransaction>;

/** The webhook body for one status change: `{ name, entity, … }` (providers.md). */
export function renderEvent(input: { id: number; name: string; trx: SimTransaction; createdAt: Date }) {
  return {
    klass: "v1/event",
    id: input.id,
    name: input.name,
    object: "transaction",
    object_id: input.trx.id,
    account_id: input.trx.accountId,
    entity: renderTransaction(input.trx),
    created_at: input.createdAt.toISOString(),
  };
}
