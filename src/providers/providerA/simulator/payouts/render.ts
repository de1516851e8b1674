/**
 * The simulator's payouts and balances as provider A serialises them (providers-money-out.md): the
 * `v1/payout` object (FedaPay's field names), the `v1/event` body of `payout.sent` / `payout.failed`, and
 * the `v1/balance` object.
 */
import { CURRENCY_IDS } from "../wire.ts";
import type { SimBalance, SimPayout } from "./ledger.ts";

const iso = (date: Date | null) => (date ? date.toISOString() : null);

/** A payout as the provider serialises it. */
export function renderPayout(payout: SimPayout) {
  return {
    klass: "v1/payout",
    id: payout.id,
    reference: payout.reference,
    merchant_reference: payout.merchantReference,
    amount: payout.amount,
    description: payout.description,
    status: payout.status,
    mode: payout.mode,
    currency_id: CURRENCY_IDS[payout.currencyIso] ?? null,
    account_id: payout.accountId,
    fees: payout.fees,
    commission: 0,
    amount_transferred: payout.status === "sent" ? payout.amount : 0,
    custom_metadata: payout.customMetadata,
    customer: {
      firstname: payout.customer.firstname,
      lastname: payout.customer.lastname,
      email: payout.customer.email,
      phone_number: payout.customer.phone,
    },
    phone_number: payout.phone,
    last_error_code: payout.lastErrorCode,
    last_error_message: payout.lastErrorCode ? "The payout could not be delivered" : null,
    created_at: iso(payout.createdAt),
    updated_at: iso(payout.updatedAt),
    scheduled_at: iso(payout.scheduledAt),
    started_at: iso(payout.startedAt),
    sent_at: iso(payout.sentAt),
    failed_at: iso(payout.failedAt),
    deleted_at: null,
  };
}

/** The webhook body of a payout's final status: `{ name, entity, … }` like the transactions' events. */
export function renderPayoutEvent(input: { id: number; name: string; payout: SimPayout; createdAt: Date }) {
  return {
    klass: "v1/event",
    id: input.id,
    name: input.name,
    object: "payout",
    object_id: input.payout.id,
    account_id: input.payout.accountId,
    entity: renderPayout(input.payout),
    created_at: input.createdAt.toISOString(),
  };
}

/** One balance (one per mode and currency). */
export function renderBalance(balance: SimBalance, now: Date) {
  return {
    klass: "v1/balance",
    id: balance.id,
    account_id: balance.accountId,
    currency_id: CURRENCY_IDS[balance.currencyIso] ?? null,
    amount: balance.amount,
    mode: balance.mode,
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
  };
}
