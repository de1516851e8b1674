/**
 * Provider B's money out behind the port (`Payouts`): a payout (or a refund) is a disbursement of the
 * tenant's own provider B account, of the credential version the payout was made with, through the disburse
 * v2 API (`disburse.ts`). Our `po_…` / `rf_…` id travels as `disburse_id`.
 *
 * Sending is two steps: `get-invoice` records the disbursement and moves no money (its token is handed to
 * the domain through `request.recorded` before anything else), `submit-invoice` sends it. A payout that has
 * a token already is read first (`check-status`): `created` means provider B sent nothing yet, so it is
 * submitted; any other status is reported as it is. A submit whose answer was lost may have sent the money:
 * it is reported `mayHaveActed` and never submitted again — the domain follows it by reading.
 *
 * Provider B has no disburse sandbox (test keys are refused with `1001`): the gateway's sandbox payouts work
 * against the simulator; on the real sandbox they are refusals.
 *
 * @module
 */
import { NotConfiguredError } from "../../errors.ts";
import {
  type Environment,
  type Payer,
  type Payment,
  type PayoutMethodCapability,
  type PayoutRef,
  type PayoutReport,
  type PayoutRequest,
  type Payouts,
  PayoutError,
  ProviderCallError,
} from "../provider.ts";
import { openProviderBAccount, type ProviderBContext } from "./accounts.ts";
import { DISBURSE_CALLBACK_PATH, type DisburseSubmitted, type ProviderBDisburseClient } from "./disburse.ts";
import { nationalNumberOf, toPayoutReport, toProviderBalances, WITHDRAW_MODES, walletOfChannel, withdrawModeOf } from "./map.ts";

/** Where provider B posts a disbursement's callback for this gateway. */
const disburseCallbackUrl = (deps: ProviderBContext) => `${deps.config.publicBaseUrl}${DISBURSE_CALLBACK_PATH}`;

/** The disburse client of a payout's account version. @throws {NotConfiguredError} when its credentials are gone. */
async function disburseClientOf(
  deps: ProviderBContext,
  ref: { tenantId: string; environment: Environment; account: { credentialVersion: number | null } },
): Promise<ProviderBDisburseClient> {
  const version = ref.account.credentialVersion;
  const opened = version === null ? null : await openProviderBAccount(deps, { tenantId: ref.tenantId, environment: ref.environment, version });
  if (!opened) throw new NotConfiguredError(`The provider B credentials of this account version are gone (${ref.environment})`);
  return opened.disbursements;
}

/** A status word we do not know, after a step that may have sent: followed by reading, as if pending. */
function unknownStatusReport(deps: ProviderBContext, token: string, status: string): PayoutReport {
  deps.logger.warn({ provider: "providerB", providerStatus: status }, "unknown disbursement status, followed as pending");
  return { providerPayoutId: token, providerStatus: status, state: "pending", notSentYet: false, errorCode: null, fee: null, sentAt: null };
}

/** Records the disbursement at provider B and hands its token to the domain; answers the token. */
async function createDisbursement(deps: ProviderBContext, client: ProviderBDisburseClient, request: PayoutRequest): Promise<string> {
  const { operator, phone } = request.recipient;
  const mode = withdrawModeOf(operator, phone.country);
  if (!mode) {
    const refusal = new ProviderCallError("providerB", "refused", `Provider B does not send to ${operator} in ${phone.country.toUpperCase()}`);
    throw new PayoutError(refusal, "get-invoice", false);
  }
  let token: string;
  try {
    const created = await client.getInvoice({
      account_alias: phone.number,
      amount: request.amount,
      withdraw_mode: mode,
      callback_url: disburseCallbackUrl(deps),
      disburse_id: request.payoutId,
    });
    token = created.disburse_token;
  } catch (error) {
    // get-invoice moves no money: whatever happened to it, nothing was sent.
    if (error instanceof ProviderCallError) throw new PayoutError(error, "get-invoice", false);
    throw error;
  }
  await request.recorded({ providerPayoutId: token, providerStatus: "created" });
  return token;
}

/** Sends a recorded disbursement: what provider B answered, or the failure (`mayHaveActed` unless it provably did nothing). */
async function submit(deps: ProviderBContext, client: ProviderBDisburseClient, request: PayoutRequest, token: string): Promise<PayoutReport> {
  // The domain's last word before money moves (a refund whose payment was given back meanwhile is stopped).
  await request.beforeSending?.();
  let answer: DisburseSubmitted;
  try {
    answer = await client.submitInvoice({ disburse_invoice: token, disburse_id: request.payoutId });
  } catch (error) {
    if (error instanceof ProviderCallError) throw new PayoutError(error, "submit", error.outcomeUnknown);
    throw error;
  }
  const status = answer.status ?? "pending";
  // A submitted disbursement is never `created` again: it was sent, whatever the word.
  const report = status === "created" ? undefined : toPayoutReport(token, { status });
  return report ?? unknownStatusReport(deps, token, status);
}

/** Reads a disbursement before going on with it. A read that failed after earlier steps may have sent: `mayHaveActed` unless refused. */
async function statusBeforeResuming(client: ProviderBDisburseClient, token: string) {
  try {
    return await client.checkStatus(token);
  } catch (error) {
    if (error instanceof ProviderCallError) throw new PayoutError(error, "check-status", error.kind !== "refused");
    throw error;
  }
}

const methods: readonly PayoutMethodCapability[] = WITHDRAW_MODES.map(({ operator, country }) => ({ operator, country, currency: "XOF" }));

export const providerBPayouts: Payouts<ProviderBContext> = {
  methods,
  // 200 XOF is the smallest amount integrators report; provider B documents no maximum or per-number limit.
  limits: { minAmount: 200, maxAmount: null, perRecipient: null },
  async send(deps, request) {
    const client = await disburseClientOf(deps, request);
    if (request.providerPayoutId === null) return submit(deps, client, request, await createDisbursement(deps, client, request));
    const token = request.providerPayoutId;
    const answer = await statusBeforeResuming(client, token);
    const report = toPayoutReport(token, answer);
    if (!report) return unknownStatusReport(deps, token, answer.status);
    return report.notSentYet ? submit(deps, client, request, token) : report;
  },
  async read(deps, payout: PayoutRef) {
    // get-invoice moves no money: a payout without a token was never sent.
    if (payout.providerPayoutId === null) return null;
    const client = await disburseClientOf(deps, payout);
    const answer = await client.checkStatus(payout.providerPayoutId);
    const report = toPayoutReport(payout.providerPayoutId, answer);
    if (!report) deps.logger.warn({ provider: "providerB", providerStatus: answer.status }, "unknown disbursement status, nothing applied");
    return report;
  },
  async balances(deps, tenantId, environment, account) {
    const client = await disburseClientOf(deps, { tenantId, environment, account });
    return toProviderBalances(await client.checkBalance());
  },
};

/**
 * Who paid a checkout or a permit charge: the phone provider B confirmed, and the wallet of the channel it
 * reports (`payment_method`). Null without a phone, or for a channel that is not a known wallet (a card).
 */
export function providerBPayerOf(payment: Payment): Payer | null {
  const wallet = walletOfChannel(payment.payment_method);
  const phone = payment.customer?.phone;
  if (!wallet || !phone) return null;
  const number = nationalNumberOf(phone, wallet.country);
  if (!number) return null;
  // A checkout's customer has a name; a direct payment's, its first and last names.
  const given = payment.customer?.name ?? [payment.customer?.firstname, payment.customer?.lastname].filter(Boolean).join(" ");
  const [firstname, ...rest] = given.trim().split(/\s+/).filter(Boolean);
  return {
    phone: { number, country: wallet.country },
    operator: wallet.operator,
    ...(firstname ? { firstname } : {}),
    ...(rest.length ? { lastname: rest.join(" ") } : {}),
    ...(payment.customer?.email ? { email: payment.customer.email } : {}),
  };
}
