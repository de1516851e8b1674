/**
 * Migration 0014: the ledger knows where money sits (issue 24).
 *
 * Until now a tenant's `available` counted every collection whichever account held it, so the service's
 * pooled provider A account could pay out money that a tenant had collected on its own provider B account.
 * Every entry now names its **holding account**, the place the money physically sits:
 *
 * - `pooled:<provider>` — the service's own account at a provider (a payment, payout or refund whose
 *   `provider_account` is `service`), shared by every tenant the service collects for;
 * - `own:<provider>` — the tenant's own account at a provider (its stored keys).
 *
 * A journal lives in one holding: a collection credits the holding that collected it, a payout or refund
 * spends from the holding that sends it. Existing entries are re-filed from their subject (the payment, or
 * the payout/refund) without changing any amount, so every total stays what it was. The trigger that credits
 * a collection (0011) writes the holding too.
 *
 * Amounts are bounded where they are stored: at most 2^53 − 1 (JavaScript's largest exact integer) in a
 * payment, payout, ledger entry or difference, so a value read back is always exact. The checks are `not
 * valid`: rows written before them are left as they are (reading them cannot fail either, see
 * `services/amounts.ts`), every new row is checked.
 *
 * @module
 */
import { sql, type Kysely } from "kysely";
import type { Migration } from "kysely/migration";

/** The holding account of a subject: its `provider_account` (`service`: the pooled one) and provider. */
const HOLDING_OF = (alias: string) => sql.raw(`(case when ${alias}.provider_account = 'service' then 'pooled:' else 'own:' end) || ${alias}.provider`);

async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table ledger_entries add column holding text`.execute(db);
  await sql`update ledger_entries e set holding = ${HOLDING_OF("p")} from payments p where p.id = e.subject_id`.execute(db);
  await sql`update ledger_entries e set holding = ${HOLDING_OF("o")} from payouts o where o.id = e.subject_id`.execute(db);
  // No entry is without its subject (the gateway writes none); were one found, its provider decides, as for a tenant's own account.
  await sql`update ledger_entries set holding = 'own:' || provider where holding is null`.execute(db);
  await sql`alter table ledger_entries alter column holding set not null`.execute(db);
  await sql`alter table ledger_entries add constraint ledger_entries_holding_check check (holding ~ '^(pooled|own):.+$')`.execute(db);
  await sql`drop index ledger_entries_balance_idx`.execute(db);
  await sql`create index ledger_entries_balance_idx on ledger_entries (tenant_id, environment, holding, account, currency)`.execute(db);
  // The operator's view of a pooled account sums every tenant's entries there.
  await sql`create index ledger_entries_pooled_idx on ledger_entries (holding, environment, currency, account) where holding like 'pooled:%'`.execute(db);

  await sql`
    create or replace function ledger_payment_moved() returns trigger language plpgsql as $$
    declare
      rest bigint;
      held text := (case when new.provider_account = 'service' then 'pooled:' else 'own:' end) || new.provider;
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

  for (const [table, column] of [
    ["payments", "amount"],
    ["payouts", "amount"],
    ["ledger_entries", "amount"],
    ["reconciliation_differences", "amount"],
  ] as const)
    await sql`alter table ${sql.table(table)} add constraint ${sql.raw(`${table}_amount_exact_check`)} check (abs(${sql.ref(column)}) <= 9007199254740991) not valid`.execute(
      db,
    );
}

async function down(db: Kysely<any>): Promise<void> {
  for (const table of ["payments", "payouts", "ledger_entries", "reconciliation_differences"])
    await sql`alter table ${sql.table(table)} drop constraint ${sql.raw(`${table}_amount_exact_check`)}`.execute(db);
  await sql`
    create or replace function ledger_payment_moved() returns trigger language plpgsql as $$
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
  await sql`drop index ledger_entries_pooled_idx`.execute(db);
  await sql`drop index ledger_entries_balance_idx`.execute(db);
  await sql`create index ledger_entries_balance_idx on ledger_entries (tenant_id, environment, account, currency)`.execute(db);
  await sql`alter table ledger_entries drop column holding`.execute(db);
}

export const ledgerHoldingsMigration: Migration = { up, down };
