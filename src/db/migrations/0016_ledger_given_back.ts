/**
 * Migration 0016: the ledger follows what a provider gave back by itself (issue 24, point 4).
 *
 * Until now a payment refunded at its provider (its dashboard) took from the tenant only "the rest" — what it
 * collected less our refunds sent at that moment — and a payment refunded there in part, the provider not
 * saying how much, took nothing: the tenant could still pay that money out of a pooled account. Now the
 * ledger takes exactly what `payments.refunded_by_provider` (0015) says the provider gave back — all of it
 * when the provider does not say how much — each time it grows, in the transaction that records it:
 *
 * | journal                                 | legs                                        |
 * |-----------------------------------------|---------------------------------------------|
 * | `<pay_…>.refunded_at_provider:<total>`  | `available` −growth, `provider:<name>` +growth |
 *
 * So money the provider gave back on top of our refunds shows as what it is, money out twice, and takes the
 * tenant's balance on that holding below zero (the audit's `tenant_pooled_negative` on a pooled account).
 * A payment that becomes `succeeded` **or** `refunded` (a provider may report a payment refunded whose
 * payment we missed) is credited its collection first, once; inserted so, too.
 *
 * Payments refunded at the provider before 0015 carry the old "rest" journal (`<pay_…>.refunded_at_provider`)
 * and `refunded_by_provider` 0: they get `refunded_by_provider` = their amount, without a new journal, so a
 * later read of the same word writes nothing more.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

const HELD = sql.raw(`(case when new.provider_account = 'service' then 'pooled:' else 'own:' end) || new.provider`);

async function up(db: Kysely<any>): Promise<void> {
  await sql`update payments p set refunded_by_provider = p.amount
            where p.refunded_by_provider = 0
              and exists (select 1 from ledger_entries e where e.journal = p.id || '.refunded_at_provider')`.execute(db);

  await sql`
    create or replace function ledger_payment_moved() returns trigger language plpgsql as $$
    begin
      if new.state in ('succeeded', 'refunded') then
        insert into ledger_entries (tenant_id, environment, currency, journal, account, amount, kind, subject_id, provider, holding, created_at)
        values
          (new.tenant_id, new.environment, new.currency, new.id || '.collected', 'available', new.amount, 'payment', new.id, new.provider, ${HELD}, new.updated_at),
          (new.tenant_id, new.environment, new.currency, new.id || '.collected', 'provider:' || new.provider, -new.amount, 'payment', new.id, new.provider, ${HELD}, new.updated_at)
        on conflict (journal, account) do nothing;
      end if;
      return null;
    end
    $$`.execute(db);
  await sql`drop trigger payments_ledger_insert on payments`.execute(db);
  await sql`
    create trigger payments_ledger_insert after insert on payments for each row
    when (new.state in ('succeeded', 'refunded'))
    execute function ledger_payment_moved()`.execute(db);

  await sql`
    create function ledger_payment_given_back() returns trigger language plpgsql as $$
    declare
      growth bigint := case when tg_op = 'INSERT' then new.refunded_by_provider else new.refunded_by_provider - old.refunded_by_provider end;
    begin
      if growth > 0 then
        insert into ledger_entries (tenant_id, environment, currency, journal, account, amount, kind, subject_id, provider, holding, created_at)
        values
          (new.tenant_id, new.environment, new.currency, new.id || '.refunded_at_provider:' || new.refunded_by_provider, 'available', -growth, 'refund', new.id, new.provider, ${HELD}, new.updated_at),
          (new.tenant_id, new.environment, new.currency, new.id || '.refunded_at_provider:' || new.refunded_by_provider, 'provider:' || new.provider, growth, 'refund', new.id, new.provider, ${HELD}, new.updated_at)
        on conflict (journal, account) do nothing;
      end if;
      return null;
    end
    $$`.execute(db);
  // Triggers of one event run in name order: what was given back is written before the collection when both
  // change in one statement (a payment reported refunded whose payment we missed); one transaction either way.
  await sql`
    create trigger payments_ledger_given_back after update of refunded_by_provider on payments for each row
    when (new.refunded_by_provider > old.refunded_by_provider)
    execute function ledger_payment_given_back()`.execute(db);
  await sql`
    create trigger payments_ledger_given_back_insert after insert on payments for each row
    when (new.refunded_by_provider > 0)
    execute function ledger_payment_given_back()`.execute(db);
}

async function down(db: Kysely<any>): Promise<void> {
  await sql`drop trigger payments_ledger_given_back_insert on payments`.execute(db);
  await sql`drop trigger payments_ledger_given_back on payments`.execute(db);
  await sql`drop function ledger_payment_given_back()`.execute(db);
  await sql`drop trigger payments_ledger_insert on payments`.execute(db);
  await sql`
    create trigger payments_ledger_insert after insert on payments for each row
    when (new.state = 'succeeded')
    execute function ledger_payment_moved()`.execute(db);
  await sql`
    create or replace function ledger_payment_moved() returns trigger language plpgsql as $$
    declare
      rest bigint;
      held text := ${HELD};
    begin
      if new.state = 'succeeded' then
        insert into ledger_entries (tenant_id, environment, currency, journal, account, amount, kind, subject_id, provider, holding, created_at)
        values
          (new.tenant_id, new.environment, new.currency, new.id || '.collected', 'available', new.amount, 'payment', new.id, new.provider, held, new.updated_at),
          (new.tenant_id, new.environment, new.currency, new.id || '.collected', 'provider:' || new.provider, -new.amount, 'payment', new.id, new.provider, held, new.updated_at)
        on conflict (journal, account) do nothing;
      elsif new.state = 'refunded' and tg_op = 'UPDATE' and old.state = 'succeeded' and new.amount_refunded < new.amount then
        rest := new.amount - new.amount_refunded;
        insert into ledger_entries (tenant_id, environment, currency, journal, account, amount, kind, subject_id, provider, holding, created_at)
        values
          (new.tenant_id, new.environment, new.currency, new.id || '.refunded_at_provider', 'available', -rest, 'refund', new.id, new.provider, held, new.updated_at),
          (new.tenant_id, new.environment, new.currency, new.id || '.refunded_at_provider', 'provider:' || new.provider, rest, 'refund', new.id, new.provider, held, new.updated_at)
        on conflict (journal, account) do nothing;
      end if;
      return null;
    end
    $$`.execute(db);
}

export const ledgerGivenBackMigration: Migration = { up, down };
