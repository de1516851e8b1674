/**
 * Provider B behind the port (`../provider.ts`): hosted checkout invoices, direct mobile-money payments
 * of an invoice (SoftPay, `softpay.ts`: a push, a code, or a URL per operator), recurring authorisations
 * (PERMIT: create, read, charge, revoke) and money out (disburse v2, `payouts.ts`), every call with the
 * tenant's own keys of the version the object was made with; a payment is read back by confirming its
 * invoice (a checkout's, or a permit charge's); its IPN (`inbound.ts`) and its disbursement callback
 * (`disburse-inbound.ts`) are signed with the SHA-512 of the account's master key.
 *
 * @module
 */
import { NotConfiguredError } from "../../errors.ts";
import {
  type AccountVersion,
  type AuthorisationRef,
  CollectionError,
  type CollectionStarted,
  type Environment,
  type Payment,
  type HostedCheckoutRequest,
  type UssdPushRequest,
  type NotificationSignatures,
  type PaymentProvider,
  type PaymentReport,
  ProviderCallError,
  type RecurringAuthorisationRequest,
  type RecurringAuthorisations,
} from "../provider.ts";
import { openProviderBAccount, openProviderBIpnHash, openProviderBMasterKey, type ProviderBAccount, type ProviderBContext } from "./accounts.ts";
import { providerBConfiguration, providerBCredentials } from "./configuration.ts";
import { providerBDisburseRoute } from "./disburse-inbound.ts";
import { IPN_ROUTE_PATH, providerBInboundRoute } from "./inbound.ts";
import { hashDigest, verifyHashDigest, verifyIpnHashWith } from "./ipn.ts";
import { refusalOf, toAuthorisationReport, toChargeResult, toPaymentReport } from "./map.ts";
import { providerBPayerOf, providerBPayouts } from "./payouts.ts";
import { PROVIDER_B_METHODS } from "./softpay-methods.ts";
import { startSoftpay } from "./softpay.ts";

/** The keys under which our ids travel in an invoice's or a permit's custom data at provider B. */
export const PAYMENT_ID_KEY = "passerelle_payment_id";
export const PERMIT_ID_KEY = "passerelle_permit_id";
export const CHARGE_ID_KEY = "passerelle_charge_id";

/** Where provider B posts its IPNs for this gateway. */
const callbackUrl = (deps: ProviderBContext) => `${deps.config.publicBaseUrl}${IPN_ROUTE_PATH}`;

/** The account of a known version. @throws {NotConfiguredError} when that version's credentials are gone (nothing can be sent). */
async function accountOf(deps: ProviderBContext, account: AccountVersion): Promise<ProviderBAccount> {
  const opened = await openProviderBAccount(deps, { tenantId: account.tenantId, environment: account.environment, version: account.credentialVersion });
  if (!opened) throw new NotConfiguredError(`The provider B credentials of this account version are gone (${account.environment})`);
  return opened;
}

/**
 * Creates something at provider B (an invoice, a permit) with the request's account version and answers what
 * the customer opens next. Nothing is recorded at provider B before it answers, so a failed call is a
 * collection that never started: nothing to follow.
 */
async function createWith(
  deps: ProviderBContext,
  request: { tenantId: string; environment: AccountVersion["environment"]; account: { credentialVersion: number | null } },
  create: (account: ProviderBAccount) => Promise<{ token: string; response_text: string }>,
): Promise<CollectionStarted> {
  try {
    const account = await accountOf(deps, {
      tenantId: request.tenantId,
      environment: request.environment,
      credentialVersion: request.account.credentialVersion!,
    });
    const created = await create(account);
    return { providerPaymentId: created.token, reference: null, providerStatus: "pending", redirectUrl: created.response_text };
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    throw new CollectionError(error, "create", undefined, false);
  }
}

/** Creates the invoice; the customer pays on `redirectUrl`. */
function startCheckout(deps: ProviderBContext, request: HostedCheckoutRequest): Promise<CollectionStarted> {
  const customer = request.customer;
  return createWith(deps, request, (account) =>
    account.invoices.createCheckoutInvoice({
      invoice: {
        total_amount: request.amount,
        description: request.description,
        customer: { name: customer.name, ...(customer.email ? { email: customer.email } : {}), ...(customer.phone ? { phone: customer.phone } : {}) },
        items: { item_0: { name: request.description, quantity: 1, unit_price: request.amount, total_price: request.amount } },
        ...(request.channels?.length ? { channels: request.channels } : {}),
      },
      store: { name: request.storeName },
      custom_data: { ...request.customData, [PAYMENT_ID_KEY]: request.paymentId },
      actions: { cancel_url: request.cancelUrl, return_url: request.returnUrl, callback_url: callbackUrl(deps) },
    }),
  );
}

/** The tenant's store name, shown on the invoice of a direct payment. */
async function storeNameOf(deps: ProviderBContext, tenantId: string): Promise<string> {
  return (await deps.gateway.storeName(tenantId)) ?? "Passerelle";
}

/** A direct payment (SoftPay): the invoice, recorded, then the operator's call (`softpay.ts`). */
async function startDirectPayment(deps: ProviderBContext, request: UssdPushRequest): Promise<CollectionStarted> {
  const account = await accountOf(deps, {
    tenantId: request.tenantId,
    environment: request.environment,
    credentialVersion: request.account.credentialVersion!,
  });
  const storeName = await storeNameOf(deps, request.tenantId);
  return startSoftpay(account, { storeName, callbackUrl: callbackUrl(deps), paymentIdKey: PAYMENT_ID_KEY, logger: deps.logger }, request);
}

/** Creates the permit; the customer authorises it on `redirectUrl`. */
function startAuthorisation(deps: ProviderBContext, request: RecurringAuthorisationRequest): Promise<CollectionStarted> {
  const customer = request.customer;
  return createWith(deps, request, (account) =>
    account.permits.createPermit({
      customer: { name: customer.name, phone: customer.phone, ...(customer.email ? { email: customer.email } : {}) },
      description: request.description,
      max_amount: request.maxAmount,
      custom_data: { ...request.customData, [PERMIT_ID_KEY]: request.authorisationId },
      actions: { return_url: request.returnUrl, cancel_url: request.cancelUrl, callback_url: callbackUrl(deps) },
    }),
  );
}

/**
 * Confirms the payment's invoice with the credential version it was made with: null when there is nothing
 * to confirm with (no invoice yet, or that version's credentials are gone). A refusal (provider B does not
 * know the token) is thrown as such: the domain treats it as a confirmation that does not match.
 */
async function readPayment(deps: ProviderBContext, payment: Payment): Promise<PaymentReport | null | undefined> {
  if (payment.provider_transaction_id === null || payment.credential_version === null) return null;
  const account = await openProviderBAccount(deps, { tenantId: payment.tenant_id, environment: payment.environment, version: payment.credential_version });
  if (!account) return null;
  const report = toPaymentReport(await account.invoices.confirmCheckoutInvoice(payment.provider_transaction_id));
  // A direct payment is applied without the checkout's own check (`checkout/apply-confirmation.ts`): made here.
  if (payment.kind === "direct_payment" && report.details) {
    const { amount, environment } = report.details;
    if (amount !== Number(payment.amount) || environment !== payment.environment) {
      deps.logger.error(
        { alert: "providerB_confirm_mismatch", paymentId: payment.id, tenantId: payment.tenant_id, confirmedAmount: amount, confirmedEnvironment: environment },
        "provider B's confirmation does not match the direct payment: nothing applied",
      );
      return undefined;
    }
  }
  return report;
}

const recurring: RecurringAuthorisations<ProviderBContext> = {
  async read(deps, authorisation) {
    const account = await accountOf(deps, authorisation);
    return toAuthorisationReport(await account.permits.confirmPermit(authorisation.providerAuthorisationId));
  },
  async charge(deps, request) {
    const account = await accountOf(deps, request.authorisation);
    try {
      const answer = await account.permits.chargePermit({
        permit_token: request.authorisation.providerAuthorisationId,
        amount: request.amount,
        description: request.description,
        custom_data: { ...request.customData, [CHARGE_ID_KEY]: request.chargeId, [PAYMENT_ID_KEY]: request.paymentId },
        idempotency_key: request.chargeId,
      });
      return toChargeResult(answer);
    } catch (error) {
      if (error instanceof ProviderCallError && error.kind === "refused") return refusalOf(error);
      throw error;
    }
  },
  async revoke(deps, authorisation: AuthorisationRef) {
    const account = await accountOf(deps, authorisation);
    try {
      await account.permits.revokePermit(authorisation.providerAuthorisationId);
      return { outcome: "revoked" };
    } catch (error) {
      // `1004`: provider B will not move it to revoked: it ended there already (expired, declined, revoked).
      if (error instanceof ProviderCallError && error.kind === "refused" && refusalOf(error).reason === "permit_not_active")
        return { outcome: "ended", failure: error };
      throw error;
    }
  },
};

const signatures: NotificationSignatures<ProviderBContext> = {
  async verify(deps, signature, account) {
    const expected = await openProviderBIpnHash(deps, versionOf(account));
    return expected !== null && verifyIpnHashWith(signature, expected);
  },
  digest: hashDigest,
  async verifyDigest(deps, digest, account) {
    const masterKey = await openProviderBMasterKey(deps, versionOf(account));
    return masterKey === null ? null : verifyHashDigest(digest, masterKey);
  },
};

const versionOf = (account: AccountVersion): { tenantId: string; environment: Environment; version: number } => ({
  tenantId: account.tenantId,
  environment: account.environment,
  version: account.credentialVersion,
});

export const providerB: PaymentProvider<ProviderBContext> = {
  name: "providerB",
  label: "Provider B",
  configuration: providerBConfiguration,
  credentials: providerBCredentials,
  capabilities: {
    collect: ["hosted_checkout", "recurring_authorisation", "ussd_push"],
    recurring: true,
    // Disburse v2 (`payouts.ts`); a refund is a disbursement to the payer (provider B has no refund API).
    payout: true,
    refund: true,
    // Its confirm and check-status never report a payment given back: reading a settled one again would learn nothing.
    refundsOutsideGateway: false,
    // SoftPay's operators (direct payments); on a checkout's page the customer chooses the channel.
    methods: PROVIDER_B_METHODS,
    limits: { minAmount: 1, maxAmount: null },
  },
  async accountFor(deps, tenantId, environment) {
    const opened = await openProviderBAccount(deps, { tenantId, environment });
    if (!opened) throw new NotConfiguredError(`The tenant has no provider B credentials for the ${environment} environment`);
    return { accountId: opened.credentialsId, credentialVersion: opened.version };
  },
  startCollection(deps, request) {
    if (request.kind === "hosted_checkout") return startCheckout(deps, request);
    if (request.kind === "recurring_authorisation") return startAuthorisation(deps, request);
    return startDirectPayment(deps, request);
  },
  readPayment,
  inbound: [providerBInboundRoute, providerBDisburseRoute],
  recurring,
  signatures,
  payouts: providerBPayouts,
  payerOf: providerBPayerOf,
};
