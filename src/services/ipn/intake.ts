/**
 * The gateway's one intake of provider notifications. A provider's inbound route reads what it receives
 * and describes it ({@link InboundNotice}: which payment, payout or authorisation; the provider's ids; how
 * to check its signature); everything after that is the gateway's, the same for every provider:
 *
 * - a **payment** named by the provider's id or ours, on one account: found in that account only, the
 *   signature checked with the account version it was made on (the active one when none is found), then
 *   read again from the provider and applied (`syncFromProvider`), or, when no payment of ours carries the
 *   id any more, followed as an attempt a routed payment moved on from;
 * - a **payout** (or refund) named by our id: found, the signature checked with its account version, then
 *   read again from the provider and applied (`followPayout`);
 * - an object named by a **token** and signed with its account's secret (an invoice or a permit):
 *   deduplicated, stored, kept as an orphan when unknown, then confirmed with the provider by the `ipn`
 *   job (`receive-ipn.ts`).
 *
 * The body of a notification is never applied: it only says which object to read again.
 *
 * @module
 */
import { precompile } from "../../db/precompiled.ts";
import type { Environment, Payment, PayoutRow } from "../../db/schema.ts";
import type { InboundNotice, IntakeReceipt, NoticeAccount, ProviderName } from "../../providers/provider.ts";
import { SERVICE_ACCOUNT } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { syncFromProvider } from "../direct-payments/refresh.ts";
import { isId } from "../ids.ts";
import { followAbandonedAttempt } from "../payments/abandoned-attempts.ts";
import { followPayout } from "../payouts/follow-payout.ts";
import { receiveIpn } from "./receive-ipn.ts";

/**
 * Takes one notification a provider's inbound route described.
 *
 * @throws {UnauthorizedError} (from the notice's `authenticate`) when its signature is not the account's;
 *   the errors of {@link receiveIpn} for a token notice.
 * @example
 * ```ts
 * await takeNotification(deps, { about: "payout", provider: "providerB", scope: null, payoutId: "po_…", authenticate });
 * ```
 */
export function takeNotification(deps: Deps, notice: InboundNotice): Promise<IntakeReceipt> {
  if (notice.about === "token") return receiveIpn(deps, notice);
  if (notice.about === "payment") return takePaymentNotice(deps, notice);
  return takePayoutNotice(deps, notice);
}

type Scope = { environment: Environment; tenantId: string | null };

/** The account a notice's scope stands for, at the version of the object it names (the active one when none). */
function accountOf(scope: Scope, found: { credential_version: number | null } | undefined): NoticeAccount {
  return { environment: scope.environment, tenantId: scope.tenantId, credentialVersion: found?.credential_version ?? null };
}

/** A tenant id that is not one of ours names no payment: nothing is looked up (its signature cannot be any account's). */
function scopeIsPlausible(scope: Scope): boolean {
  return scope.tenantId === null || isId("ten", scope.tenantId);
}

type PaymentNotice = Extract<InboundNotice, { about: "payment" }>;

async function takePaymentNotice(deps: Deps, notice: PaymentNotice): Promise<IntakeReceipt> {
  const scope = notice.scope;
  const payment = scope === null ? await findPaymentOf(deps, notice) : scopeIsPlausible(scope) ? await findPayment(deps, { ...notice, scope }) : undefined;
  // Checked with the account the payment was made on; without a scope, an unknown payment has no account to check with.
  const account =
    scope !== null
      ? accountOf(scope, payment)
      : payment && { environment: payment.environment, tenantId: payment.tenant_id, credentialVersion: payment.credential_version };
  if (account && (await notice.authenticate(account)) === "gone") return { outcome: "ignored" };
  // Found by our id while it now carries another attempt's (a rescue try at the same provider): that attempt, maybe.
  const aboutAnotherAttempt =
    payment !== undefined &&
    notice.providerPaymentId !== null &&
    payment.provider_transaction_id !== null &&
    (payment.provider !== notice.provider || payment.provider_transaction_id !== notice.providerPaymentId);
  if (aboutAnotherAttempt && (await followAbandonedAttempt(deps, { provider: notice.provider, providerPaymentId: notice.providerPaymentId! })))
    return { outcome: "followed" };
  if (payment) {
    await syncFromProvider(deps, payment);
    return { outcome: "followed" };
  }
  // No payment of ours carries that id any more: an attempt a routed payment moved on from, maybe.
  if (notice.providerPaymentId !== null && (await followAbandonedAttempt(deps, { provider: notice.provider, providerPaymentId: notice.providerPaymentId })))
    return { outcome: "followed" };
  return { outcome: "ignored" };
}

async function takePayoutNotice(deps: Deps, notice: Extract<InboundNotice, { about: "payout" }>): Promise<IntakeReceipt> {
  const payoutId = notice.payoutId !== null && isPayoutId(notice.payoutId) ? notice.payoutId : null;
  if (notice.scope === null) {
    // Named by our id alone: a payout that is not one of this provider's is ignored, unchecked (nothing to check it with).
    const payout = payoutId === null ? undefined : await findPayoutOf(deps, notice.provider, payoutId);
    if (!payout) {
      deps.logger.info({ provider: notice.provider, payoutId }, "payout notification for no payout of ours, ignored");
      return { outcome: "ignored" };
    }
    const account = { environment: payout.environment, tenantId: payout.tenant_id, credentialVersion: payout.credential_version };
    if ((await notice.authenticate(account)) === "gone") {
      deps.logger.warn({ provider: notice.provider, payoutId }, "payout notification for a credential version that is gone, ignored");
      return { outcome: "ignored" };
    }
    await followPayout(deps, { provider: notice.provider, payoutId: payout.id });
    return { outcome: "followed" };
  }
  const payout = payoutId !== null && scopeIsPlausible(notice.scope) ? await findScopedPayout(deps, notice.provider, notice.scope, payoutId) : undefined;
  if ((await notice.authenticate(accountOf(notice.scope, payout))) === "gone" || !payout) return { outcome: "ignored" };
  // The domain reads the payout again from the provider; the body is never applied.
  await followPayout(deps, { provider: notice.provider, payoutId: payout.id });
  return { outcome: "followed" };
}

/** Our payout and refund ids (`po_` / `rf_` + ULID): anything else is not ours, and never reaches a query. */
function isPayoutId(value: string): boolean {
  return isId("po", value) || isId("rf", value);
}

function findPayoutOf(deps: Pick<Deps, "db">, provider: ProviderName, payoutId: string) {
  return deps.db
    .selectFrom("payouts")
    .select(["id", "tenant_id", "environment", "credential_version"])
    .where("id", "=", payoutId)
    .where("provider", "=", provider)
    .executeTakeFirst();
}

/** The payout of this account and environment (the service's, or the scope's tenant's own). */
function findScopedPayout(
  deps: Pick<Deps, "db">,
  provider: ProviderName,
  scope: Scope,
  payoutId: string,
): Promise<Pick<PayoutRow, "id" | "credential_version"> | undefined> {
  const base = deps.db
    .selectFrom("payouts")
    .select(["id", "credential_version"])
    .where("id", "=", payoutId)
    .where("environment", "=", scope.environment)
    .where("provider", "=", provider);
  const scoped =
    scope.tenantId !== null
      ? base.where("tenant_id", "=", scope.tenantId).where("provider_account", "!=", SERVICE_ACCOUNT)
      : base.where("provider_account", "=", SERVICE_ACCOUNT);
  return scoped.executeTakeFirst();
}

/**
 * The payment a notice is about, precompiled (one look-up runs per notification). Its shape is
 * `account:key`: the service's account or a tenant's own, and `key` the provider's id or our `pay_` id (of
 * a payment the provider has not numbered yet).
 */
const paymentLookup = precompile<{ provider: string; environment: Environment; tenant_id: string; key: string }>()((db, p, shape) => {
  const [account, key] = shape.split(":");
  const base = db.selectFrom("payments").selectAll().where("environment", "=", p.environment).where("provider", "=", p.provider);
  const scoped =
    account === "tenant"
      ? base.where("tenant_id", "=", p.tenant_id).where("provider_account", "!=", SERVICE_ACCOUNT)
      : base.where("provider_account", "=", SERVICE_ACCOUNT);
  return key === "provider"
    ? scoped.where("provider_transaction_id", "=", p.key).orderBy("id", "desc").limit(1)
    : scoped.where("id", "=", p.key).where("provider_transaction_id", "is", null);
});

/** Any payment of the notice's provider with the provider's id (the newest). */
async function findPaymentOf(deps: Pick<Deps, "db">, notice: PaymentNotice): Promise<Payment | undefined> {
  if (notice.providerPaymentId === null) return undefined;
  return deps.db
    .selectFrom("payments")
    .selectAll()
    .where("provider", "=", notice.provider)
    .where("provider_transaction_id", "=", notice.providerPaymentId)
    .orderBy("id", "desc")
    .limit(1)
    .executeTakeFirst();
}

/** The payment of the notice's account and environment: by the provider's id, else by our `pay_` id. */
async function findPayment(deps: Pick<Deps, "db">, notice: PaymentNotice & { scope: Scope }): Promise<Payment | undefined> {
  const account = notice.scope.tenantId !== null ? "tenant" : "service";
  const base = { provider: notice.provider, environment: notice.scope.environment, tenant_id: notice.scope.tenantId ?? "" };
  if (notice.providerPaymentId !== null) {
    const { rows } = await paymentLookup(deps.db, { ...base, key: notice.providerPaymentId }, `${account}:provider`);
    if (rows[0]) return rows[0];
  }
  if (notice.paymentId !== null && isId("pay", notice.paymentId))
    return (await paymentLookup(deps.db, { ...base, key: notice.paymentId }, `${account}:ours`)).rows[0];
  return undefined;
}
