/**
 * Provider A behind the port (`../provider.ts`): direct USSD payments on the service's account or a
 * tenant's own, read back by provider A's id (or by our `pay_` id, sent as `merchant_reference`, when the
 * create call's answer never came), its signed webhooks (`inbound.ts`), and payouts (`payouts.ts`; a refund is
 * a payout to the payer, {@link payerOf}: provider A has no refund API).
 *
 * @module
 */
import type { PaymentMethod } from "../direct-payment-words.ts";
import {
  CollectionError,
  type CollectionStarted,
  type Payment,
  type Payer,
  type PaymentProvider,
  type PaymentReport,
  ProviderCallError,
  type UssdPushRequest,
} from "../provider.ts";
import { accountForNewPayment, accountOfPayment, clientFor, type ProviderAContext } from "./accounts.ts";
import { providerAConfiguration, providerACredentials } from "./configuration.ts";
import { PROVIDER_A_WEBHOOK_ROUTES } from "./inbound.ts";
import { METHOD_WIRE, PROVIDER_A_METHODS, toPaymentReport, wireModeOf } from "./map.ts";
import { providerAPayouts } from "./payouts.ts";

/**
 * The three calls of a direct payment — create (our `pay_` id as `Idempotency-Key`, `merchant_reference`
 * and in `custom_metadata`), token, USSD push. The provider's id is handed to the domain (`recorded`) while
 * the token is asked for (a token moves no money), and the push waits for both.
 */
async function startCollection(deps: ProviderAContext, request: UssdPushRequest): Promise<CollectionStarted> {
  const account = await accountOfPayment(deps, {
    provider_account: request.account.accountId,
    credential_version: request.account.credentialVersion,
    tenant_id: request.tenantId,
    environment: request.environment,
  });
  if (!account) throw new CollectionError(new ProviderCallError("providerA", "refused", "The provider A account is gone"), "create", undefined, false);
  const client = clientFor(deps, request.environment, account);
  const mode = wireModeOf(request.method as PaymentMethod);
  let step: "create" | "token" | "push" = "create";
  let started: CollectionStarted | undefined;
  let recorded: Promise<unknown> | undefined;
  try {
    const created = await client.createTransaction(
      {
        description: request.description,
        amount: request.amount,
        currency: { iso: request.currency },
        mode,
        merchant_reference: request.pushKey ?? request.paymentId,
        custom_metadata: { paymentId: request.paymentId },
        customer: { ...request.customer, phone_number: { number: request.phone.number, country: request.phone.country } },
      },
      request.pushKey ?? request.paymentId,
    );
    started = { providerPaymentId: String(created.id), reference: created.reference ?? null, providerStatus: created.status };
    step = "token";
    recorded = request.recorded(started);
    const [token] = await Promise.all([client.createToken(created.id), recorded]);
    step = "push";
    await client.sendNow(mode, token, request.pushKey ?? request.paymentId);
    return started;
  } catch (error) {
    // The domain's own failure comes first (it is what stopped the payment); its result is awaited either way.
    if (recorded) await recorded;
    if (!(error instanceof ProviderCallError)) throw error;
    // Create or push without an answer may have reached the phone; a token call cannot (no push was sent).
    throw new CollectionError(error, step, started, error.outcomeUnknown && step !== "token");
  }
}

/** Reads the payment with the account it was made on: by provider A's id, or by our `pay_` id before we knew it. */
async function readPayment(deps: ProviderAContext, payment: Payment): Promise<PaymentReport | null | undefined> {
  const account = await accountOfPayment(deps, payment);
  if (!account) {
    deps.logger.warn({ paymentId: payment.id }, "provider A account of a direct payment is gone; cannot sync it");
    return undefined;
  }
  const client = clientFor(deps, payment.environment, account);
  try {
    const wire =
      payment.provider_transaction_id !== null
        ? await client.getTransaction(Number(payment.provider_transaction_id))
        : await client.getByMerchantReference(payment.id);
    const report = toPaymentReport(wire);
    if (!report) deps.logger.warn({ paymentId: payment.id, status: wire.status }, "provider A reported a status this gateway does not know");
    return report;
  } catch (error) {
    // Not found by our reference: provider A never received the create call (yet).
    if (error instanceof ProviderCallError && error.kind === "refused" && error.status === 404 && payment.provider_transaction_id === null) return null;
    throw error;
  }
}

/**
 * Who paid a direct payment: the phone it was pushed to (stored with the payment, as sent to provider A),
 * with the operator and country of its `payment_method`. Null for a payment without a phone or method.
 */
function payerOf(payment: Payment): Payer | null {
  const wire =
    payment.payment_method !== null && Object.hasOwn(METHOD_WIRE, payment.payment_method) ? METHOD_WIRE[payment.payment_method as PaymentMethod] : undefined;
  const customer = payment.customer;
  if (!wire || !customer?.phone) return null;
  return {
    phone: { number: customer.phone, country: customer.country ?? wire.country },
    operator: wire.operator,
    ...(customer.firstname !== undefined && { firstname: customer.firstname }),
    ...(customer.lastname !== undefined && { lastname: customer.lastname }),
    ...(customer.email !== undefined && { email: customer.email }),
  };
}

export const providerA: PaymentProvider<ProviderAContext> = {
  name: "providerA",
  label: "Provider A",
  configuration: providerAConfiguration,
  credentials: providerACredentials,
  capabilities: {
    collect: ["ussd_push"],
    recurring: false,
    payout: true,
    // No refund API at provider A (dashboard only): a refund is a payout to the payer (`payerOf`).
    refund: true,
    // A merchant can refund on provider A's dashboard; its webhook may be lost.
    refundsOutsideGateway: true,
    methods: PROVIDER_A_METHODS,
    limits: { minAmount: 1, maxAmount: null },
  },
  accountFor: async (deps, tenantId, environment) => {
    const account = await accountForNewPayment(deps, tenantId, environment);
    return { accountId: account.accountId, credentialVersion: account.credentialVersion };
  },
  startCollection: (deps, request) => {
    if (request.kind !== "ussd_push") throw new Error(`provider A does not start a ${request.kind}`);
    return startCollection(deps, request);
  },
  readPayment,
  inbound: PROVIDER_A_WEBHOOK_ROUTES,
  payouts: providerAPayouts,
  payerOf,
};
