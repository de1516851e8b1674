/**
 * Migration 0011: money out (issue 15) — payouts and refunds, a per-tenant double-entry ledger, and the
 * differences the sync schedule finds between the providers' records and ours.
 *
 * - `payouts`: one row per payout (`po_…`) or refund (`rf_…`, `purpose = 'refund'`, with the refunded
 *   `payment_id`): a refund is a payout to the payer. The row is written before the provider is called, and
 *   its id is the provider's idempotency key (provider A's `merchant_reference`, provider B's `disburse_id`).
 *   States only move forward: `pending` → `sent` | `failed`.
 * - `payments.amount_refunded`: the sum of the payment's sent refunds, kept in the transaction that marks a
 *   refund sent.
 * - `ledger_entries`: double entry, per tenant, environment and currency. Each movement (`journal`, e.g.
 *   `pay_….collected`, `po_….reserved`) is two or more entries that sum to zero, one per account:
 *   `available` and `pending` (the tenant's money), `provider:<name>` (money at a provider), `fees`.
 *   `(journal, account)` is unique, so writing a movement twice writes it once.
 * - A trigger credits `available` when a payment becomes `succeeded`, in the transaction that changes the
 *   payment — whichever of the gateway's paths moves it (direct payment, checkout, permit charge) — and
 *   debits what a refund at the provider (outside our refunds) took back when it becomes `refunded`.
 * - `reconciliation_differences`: a record whose provider state differs from ours, as a sync step read it.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("payouts")
    .addColumn("id", sql`text collate "C"`, (c) => c.primaryKey())
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("purpose", "text", (c) => c.notNull())
    // The payment a refund gives back.
    .addColumn("payment_id", "text", (c) => c.references("payments.id"))
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("provider_account", "text", (c) => c.notNull())
    .addColumn("credential_version", "integer")
    .addColumn("operator", "text", (c) => c.notNull())
    .addColumn("country", "text", (c) => c.notNull())
    // The recipient's national number.
    .addColumn("phone_number", "text", (c) => c.notNull())
    .addColumn("recipient", "jsonb", (c) => c.notNull())
    .addColumn("amount", "int8", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("description", "text", (c) => c.notNull())
    .addColumn("reason", "text")
    .addColumn("metadata", "jsonb")
    .addColumn("state", "text", (c) => c.notNull().defaultTo("pending"))
    .addColumn("provider_payout_id", "text")
    .addColumn("provider_status", "text")
    .addColumn("failure_code", "text")
    .addColumn("fee", "int8")
    // A call whose answer never came may have sent it: it is followed by reading, never sent again.
    .addColumn("outcome_unknown", "boolean", (c) => c.notNull().defaultTo(false))
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("updated_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn("sent_at", "timestamptz")
    .addColumn("failed_at", "timestamptz")
    .addColumn("provider_synced_at", "timestamptz")
    // One worker at a time moves a payout at its provider: the lease it holds while it calls.
    .addColumn("locked_until", "timestamptz")
    .addCheckConstraint("payouts_environment_check", sql`environment in ('sandbox', 'live')`)
    .addCheckConstraint("payouts_purpose_check", sql`(purpose = 'payout' and payment_id is null) or (purpose = 'refund' and payment_id is not null)`)
    .addCheckConstraint("payouts_state_check", sql`state in ('pending', 'sent', 'failed')`)
    .addCheckConstraint("payouts_amount_check", sql`amount >= 1`)
    .addCheckConstraint("payouts_currency_check", sql`currency in ('XOF', 'GNF')`)
    .addCheckConstraint("payouts_provider_check", sql`provider <> ''`)
    .execute();
  await db.schema.createIndex("payouts_tenant_list_idx").on("payouts").columns(["tenant_id", "environment", "purpose", "id desc"]).execute();
  await db.schema.createIndex("payouts_payment_idx").on("payouts").columns(["payment_id"]).where(sql<boolean>`payment_id is not null`).execute();
  // Provider A's limit: at most 3 payouts per number per 24 h.
  await db.schema.createIndex("payouts_recipient_idx").on("payouts").columns(["provider", "phone_number", "created_at"]).execute();
  // The sweeper looks for pending payouts younger than a day whose sync chain is missing.
  await db.schema.createIndex("payouts_pending_idx").on("payouts").columns(["created_at", "id"]).where(sql<boolean>`state = 'pending'`).execute();

  await db.schema
    .alterTable("payments")
    .addColumn("amount_refunded", "int8", (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable("payments").addCheckConstraint("payments_amount_refunded_check", sql`amount_refunded between 0 and amount`).execute();

  await db.schema
    .createTable("ledger_entries")
    .addColumn("id", "bigserial", (c) => c.primaryKey())
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("journal", "text", (c) => c.notNull())
    .addColumn("account", "text", (c) => c.notNull())
    .addColumn("amount", "int8", (c) => c.notNull())
    // What moved the money: the kind of movement and the payment, payout or refund.
    .addColumn("kind", "text", (c) => c.notNull())
    .addColumn("subject_id", "text", (c) => c.notNull())
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("created_at", "timestamptz", (c) => c.notNull().defaultTo(sql`now()`))
    .addCheckConstraint("ledger_entries_environment_check", sql`environment in ('sandbox', 'live')`)
    .addCheckConstraint("ledger_entries_currency_check", sql`currency in ('XOF', 'GNF')`)
    .addCheckConstraint("ledger_entries_kind_check", sql`kind in ('payment', 'payout', 'refund', 'fee')`)
    .addUniqueConstraint("ledger_entries_journal_account_key", ["journal", "account"])
    .execute();
  await db.schema.createIndex("ledger_entries_tenant_idx").on("ledger_entries").columns(["tenant_id", "environment", "id desc"]).execute();
  await db.schema.createIndex("ledger_entries_balance_idx").on("ledger_entries").columns(["tenant_id", "environment", "account", "currency"]).execute();

  // Credits the tenant when a payment becomes succeeded, in the transaction that moves it. A refunded
  // payment was succeeded first: its credit is already there. A payment the provider reports refunded
  // while our refunds had not given all of it back was refunded at the provider (its dashboard): the rest
  // leaves the tenant's available money then.
  await sql`
    create function ledger_payment_moved() returns trigger language plpgsql as $$
    declare
      rest bigint;
    begin
      if new.state = 'succeeded' then
        insert into ledger_entries (tenant_id, environment, currency, journal, account, amount, kind, subject_id, provider, created_at)
        values
          (new.tenant_id, new.environment, new.currency, new.id || '.collected', 'available', new.amount, 'payment', new.id, new.provider, new.updated_at),
          (new.tenant_id, new.environment, new.currency, new.id || '.collected', 'provider:' || new.provider, -new.amount, 'payment', new.id, new.provider, new.updated_at)
        on conflict (journal, account) do nothing;
      elsif new.state = 'refunded' and tg_op = 'UPDATE' and old.state = 'succeeded' and new.amount_refunded < new.amount then
        rest := new.amount - new.amount_refunded;
        insert into ledger_entries (tenant_id, environment, currency, journal, account, amount, kind, subject_id, provider, created_at)
        values
          (new.tenant_id, new.environment, new.currency, new.id || '.refunded_at_provider', 'available', -rest, 'refund', new.id, new.provider, new.updated_at),
          (new.tenant_id, new.environment, new.currency, new.id || '.refunded_at_provider', 'provider:' || new.provider, rest, 'refund', new.id, new.provider, new.updated_at)
        on conflict (journal, account) do nothing;
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`
    create trigger payments_ledger_update after update of state on payments for each row
    when (new.state is distinct from old.state and new.state in ('succeeded', 'refunded') and old.state <> 'refunded')
    execute function ledger_payment_moved()`.execute(db);
  await sql`
    create trigger payments_ledger_insert after insert on payments for each row
    when (new.state = 'succeeded')
    execute function ledger_payment_moved()`.execute(db);

  await db.schema
    .createTable("reconciliation_differences")
    .addColumn("subject_id", sql`text collate "C"`, (c) => c.primaryKey())
    .addColumn("subject_kind", "text", (c) => c.notNull())
    .addColumn("tenant_id", "text", (c) => c.notNull().references("tenants.id"))
    .addColumn("environment", "text", (c) => c.notNull())
    .addColumn("provider", "text", (c) => c.notNull())
    .addColumn("our_state", "text", (c) => c.notNull())
    .addColumn("provider_state", "text", (c) => c.notNull())
    .addColumn("provider_status", "text", (c) => c.notNull())
    .addColumn("amount", "int8", (c) => c.notNull())
    .addColumn("currency", "text", (c) => c.notNull())
    .addColumn("first_seen_at", "timestamptz", (c) => c.notNull())
    .addColumn("last_seen_at", "timestamptz", (c) => c.notNull())
    .addCheckConstraint("reconciliation_differences_kind_check", sql`subject_kind in ('payment', 'payout', 'refund')`)
    .execute();
  await db.schema
    .createIndex("reconciliation_differences_tenant_idx")
    .on("reconciliation_differences")
    .columns(["tenant_id", "environment", "last_seen_at"])
    .execute();
}

async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable("reconciliation_differences").execute();
  await sql`drop trigger payments_ledger_insert on payments`.execute(db);
  await sql`drop trigger payments_ledger_update on payments`.execute(db);
  await sql`drop function ledger_payment_moved()`.execute(db);
  await db.schema.dropTable("ledger_entries").execute();
  await db.schema.alterTable("payments").dropConstraint("payments_amount_refunded_check").execute();
  await db.schema.alterTable("payments").dropColumn("amount_refunded").execute();
  await db.schema.dropTable("payouts").execute();
}

export const moneyOutMigration: Migration = { up, down };
