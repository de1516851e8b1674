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
 * | `<po_/rf_…>.fee_reserved` | available −fee, pending +fee                         | a pooled payout's fee announced before sending |
 * | `<po_/rf_…>.fee`        | pending −reserved, available −(fee − reserved), fees +fee | the provider reports a fee                 |
 * | `<po_/rf_…>.fee_released` | pending −reserved, available +reserved             | it failed after its fee was set aside          |
 *
 * Every entry also names its **holding account** (migration 0014): where the money physically sits —
 * `pooled:<provider>`, the service's own account at a provider shared by the tenants it collects for, or
 * `own:<provider>`, the tenant's own account there. A journal lives in one holding: a collection credits the
 * holding that collected it, a payout or refund spends from the holding that sends it. So a tenant's
 * `available` is kept per holding, and money collected on one account is never spent from another.
 *
 * Every journal is written in the transaction that changes the state it follows from, and `(journal,
 * account)` is unique: writing it again writes nothing. `available` may go below zero only on a tenant's
 * own provider account (the provider refuses what it cannot pay); on a pooled account a payout beyond what
 * the tenant holds there is refused before anything is written (`record-money-out.ts`).
 *
 * @module
 */
import { sql, type Kysely, type Transaction } from "kysely";
import type { Currency, Database, Environment, LedgerKind } from "../../db/schema.ts";
import { amountFrom } from "../amounts.ts";

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
  /** Where the money sits: {@link holdingOf}. */
  holding: string;
}

/** The `provider_account` of the service's own (pooled) account at a provider. */
export const POOLED_ACCOUNT = "service";

/** Whether a holding is the service's pooled account, and at which provider. */
export type HoldingKind = "pooled" | "own";

/**
 * The holding account of a payment, payout or refund made at `provider` on `providerAccount` (its row's
 * `provider_account`: `service`, or the tenant's credential set).
 *
 * @example
 * ```ts
 * holdingOf("providerA", "service"); // "pooled:providerA"
 * holdingOf("providerB", "01J…");    // "own:providerB"
 * ```
 */
export function holdingOf(provider: string, providerAccount: string): string {
  return `${providerAccount === POOLED_ACCOUNT ? "pooled" : "own"}:${provider}`;
}

/** A holding's two parts. */
export function parseHolding(holding: string): { kind: HoldingKind; provider: string } {
  const colon = holding.indexOf(":");
  return { kind: holding.slice(0, colon) === "pooled" ? "pooled" : "own", provider: holding.slice(colon + 1) };
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
        holding: subject.holding,
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

/** What `<id>.fee_reserved` set aside for a payout's fee (0: nothing). */
async function feeReservedFor(db: Executor, subjectId: string): Promise<number> {
  const row = await db
    .selectFrom("ledger_entries")
    .select("amount")
    .where("journal", "=", `${subjectId}.fee_reserved`)
    .where("account", "=", "pending")
    .executeTakeFirst();
  return row ? amountFrom(row.amount) : 0;
}

/**
 * The fee a provider announced before sending (provider A's create answer) is set aside from `available`,
 * like the amount, so that what the fee takes was there when the payout left (`advance-payout.ts`).
 */
export function reserveFee(db: Executor, now: Date, subject: LedgerSubject, fee: number): Promise<void> {
  if (fee <= 0) return Promise.resolve();
  return writeJournal(db, now, { ...subject, kind: "fee" }, `${subject.subjectId}.fee_reserved`, [
    ["available", -fee],
    ["pending", fee],
  ]);
}

/**
 * The provider charged a fee for it: from what was set aside for it, the rest (or the difference back) from
 * `available`. `null`: the provider's final word named no fee, so the one it announced is charged.
 */
export async function chargeFee(db: Executor, now: Date, subject: LedgerSubject, reported: number | null): Promise<void> {
  const reserved = await feeReservedFor(db, subject.subjectId);
  const fee = reported ?? reserved;
  if (fee <= 0 && reserved <= 0) return;
  const legs: [string, number][] = reserved > 0 ? [["pending", -reserved]] : [];
  if (fee - reserved !== 0) legs.push(["available", -(fee - reserved)]);
  if (fee > 0) legs.push(["fees", fee]);
  return writeJournal(db, now, { ...subject, kind: "fee" }, `${subject.subjectId}.fee`, legs);
}

/** A payout that failed gives back what was set aside for its fee. */
export async function releaseFee(db: Executor, now: Date, subject: LedgerSubject): Promise<void> {
  const reserved = await feeReservedFor(db, subject.subjectId);
  if (reserved <= 0) return;
  return writeJournal(db, now, { ...subject, kind: "fee" }, `${subject.subjectId}.fee_released`, [
    ["pending", -reserved],
    ["available", reserved],
  ]);
}

/** One holding's `available` and `pending` sums in one currency. */
export interface HoldingBalance {
  holding: string;
  currency: Currency;
  available: number;
  pending: number;
}

/** The tenant's `available` and `pending` sums in one environment, per holding and currency (none yet: no row). */
export async function balancesOf(db: Executor, tenantId: string, environment: Environment): Promise<HoldingBalance[]> {
  const rows = await db
    .selectFrom("ledger_entries")
    .select([
      "holding",
      "currency",
      sql<string>`coalesce(sum(amount) filter (where account = 'available'), 0)`.as("available"),
      sql<string>`coalesce(sum(amount) filter (where account = 'pending'), 0)`.as("pending"),
    ])
    .where("tenant_id", "=", tenantId)
    .where("environment", "=", environment)
    .where((eb) => eb("account", "in", ["available", "pending"]))
    .groupBy(["holding", "currency"])
    .orderBy("holding")
    .orderBy("currency")
    .execute();
  return rows.map((row) => ({ holding: row.holding, currency: row.currency, available: amountFrom(row.available), pending: amountFrom(row.pending) }));
}

/** What the tenant may spend from one holding: its `available` sum there, in one environment and currency. */
export async function availableOf(db: Executor, at: { tenantId: string; environment: Environment; currency: Currency; holding: string }): Promise<number> {
  const row = await db
    .selectFrom("ledger_entries")
    .select(sql<string>`coalesce(sum(amount), 0)`.as("available"))
    .where("tenant_id", "=", at.tenantId)
    .where("environment", "=", at.environment)
    .where("holding", "=", at.holding)
    .where("account", "=", "available")
    .where("currency", "=", at.currency)
    .executeTakeFirstOrThrow();
  return amountFrom(row.available);
}

/**
 * What the ledger says the service holds on each pooled account, for every tenant: per holding, environment
 * and currency, the tenants' `available` and `pending` there (money collected, less what went out and the
 * fees paid from it).
 */
export async function pooledHoldings(
  db: Executor,
  environment?: Environment,
): Promise<{ holding: string; environment: Environment; currency: Currency; held: number }[]> {
  let query = db
    .selectFrom("ledger_entries")
    .select(["holding", "environment", "currency", sql<string>`coalesce(sum(amount), 0)`.as("held")])
    .where("holding", "like", "pooled:%")
    .where((eb) => eb("account", "in", ["available", "pending"]))
    .groupBy(["holding", "environment", "currency"])
    .orderBy("holding")
    .orderBy("environment")
    .orderBy("currency");
  if (environment !== undefined) query = query.where("environment", "=", environment);
  const rows = await query.execute();
  return rows.map((row) => ({ holding: row.holding, environment: row.environment, currency: row.currency, held: amountFrom(row.held) }));
}
