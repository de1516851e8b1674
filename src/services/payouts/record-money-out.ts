/**
 * Recording money that goes out — a payout or a refund — before any provider is called: the checks the
 * providers document (their limits), the tenant's balance on the service's pooled account, the row and its
 * ledger reservation in one transaction, then the first step of its sync chain (`payout-sync.ts`), which
 * sends it. The row's id is the provider's idempotency key, so whatever crashes after this point, the
 * payout is sent at most once (contract decisions in docs/money-out.md).
 *
 * @module
 */
import { sql, type Transaction } from "kysely";
import type { Currency, CustomData, Database, Environment, PayoutPurpose, PayoutRow } from "../../db/schema.ts";
import { MoneyRuleError, NotConfiguredError, ValidationError } from "../../errors.ts";
import type { PaymentProvider, PayoutRecipient, ProviderAccountRef } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import { availableOf, holdingOf, POOLED_ACCOUNT, reserve } from "../ledger/ledger.ts";
import { payoutChain } from "./payout-sync-chain.ts";

/** A provider that sends money to `operator` wallets in `country`, and the currency there. */
export interface PayoutRoute {
  provider: PaymentProvider;
  currency: Currency;
}

/**
 * The providers that send to this wallet, in the gateway's order (`preferred` first when it serves it).
 *
 * @example
 * ```ts
 * payoutRoutes(deps, "mtn", "bj")[0]?.provider.name; // "providerA"
 * ```
 */
export function payoutRoutes(deps: Pick<Deps, "providers">, operator: string, country: string, preferred?: string): PayoutRoute[] {
  const routes: PayoutRoute[] = [];
  for (const provider of deps.providers.all) {
    const method = provider.payouts?.methods.find((m) => m.operator === operator && m.country === country);
    if (provider.capabilities.payout && method) routes.push({ provider, currency: method.currency });
  }
  return routes.sort((a, b) => Number(b.provider.name === preferred) - Number(a.provider.name === preferred));
}

/**
 * The first of `routes` whose provider has an account for the tenant there, with that account.
 *
 * @throws {NotConfiguredError} (424) the first route's, when none has one.
 */
export async function routeWithAccount(
  deps: Deps,
  routes: readonly PayoutRoute[],
  tenantId: string,
  environment: Environment,
): Promise<{ route: PayoutRoute; account: ProviderAccountRef }> {
  let first: unknown;
  for (const route of routes) {
    try {
      return { route, account: await route.provider.accountFor(deps, tenantId, environment) };
    } catch (error) {
      if (!(error instanceof NotConfiguredError)) throw error;
      first ??= error;
    }
  }
  throw first ?? new NotConfiguredError("No provider can send this payout");
}

export interface MoneyOutInput {
  tenantId: string;
  environment: Environment;
  purpose: PayoutPurpose;
  /** The refunded payment (a refund only). */
  paymentId?: string;
  route: PayoutRoute;
  account: ProviderAccountRef;
  /** The amount, when the caller knows it; otherwise `resolveAmount` says it. */
  amount?: number;
  description: string;
  reason?: string;
  metadata?: CustomData;
  /** The recipient, its phone in international format. */
  recipient: PayoutRecipient;
  /**
   * Takes, first in the transaction, the locks that must come before the tenant's row: a refund's payment.
   * Whoever holds a payment's row may then write ledger entries, which wait on the tenant's row (their
   * foreign key), so the payment's row is always taken before the tenant's, never after.
   */
  lockFirst?(tx: Transaction<Database>): Promise<unknown>;
  /**
   * Decides the amount inside the transaction, after the tenant's row is locked and before the row is
   * written (a refund's "never above what is left"); it throws to refuse.
   */
  resolveAmount?(tx: Transaction<Database>): Promise<number>;
  /** The merchant's `Idempotency-Key`: one payout (or one refund of the payment) per key, ever ({@link moneyOutByKey}). */
  idempotencyKey?: string;
}

/** Thrown inside the transaction when the key's row exists already: rolls the reservation back too. */
class MoneyOutExists extends Error {}

/**
 * The payout (or the payment's refund) made with this `Idempotency-Key`, if any. Its creator looks it up before
 * anything else — before the balance, limits or refundable amount, which that very row has since changed — and
 * answers it as it stands: the key names one row for good, whatever became of the key's stored answer.
 */
export async function moneyOutByKey(
  db: Deps["db"] | Transaction<Database>,
  by: { tenantId: string; environment: Environment; purpose: PayoutPurpose; paymentId?: string; key: string | undefined },
): Promise<PayoutRow | undefined> {
  if (by.key === undefined) return undefined;
  let query = db
    .selectFrom("payouts")
    .selectAll()
    .where("tenant_id", "=", by.tenantId)
    .where("environment", "=", by.environment)
    .where("purpose", "=", by.purpose)
    .where("idempotency_key", "=", by.key);
  if (by.purpose === "refund") query = query.where("payment_id", "=", by.paymentId ?? "");
  return query.executeTakeFirst();
}

/**
 * The limits the provider documents, checked before anything is written.
 *
 * @throws {MoneyRuleError} `payout_limit_exceeded`, naming the limit.
 */
function assertWithinAmountLimits(deps: Deps, input: MoneyOutInput, amount: number): void {
  const { provider } = input.route;
  if (amount > deps.config.maxAmount) throw new ValidationError([`amount must not be greater than ${deps.config.maxAmount}`]);
  const limits = provider.payouts!.limits;
  if (amount < limits.minAmount)
    throw new MoneyRuleError("payout_limit_exceeded", `${provider.label} sends at least ${limits.minAmount} ${input.route.currency} per payout`);
  if (limits.maxAmount !== null && amount > limits.maxAmount)
    throw new MoneyRuleError("payout_limit_exceeded", `${provider.label} sends at most ${limits.maxAmount} ${input.route.currency} per payout`);
}

/** At most `count` payouts to one number within the window, counting those not failed. */
async function assertWithinRecipientLimit(tx: Transaction<Database>, now: Date, input: MoneyOutInput): Promise<void> {
  const { provider } = input.route;
  const limit = provider.payouts!.limits.perRecipient;
  if (limit === null) return;
  const since = new Date(now.getTime() - limit.windowHours * 3_600_000);
  const row = await tx
    .selectFrom("payouts")
    .select((eb) => eb.fn.countAll<string>().as("count"))
    .where("provider", "=", provider.name)
    .where("phone_number", "=", input.recipient.phone.number)
    .where("created_at", ">", since)
    .where("state", "<>", "failed")
    .executeTakeFirstOrThrow();
  if (Number(row.count) >= limit.count)
    throw new MoneyRuleError(
      "payout_limit_exceeded",
      `${provider.label} sends at most ${limit.count} payouts to one number within ${limit.windowHours} hours; ${input.recipient.phone.number} has had ${row.count}`,
    );
}

/**
 * Writes the payout (or refund) and its reservation, then enqueues its first step to run now.
 *
 * @throws {MoneyRuleError} a provider limit, or `insufficient_balance` on the pooled account; whatever `resolveAmount` throws.
 */
export async function recordMoneyOut(deps: Deps, input: MoneyOutInput): Promise<PayoutRow> {
  if (input.amount !== undefined) assertWithinAmountLimits(deps, input, input.amount);
  const now = deps.now();
  const id = newId(input.purpose === "refund" ? "rf" : "po");
  const { currency } = input.route;
  const row = await deps.db
    .transaction()
    .execute(async (tx) => {
      // What is read below to decide stays true until commit: from the pooled account, one writer of the tenant's
      // money out at a time (its row locked); under a per-number limit, one writer per number at the provider (an
      // advisory lock). A payout from a tenant's own account without such a limit takes neither: its provider decides.
      await input.lockFirst?.(tx);
      const pooled = input.account.accountId === POOLED_ACCOUNT;
      if (pooled) await tx.selectFrom("tenants").select("id").where("id", "=", input.tenantId).forUpdate().executeTakeFirstOrThrow();
      if (input.route.provider.payouts!.limits.perRecipient !== null)
        await sql`select pg_advisory_xact_lock(hashtext(${`payout-recipient:${input.route.provider.name}:${input.recipient.phone.number}`}))`.execute(tx);
      // A run of the same request (its key) that committed while this one waited for the locks above: that row
      // is the answer — checked before the balance or the refundable amount, which it has just used.
      if (await moneyOutByKey(tx, { ...input, key: input.idempotencyKey })) throw new MoneyOutExists();
      const amount = input.resolveAmount ? await input.resolveAmount(tx) : input.amount!;
      assertWithinAmountLimits(deps, input, amount);
      await assertWithinRecipientLimit(tx, now, input);
      if (pooled) {
        const holding = holdingOf(input.route.provider.name, POOLED_ACCOUNT);
        const available = await availableOf(tx, { tenantId: input.tenantId, environment: input.environment, currency, holding });
        if (amount > available)
          throw new MoneyRuleError(
            "insufficient_balance",
            `amount ${amount} is greater than the ${available} ${currency} this tenant holds on the service's ${input.route.provider.label} account (${holding}), which sends it: money collected on another account cannot be paid out from it`,
          );
      }
      const { phone, operator, ...names } = input.recipient;
      const inserted = await tx
        .insertInto("payouts")
        .values({
          id,
          tenant_id: input.tenantId,
          environment: input.environment,
          purpose: input.purpose,
          payment_id: input.paymentId ?? null,
          provider: input.route.provider.name,
          provider_account: input.account.accountId,
          credential_version: input.account.credentialVersion,
          operator,
          country: phone.country,
          phone_number: phone.number,
          recipient: names,
          amount,
          currency,
          description: input.description,
          reason: input.reason ?? null,
          metadata: input.metadata ?? null,
          idempotency_key: input.idempotencyKey ?? null,
          created_at: now,
          updated_at: now,
        })
        .$call((insert) =>
          input.idempotencyKey === undefined
            ? insert
            : insert.onConflict((oc) =>
                input.purpose === "refund"
                  ? oc
                      .columns(["tenant_id", "environment", "payment_id", "idempotency_key"])
                      .where(sql<boolean>`purpose = 'refund' and idempotency_key is not null`)
                      .doNothing()
                  : oc
                      .columns(["tenant_id", "environment", "idempotency_key"])
                      .where(sql<boolean>`purpose = 'payout' and idempotency_key is not null`)
                      .doNothing(),
              ),
        )
        .returningAll()
        .executeTakeFirst();
      if (!inserted) throw new MoneyOutExists();
      await reserve(tx, now, ledgerSubjectOf(inserted), amount);
      return inserted;
    })
    .catch(async (error: unknown) => {
      if (!(error instanceof MoneyOutExists)) throw error;
      // A retry of the same request committed it meanwhile: that row is the payout (its chain is under way).
      return (await moneyOutByKey(deps.db, { ...input, key: input.idempotencyKey }))!;
    });
  if (row.id !== id) return row;
  await payoutChain.enqueue(deps, { subjectId: row.id, provider: row.provider, createdAt: row.created_at, step: 0, now: true });
  return row;
}

/** The ledger's subject of a payout or refund row. */
export function ledgerSubjectOf(row: PayoutRow) {
  return {
    tenantId: row.tenant_id,
    environment: row.environment,
    currency: row.currency,
    subjectId: row.id,
    provider: row.provider,
    kind: row.purpose,
    holding: holdingOf(row.provider, row.provider_account),
  } as const;
}
