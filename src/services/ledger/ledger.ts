/**
 * The tenant's ledger (issue 15): double entry, per tenant, environment and currency. Each movement of money
 * is a journal of legs that sum to zero, one per account:
 *
 * | account            | what it holds                                                        |
 * |--------------------|----------------------------------------------------------------------|
 * | `available`        | the tenant's money it may pay out or refund                          |
 * | `pending`          | the tenant's money on its way out: payouts and refunds not final yet |
 * | `provider:<name>`  | the other side of the money at a provider (collected in, sent out)   |
 * | `fees`             | what providers charged for a payout                                  |
 *
 * | journal                 | legs                                                   | written when                                   |
 * |-------------------------|--------------------------------------------------------|------------------------------------------------|
 * | `<pay_…>.collected`     | available +amount, provider −amount                    | a payment becomes succeeded (a trigger, 0011)  |
 * | `<pay_…>.refunded_at_provider` | available −rest, provider +rest                 | the provider reports it refunded beyond our refunds (trigger) |
 * | `<po_/rf_…>.reserved`   | available −amount, pending +amount                     | a payout or refund is created                  |
 * | `<po_/rf_…>.sent`       | pending −amount, provider +amount                      | the provider says it was sent                  |
 * | `<po_/rf_…>.released`   | pending −amount, available +amount                     | the provider says it failed                    |
 * | `<po_/rf_…>.fee`        | available −fee, fees +fee                              | the provider reports a fee                     |
 *
 * Every journal is written in the transaction that changes the state it follows from, and `(journal,
 * account)` is unique: writing it again writes nothing. `available` may go below zero only on a tenant's
 * own provider account (the provider refuses what it cannot pay); on the service's pooled account a
 * payout beyond it is refused before anything is written (`assertAvailable`).
 *
 * @module
 */
import { sql, type Kysely, type Transaction } from "kysely";
import type { Currency, Database, Environment, LedgerKind } from "../../db/schema.ts";

type Executor = Kysely<Database> | Transaction<Database>;

/** What a journal is about. */
export interface LedgerSubject {
  tenantId: string;
  environment: Environment;
  currency: Currency;
  /** The payment, payout or refund. */
  subjectId: string;
  provider: string;
  kind: LedgerKind;
}

/** The account on the other side of money at `provider`. */
export function providerAccount(provider: string): string {
  return `provider:${provider}`;
}

/** Writes one journal (its legs must sum to zero); a journal already written is left as it is. */
async function writeJournal(
  db: Executor,
  now: Date,
  subject: LedgerSubject,
  journal: string,
  legs: readonly [account: string, amount: number][],
): Promise<void> {
  const sum = legs.reduce((total, [, amount]) => total + amount, 0);
  if (sum !== 0) throw new Error(`journal ${journal} does not balance (${sum})`);
  await db
    .insertInto("ledger_entries")
    .values(
      legs.map(([account, amount]) => ({
        tenant_id: subject.tenantId,
        environment: subject.environment,
        currency: subject.currency,
        journal,
        account,
        amount,
        kind: subject.kind,
        subject_id: subject.subjectId,
        provider: subject.provider,
        created_at: now,
      })),
    )
    .onConflict((oc) => oc.columns(["journal", "account"]).doNothing())
    .execute();
}

/** A payout or refund is created: its amount leaves `available` for `pending`. */
export function reserve(db: Executor, now: Date, subject: LedgerSubject, amount: number): Promise<void> {
  return writeJournal(db, now, subject, `${subject.subjectId}.reserved`, [
    ["available", -amount],
    ["pending", amount],
  ]);
}

/** The provider sent it: the amount leaves `pending` for the provider's side. */
export function settleSent(db: Executor, now: Date, subject: LedgerSubject, amount: number): Promise<void> {
  return writeJournal(db, now, subject, `${subject.subjectId}.sent`, [
    ["pending", -amount],
    [providerAccount(subject.provider), amount],
  ]);
}

/** The provider failed it: the amount goes back to `available`. */
export function release(db: Executor, now: Date, subject: LedgerSubject, amount: number): Promise<void> {
  return writeJournal(db, now, subject, `${subject.subjectId}.released`, [
    ["pending", -amount],
    ["available", amount],
  ]);
}

/** The provider charged a fee for it. */
export function chargeFee(db: Executor, now: Date, subject: LedgerSubject, fee: number): Promise<void> {
  if (fee <= 0) return Promise.resolve();
  return writeJournal(db, now, { ...subject, kind: "fee" }, `${subject.subjectId}.fee`, [
    ["available", -fee],
    ["fees", fee],
  ]);
}

/** The tenant's `available` and `pending` sums in one environment, per currency (zero rows: none yet). */
export async function balancesOf(
  db: Executor,
  tenantId: string,
  environment: Environment,
): Promise<{ currency: Currency; available: number; pending: number }[]> {
  const rows = await db
    .selectFrom("ledger_entries")
    .select([
      "currency",
      sql<string>`coalesce(sum(amount) filter (where account = 'available'), 0)`.as("available"),
      sql<string>`coalesce(sum(amount) filter (where account = 'pending'), 0)`.as("pending"),
    ])
    .where("tenant_id", "=", tenantId)
    .where("environment", "=", environment)
    .where((eb) => eb("account", "in", ["available", "pending"]))
    .groupBy("currency")
    .orderBy("currency")
    .execute();
  return rows.map((row) => ({ currency: row.currency, available: Number(row.available), pending: Number(row.pending) }));
}

/** The tenant's `available` sum in one environment and currency. */
export async function availableOf(db: Executor, tenantId: string, environment: Environment, currency: Currency): Promise<number> {
  const row = await db
    .selectFrom("ledger_entries")
    .select(sql<string>`coalesce(sum(amount), 0)`.as("available"))
    .where("tenant_id", "=", tenantId)
    .where("environment", "=", environment)
    .where("currency", "=", currency)
    .where("account", "=", "available")
    .executeTakeFirstOrThrow();
  return Number(row.available);
}
