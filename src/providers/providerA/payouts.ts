/**
 * Provider A's payouts behind the port (`Payouts` in `../provider.ts`; providers-money-out.md, "A (FedaPay)
 * payouts"). A payout is created pending (`POST /v1/payouts`, our `po_`/`rf_` id as `merchant_reference`),
 * then started (`PUT /v1/payouts/start`): only the start moves money. So `send` first looks for what the
 * provider holds under our id, creates only when it holds nothing, hands the provider's id to the domain
 * (`recorded`) before starting, and starts only a payout still `pending` — calling it again after any
 * failure never sends twice. Every call is made on the account the payout names.
 *
 * @module
 */
import {
  type Environment,
  type PayoutRef,
  type PayoutReport,
  type PayoutRequest,
  type Payouts,
  PayoutError,
  type ProviderAccountRef,
  type ProviderBalance,
  ProviderCallError,
} from "../provider.ts";
import { accountOfPayment, clientFor, type ProviderAAccount, type ProviderAContext } from "./accounts.ts";
import type { ProviderAClient } from "./client.ts";
import { PROVIDER_A_PAYOUT_METHODS, payoutModeOf, toPayoutReport, toProviderBalances } from "./map.ts";
import type { WirePayout } from "./wire.ts";

/** Provider A's documented payout limits (dashboard): 1 to 1,000,000 XOF each, at most 3 per number per 24 h. */
export const PROVIDER_A_PAYOUT_LIMITS = { minAmount: 1, maxAmount: 1_000_000, perRecipient: { count: 3, windowHours: 24 } } as const;

type PayoutStep = "account" | "create" | "read" | "start";

/** The account a payout is made on (the one `accountFor` chose), or null when its secret is gone. */
function accountOf(deps: ProviderAContext, tenantId: string, environment: Environment, account: ProviderAccountRef): Promise<ProviderAAccount | null> {
  return accountOfPayment(deps, { provider_account: account.accountId, credential_version: account.credentialVersion, tenant_id: tenantId, environment });
}

/** The payout under our id (`merchant_reference`), or null when provider A holds none (404). */
async function findByReference(client: ProviderAClient, payoutId: string): Promise<WirePayout | null> {
  try {
    return await client.getPayoutByMerchantReference(payoutId);
  } catch (error) {
    if (error instanceof ProviderCallError && error.kind === "refused" && error.status === 404) return null;
    throw error;
  }
}

/** The report of a payout; one whose status this adapter does not know is logged and taken as in flight (never sent again). */
function reportOf(deps: ProviderAContext, payoutId: string, wire: WirePayout): PayoutReport {
  const report = toPayoutReport(wire);
  if (report) return report;
  deps.logger.warn({ payoutId, status: wire.status }, "provider A reported a payout status this gateway does not know");
  return { providerPayoutId: String(wire.id), providerStatus: wire.status, state: "pending", notSentYet: false, errorCode: null, fee: null, sentAt: null };
}

async function send(deps: ProviderAContext, request: PayoutRequest): Promise<PayoutReport> {
  const account = await accountOf(deps, request.tenantId, request.environment, request.account);
  const refuse = (step: PayoutStep, message: string, mayHaveActed: boolean) =>
    new PayoutError(new ProviderCallError("providerA", "refused", message), step, mayHaveActed);
  // A payout that has a provider id may have been started by an earlier call: it must be followed, not failed.
  if (!account) throw refuse("account", "The provider A account is gone", request.providerPayoutId !== null);
  const { phone, operator } = request.recipient;
  const mode = payoutModeOf(operator, phone.country);
  if (!mode) throw refuse("create", `Provider A does not pay out to ${operator} in ${phone.country.toUpperCase()}`, false);
  const client = clientFor(deps, request.environment, account);
  let step: PayoutStep = "read";
  try {
    let wire = request.providerPayoutId !== null ? await client.getPayout(Number(request.providerPayoutId)) : await findByReference(client, request.payoutId);
    if (!wire) {
      step = "create";
      const { firstname, lastname, email } = request.recipient;
      wire = await client.createPayout({
        amount: request.amount,
        currency: { iso: request.currency },
        mode,
        description: request.description,
        merchant_reference: request.payoutId,
        custom_metadata: { payoutId: request.payoutId },
        customer: {
          ...(firstname !== undefined && { firstname }),
          ...(lastname !== undefined && { lastname }),
          ...(email !== undefined && { email }),
          phone_number: { number: phone.number, country: phone.country },
        },
      });
    }
    const providerPayoutId = String(wire.id);
    if (request.providerPayoutId !== providerPayoutId) await request.recorded({ providerPayoutId, providerStatus: wire.status });
    if (wire.status !== "pending") return reportOf(deps, request.payoutId, wire);
    // The domain's last word before money moves (a refund whose payment was given back meanwhile is stopped).
    await request.beforeSending?.({ fee: typeof wire.fees === "number" ? wire.fees : null });
    step = "start";
    const started = (await client.startPayout(wire.id)).find((candidate) => candidate.id === wire!.id) ?? { ...wire, status: "started" };
    step = "read";
    // The start was answered: a failed read-back changes nothing, the start's own answer says where the payout is.
    const current = await client.getPayout(wire.id).catch(() => started);
    return reportOf(deps, request.payoutId, current);
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    // Only a start may move money: one without an answer must be followed by reading, never started again.
    throw new PayoutError(error, step, step === "start" && error.outcomeUnknown);
  }
}

async function read(deps: ProviderAContext, payout: PayoutRef): Promise<PayoutReport | null | undefined> {
  const account = await accountOf(deps, payout.tenantId, payout.environment, payout.account);
  if (!account) {
    deps.logger.warn({ payoutId: payout.payoutId }, "provider A account of a payout is gone; cannot read it");
    return undefined;
  }
  const client = clientFor(deps, payout.environment, account);
  const wire = payout.providerPayoutId !== null ? await client.getPayout(Number(payout.providerPayoutId)) : await findByReference(client, payout.payoutId);
  if (!wire) return null;
  const report = toPayoutReport(wire);
  if (!report) deps.logger.warn({ payoutId: payout.payoutId, status: wire.status }, "provider A reported a payout status this gateway does not know");
  return report;
}

async function balances(deps: ProviderAContext, tenantId: string, environment: Environment, accountRef: ProviderAccountRef): Promise<ProviderBalance[]> {
  const account = await accountOf(deps, tenantId, environment, accountRef);
  if (!account) throw new ProviderCallError("providerA", "refused", "The provider A account is gone");
  return toProviderBalances(await clientFor(deps, environment, account).listBalances());
}

/** Provider A's payouts: the modes of the FR docs (2025-10), its documented limits, send / read / balances. */
export const providerAPayouts: Payouts<ProviderAContext> = {
  methods: PROVIDER_A_PAYOUT_METHODS,
  limits: PROVIDER_A_PAYOUT_LIMITS,
  send,
  read,
  balances,
};
