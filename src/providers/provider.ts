/**
 * The provider port: what the gateway asks of a payment provider, in domain types only. A provider is a
 * folder under `src/providers/<name>/` that owns its HTTP client, wire types, the mapping between its
 * words and ours (both ways), its signatures and its inbound HTTP routes, and exports one
 * {@link PaymentProvider}. The domain (`src/services/`) calls providers through this interface and the
 * registry (`registry.ts`); it never imports a provider's wire or mapping modules.
 *
 * Modelled on Medusa's `AbstractPaymentProvider` (one class per provider, the core calls its methods) and
 * Hyperswitch's connector folders (`transformers.rs`: wire ↔ domain, both ways, beside the client).
 *
 * @module
 */
import type { z } from "zod";
import type { ZodOpenApiPathItemObject } from "zod-openapi";
import type { Currency, CustomData, Environment, Payment, PaymentState, PermitStatus } from "../db/schema.ts";
import type { ProviderContext, ProviderName } from "./context.ts";

export type * from "./context.ts";
/** The domain's types a provider speaks in (a provider's folder takes them from here, never from `db/`). */
export type { Currency, CustomData, Environment, JsonValue, Payment, PaymentState, PermitStatus } from "../db/schema.ts";

/** The ways a provider can collect money from a customer. */
export type CollectionKind =
  /** A USSD prompt pushed to the customer's phone (provider A's direct payments). */
  | "ussd_push"
  /** A page hosted by the provider where the customer pays (provider B's checkout). */
  | "hosted_checkout"
  /** A standing authorisation the merchant charges later (provider B's permits). */
  | "recurring_authorisation";

/** One way to pay that a provider reaches: a mobile-money operator (or card network) in a country. */
export interface PaymentMethodCapability {
  /** The spec's `payment_method` value, when the API names it (`mnoA_open`…); the operator otherwise. */
  method: string;
  /** The operator behind it (`mtn`, `moov`…), as the routing tables name it. */
  operator: string;
  /** ISO 3166-1 alpha-2, lower case. */
  country: string;
  currency: Currency;
  /** How a payment by this method is collected. */
  collection: CollectionKind;
  /**
   * For a direct collection (`ussd_push`), what the customer does to complete it: `push` — approve the
   * prompt on the phone (the default); `otp` — first get a code by USSD (`otpHint` says how) and give it
   * with the payment (`UssdPushRequest.otp`); `redirect` — open the URL the provider answers (an app-based
   * wallet: `CollectionStarted.redirectUrl`).
   */
  flow?: CollectionFlow;
  /** For the `otp` flow: how the customer gets the code (`Dial #144*82# …`). */
  otpHint?: string;
  /** The smallest and largest amount this method takes, when the provider documents them. */
  limits?: { minAmount: number; maxAmount: number | null };
}

/** How a customer completes a direct collection (see {@link PaymentMethodCapability.flow}). */
export type CollectionFlow = "push" | "otp" | "redirect";

/** What a provider declares it can do. */
export interface ProviderCapabilities {
  /** The collections it starts. */
  collect: readonly CollectionKind[];
  /** Whether it keeps a standing authorisation that is charged later. */
  recurring: boolean;
  /** Whether it can send money to a wallet. */
  payout: boolean;
  /** Whether it can give a collected payment back. */
  refund: boolean;
  /**
   * Whether a collected payment can be given back outside the gateway (on the provider's dashboard): the
   * gateway then reads its settled payments again on a schedule of their own (`SETTLED_REREAD_SCHEDULE`),
   * so that a refund whose notification was lost is still learnt.
   */
  refundsOutsideGateway: boolean;
  /** The operators and countries it serves; empty when the customer chooses on the provider's page. */
  methods: readonly PaymentMethodCapability[];
  /** Amounts it accepts, in the currency's whole units. */
  limits: { minAmount: number; maxAmount: number | null };
}

/**
 * Why a call to a provider failed, the same for every provider:
 * - `refused`: it answered and said no (a 4xx, or a refusal code in a 2xx body): nothing happened there;
 * - `unreachable`: the connection was refused before anything was sent;
 * - `server_error`: a 5xx, an unreadable answer or a broken connection after sending: outcome unknown;
 * - `timeout`: no answer within `PROVIDER_TIMEOUT_MS`: outcome unknown.
 */
export type ProviderFailureKind = "refused" | "unreachable" | "server_error" | "timeout";

/** A failed provider call. The domain maps it to its answer (`errors.ts`: 422, 502 or 504). */
export class ProviderCallError extends Error {
  override name = "ProviderCallError";
  constructor(
    readonly provider: ProviderName,
    readonly kind: ProviderFailureKind,
    message: string,
    readonly details: {
      /** The HTTP status, when there was one. */
      status?: number | null;
      /** The provider's field errors, flattened to `<field> <message>`. */
      providerErrors?: string[];
      /** The provider's own refusal code (provider B's `response_code`). */
      providerCode?: string;
    } = {},
  ) {
    super(message);
  }

  get status(): number | null {
    return this.details.status ?? null;
  }

  get providerErrors(): string[] {
    return this.details.providerErrors ?? [];
  }

  /** Whether the request may have reached the provider and been acted on. */
  get outcomeUnknown(): boolean {
    return this.kind === "server_error" || this.kind === "timeout";
  }
}

/**
 * The provider's word on one payment, in our terms: what `readPayment` returns and what a verified
 * notification leads to. The domain applies it by the contract's order of states (`services/payments`).
 */
export interface PaymentReport {
  /** The provider's id of the payment (provider A's integer as a string, provider B's token). */
  providerPaymentId: string;
  /** The provider's reference, when it gives one. */
  reference: string | null;
  /** The provider's own status word, kept as the payment's `provider_status`. */
  providerStatus: string;
  /** Our state for it. */
  state: PaymentState;
  /** The provider's error code for a failure, when it gives one. */
  errorCode: string | null;
  /** When the money was the merchant's, as the provider says. */
  approvedAt: Date | null;
  /** What a provider that confirms a payment in full adds (provider B: amount, customer, receipt). */
  details?: ConfirmedPaymentDetails;
  /**
   * The provider says it gave the payment back by itself, fully or in part (provider A: refunded on its
   * dashboard): `amount` is how much when it says, null when it does not (counted as all of it). Absent
   * when it reports no refund.
   */
  refundedByProvider?: { amount: number | null };
}

/** What every collection of a payment names: our payment, its tenant, environment and account, and the money. */
export interface PaymentCollection {
  /** Our id (`pay_…`), sent to the provider so that its records name it. */
  paymentId: string;
  tenantId: string;
  environment: Environment;
  /** The provider account the payment is made on (from {@link PaymentProvider.accountFor}). */
  account: ProviderAccountRef;
  amount: number;
  currency: Currency;
  description: string;
}

/** A USSD push: the payment is recorded (`paymentId`), the provider asked to prompt the phone. */
export interface UssdPushRequest extends PaymentCollection {
  kind: "ussd_push";
  /** The spec's `payment_method`. */
  method: string;
  phone: { number: string; country: string };
  customer: { firstname?: string; lastname?: string; email?: string };
  /** The operator of the phone (the routing vocabulary: `mtn`, `orange`, `wave`…); the spec's endpoint leaves it to `method`. */
  operator?: string;
  /** The code the customer got by USSD, for a method of the `otp` flow. */
  otp?: string;
  /**
   * This push's own reference at the provider (its merchant reference and idempotency key), when the payment may be
   * pushed there more than once — a rescue try (`<paymentId>.<attempt>`); by default the payment's id, which makes a
   * retried call one push.
   */
  pushKey?: string;
  /**
   * Called once the provider recorded the payment, before the customer is prompted: the domain stores the
   * provider's id then. The prompt waits for it, and a failure of it stops the payment before the prompt.
   */
  recorded(started: CollectionStarted): Promise<unknown>;
}

/** What a started collection left at the provider. */
export interface CollectionStarted {
  providerPaymentId: string;
  reference: string | null;
  providerStatus: string;
  /** The page the customer is sent to (a hosted checkout's, an authorisation's), when there is one. */
  redirectUrl?: string;
}

/**
 * A collection that failed part-way. `started` is set once the provider recorded the payment (its id is
 * known) even if a later step failed; `mayHaveActed` when the failed step may still have reached the
 * customer (a push whose answer never came), so the payment must be followed rather than failed.
 */
export class CollectionError extends Error {
  override name = "CollectionError";
  constructor(
    readonly failure: ProviderCallError,
    readonly step: string,
    readonly started: CollectionStarted | undefined,
    readonly mayHaveActed: boolean,
  ) {
    super(failure.message);
  }
}

/** `ProviderAccountRef.accountId` (and a payment's `provider_account`) of the service's own account of a provider. */
export const SERVICE_ACCOUNT = "service";

/** Which of a provider's accounts a payment uses: the service's own, or a tenant's stored credentials. */
export interface ProviderAccountRef {
  /** `service`, or the tenant's `provider_credentials.id`. */
  accountId: string;
  credentialVersion: number | null;
}

/** A route a provider receives requests on (its webhooks, IPNs): raw bytes in, its own answer out. */
export interface InboundRoute<Context extends ProviderContext = ProviderContext> {
  method: "POST";
  /** OpenAPI form (`/providerA/webhook/{environment}`); the HTTP layer derives its router's path from it. */
  path: string;
  /** Verifies, parses and hands the notification to the domain; errors it throws get the contract's shape. */
  handle(context: Context, request: Request, params: Record<string, string>): Promise<Response>;
  /** Its OpenAPI description. */
  openapi: ZodOpenApiPathItemObject;
}

/** A text shown to people, in the dashboard's languages. */
export interface LocalizedText {
  en: string;
  fr: string;
}

/** What the gateway knows of itself when it builds a provider's configuration section. */
export interface GatewaySettingsForProviders {
  /** `PUBLIC_BASE_URL` (or its default): where the mounted simulators are reached (`/sandbox/<name>`). */
  publicBaseUrl: string;
  /** Whether the simulators are mounted (`SIMULATORS`). */
  simulators: boolean;
  /** A secret of the deployment, the same in every process: what keys derived for a simulator's account are made from. */
  simulatorSeed: string;
}

/**
 * A provider's configuration: the environment variables it reads (each with its zod schema; `loadConfig`
 * validates them with the gateway's own and names a bad one in its one-line error) and the section built
 * from their values, `config[name]`, which its calls read as `context.config[name]`.
 */
export interface ProviderConfiguration<Section = unknown> {
  /** `NAME: schema`; an optional variable's schema says so (`.optional()`, `.default(…)`). */
  readonly variables: Readonly<Record<string, z.ZodType>>;
  /** Its section, from the parsed values of {@link variables} (by name). */
  section(values: Readonly<Record<string, unknown>>, gateway: GatewaySettingsForProviders): Section;
}

/** One field of a tenant's credential set at a provider. */
export interface CredentialField {
  /** Its key in the set (`masterKey`): the API's field name, the sealed field's name. */
  name: string;
  /** Whether a set may leave it out. */
  optional?: boolean;
  /** How the dashboard names it. */
  label: LocalizedText;
}

/**
 * The credentials a tenant stores for a provider (`/tenants/{tenant_id}/credentials/<name>`): the set's
 * fields, sealed one by one and served masked, and how the API and the dashboard's Settings present them.
 */
export interface ProviderCredentials {
  /** The set's fields, in display order. */
  readonly fields: readonly CredentialField[];
  /** What the API's summaries call the set (`provider B credentials`). */
  readonly summary: string;
  /** The Settings section's title and the line under it. */
  readonly title: LocalizedText;
  readonly hint: LocalizedText;
}

/** What the gateway asks of a provider. */
export interface PaymentProvider<Context extends ProviderContext = ProviderContext> {
  readonly name: ProviderName;
  /** How answers and logs name it (`Provider A`). */
  readonly label: string;
  readonly capabilities: ProviderCapabilities;
  /** Its environment variables and the configuration section built from them, when it reads any. */
  readonly configuration?: ProviderConfiguration;
  /** The credentials a tenant stores for it, when a tenant can bring its own account. */
  readonly credentials?: ProviderCredentials;
  /**
   * The account a new payment of this tenant and environment is made on.
   *
   * @throws {NotConfiguredError} (424) when the provider has no account there.
   */
  accountFor(context: Context, tenantId: string, environment: Environment): Promise<ProviderAccountRef>;
  /**
   * Starts a collection recorded as `paymentId`.
   *
   * @throws {CollectionError} when a call failed; `mayHaveActed` says whether the payment must be followed.
   */
  startCollection(context: Context, request: CollectionRequest): Promise<CollectionStarted>;
  /**
   * Reads a payment from the provider, with the account it was made on. `null` when the provider does
   * not know the payment (it never received it); `undefined` when its answer means nothing to us (an
   * unknown status: logged by the provider, nothing applied).
   *
   * @throws {ProviderCallError} when the provider could not be read.
   */
  readPayment(context: Context, payment: Payment): Promise<PaymentReport | null | undefined>;
  /** The requests it sends us (webhooks, IPNs), each verified and parsed in its folder. */
  readonly inbound: readonly InboundRoute<Context>[];
  /** Standing authorisations charged later, when `capabilities.recurring`. */
  readonly recurring?: RecurringAuthorisations<Context>;
  /** Checks the signatures of notifications that name an object by token (provider B's IPN hash). */
  readonly signatures?: NotificationSignatures<Context>;
  /** Money sent to a wallet (payouts, and refunds made as payouts), when `capabilities.payout`. */
  readonly payouts?: Payouts<Context>;
  /**
   * Who paid a payment, as far as the provider's records tell (the phone, its operator and country): where
   * a refund is sent. Null when it cannot tell (no phone, or a channel that is not a mobile-money wallet).
   */
  payerOf?(payment: Payment): Payer | null;
}

// --- money out: payouts (and refunds, which are payouts to the payer) ---

/** A payout's state, in its one forward order: `pending` < `sent` = `failed` (both final). */
export type PayoutState = "pending" | "sent" | "failed";

/** A wallet a provider can send money to: an operator in a country (the operator vocabulary of {@link PaymentMethodCapability}). */
export interface PayoutMethodCapability {
  operator: string;
  /** ISO 3166-1 alpha-2, lower case. */
  country: string;
  currency: Currency;
}

/** What a provider documents as the limits of its payouts; the domain enforces them before calling it. */
export interface PayoutLimits {
  /** Smallest amount of one payout, in whole units. */
  minAmount: number;
  /** Largest amount of one payout, in whole units; null when the provider sets none. */
  maxAmount: number | null;
  /** At most `count` payouts to one phone number within `windowHours` (provider A: 3 per 24 h); null when none. */
  perRecipient: { count: number; windowHours: number } | null;
}

/** The person a payout goes to. */
export interface PayoutRecipient {
  /** The national number and its country (ISO alpha-2, lower case). */
  phone: { number: string; country: string };
  /** The operator of the wallet (`mtn`, `moov`, `orange`, `wave`…). */
  operator: string;
  firstname?: string;
  lastname?: string;
  email?: string;
}

/** What the domain knows of one payout (or refund): enough to send it, resume it or read it. */
export interface PayoutRef {
  /** Our id (`po_…`, or `rf_…` for a refund): the provider's idempotency key (provider A's `merchant_reference`, provider B's `disburse_id`). */
  payoutId: string;
  tenantId: string;
  environment: Environment;
  account: ProviderAccountRef;
  /** The provider's id of it (provider A's payout id, provider B's disburse token), once recorded. */
  providerPayoutId: string | null;
  amount: number;
  currency: Currency;
}

/** A payout to send: recorded first (our row exists), then handed to the provider. */
export interface PayoutRequest extends PayoutRef {
  description: string;
  recipient: PayoutRecipient;
  /**
   * Called once the provider recorded the payout (its id is known), before anything is sent: the domain
   * stores the id then. The sending step waits for it, and a failure of it stops the payout before sending.
   */
  recorded(started: { providerPayoutId: string; providerStatus: string }): Promise<unknown>;
  /**
   * Called right before each call that may move money (provider A's start, provider B's submit), after
   * the provider said nothing was sent: the domain's last word. It throws {@link SendingStopped} when the
   * payout must not be sent (a refund whose payment its provider gave back meanwhile, or a fee the tenant's
   * money on the service's pooled account cannot cover); the adapter lets it through and sends nothing.
   * `announced.fee`: the fee the provider said it will charge (provider A's create answer), when it said one.
   */
  beforeSending?(announced?: { fee: number | null }): Promise<void>;
}

/** The domain stopped a payout before its sending call ({@link PayoutRequest.beforeSending}): nothing was sent. */
export class SendingStopped extends Error {
  override name = "SendingStopped";
  constructor(readonly payoutId: string) {
    super(`payout ${payoutId} was stopped before it was sent`);
  }
}

/** The provider's word on a payout, in our terms. */
export interface PayoutReport {
  providerPayoutId: string;
  /** The provider's own status word. */
  providerStatus: string;
  state: PayoutState;
  /**
   * The provider holds the payout but has sent nothing yet (provider A `pending` before its start, provider
   * B `created` before its submit): sending it may go on without any risk of sending twice.
   */
  notSentYet: boolean;
  /** The provider's error code of a failure, when it gives one. */
  errorCode: string | null;
  /** The fee the provider charged for it, in whole units, when it says. */
  fee: number | null;
  /** When the provider says it was sent. */
  sentAt: Date | null;
}

/**
 * A payout call that failed. `mayHaveActed` when the failed step may have sent money (a start or submit
 * whose answer never came): the payout is then followed by reading it, never sent again.
 */
export class PayoutError extends Error {
  override name = "PayoutError";
  constructor(
    readonly failure: ProviderCallError,
    readonly step: string,
    readonly mayHaveActed: boolean,
  ) {
    super(failure.message);
  }
}

/** One balance a provider holds for an account. */
export interface ProviderBalance {
  currency: Currency;
  /** In whole units. */
  amount: number;
  /** What the provider splits it by (provider A: the payout mode; provider B: the country), when it does. */
  label: string | null;
}

/** A phone that paid, where a refund goes back to. */
export interface Payer {
  phone: { number: string; country: string };
  operator: string;
  firstname?: string;
  lastname?: string;
  email?: string;
}

/**
 * What a provider with `capabilities.payout` does with money out. Every call is made on the account the
 * payout names (`accountFor` chose it when the payout was created).
 */
export interface Payouts<Context extends ProviderContext = ProviderContext> {
  /** The wallets it sends to. */
  readonly methods: readonly PayoutMethodCapability[];
  readonly limits: PayoutLimits;
  /**
   * Sends the payout, or goes on with one sent before: reads first what the provider holds under the
   * payout's id, creates it only when the provider has nothing, and sends it only while the provider says
   * nothing was sent ({@link PayoutReport.notSentYet}). Calling it again never sends twice.
   *
   * @throws {PayoutError} when a call failed; `mayHaveActed` says whether the payout must be followed by reading it.
   */
  send(context: Context, request: PayoutRequest): Promise<PayoutReport>;
  /**
   * Reads the payout. `null` when the provider holds nothing under its id (never received); `undefined`
   * when its answer means nothing to us (an unknown status: logged, nothing applied).
   *
   * @throws {ProviderCallError} when the provider could not be read.
   */
  read(context: Context, payout: PayoutRef): Promise<PayoutReport | null | undefined>;
  /** The balances of a tenant's own account, when the provider tells them. @throws {ProviderCallError} */
  balances?(context: Context, tenantId: string, environment: Environment, account: ProviderAccountRef): Promise<ProviderBalance[]>;
}

// --- hosted checkout and recurring authorisations (provider B) ---

/** A collection the gateway can ask for: a USSD push, a hosted checkout page, or a standing authorisation. */
export type CollectionRequest = UssdPushRequest | HostedCheckoutRequest | RecurringAuthorisationRequest;

/**
 * A hosted checkout: the provider makes a page where the customer pays (`CollectionStarted.redirectUrl`);
 * our payment is recorded once it answers, keyed by its id. Its notifications come to the provider's
 * inbound route.
 */
export interface HostedCheckoutRequest extends PaymentCollection {
  kind: "hosted_checkout";
  /** The merchant's name shown on the page. */
  storeName: string;
  customer: { name: string; email?: string; phone?: string };
  customData?: CustomData;
  /** The provider's channel names to offer, when the merchant restricts them. */
  channels?: string[];
  returnUrl: string;
  cancelUrl: string;
}

/**
 * A standing authorisation (a permit): the customer authorises it on the provider's page
 * (`CollectionStarted.redirectUrl`), the merchant charges it later ({@link RecurringAuthorisations}).
 */
export interface RecurringAuthorisationRequest {
  kind: "recurring_authorisation";
  /** Our permit id, sent with the authorisation. */
  authorisationId: string;
  tenantId: string;
  environment: Environment;
  account: ProviderAccountRef;
  /** The largest amount one charge may take. */
  maxAmount: number;
  description: string;
  customer: { name: string; email?: string; phone: string };
  customData?: CustomData;
  returnUrl: string;
  cancelUrl: string;
}

/** What a provider that confirms a payment in full tells beyond {@link PaymentReport}. */
export interface ConfirmedPaymentDetails {
  /** The amount it confirms, in whole units. */
  amount: number;
  /** The environment (sandbox or live) it says the payment was made in. */
  environment: Environment;
  /** The customer fields it gives (only those). */
  customer: { name?: string; email?: string; phone?: string };
  /** How the customer paid, in the provider's channel name. */
  paymentMethod: string | null;
  receiptUrl: string | null;
  receiptIdentifier: string | null;
}

/** One version of a tenant's account at the provider: what an authorisation or a signature belongs to. */
export interface AccountVersion {
  tenantId: string;
  environment: Environment;
  credentialVersion: number;
}

/** An authorisation as the gateway knows it: where it was made, and the provider's id of it. */
export interface AuthorisationRef extends AccountVersion {
  providerAuthorisationId: string;
}

/** The provider's word on an authorisation, in our terms. */
export interface AuthorisationReport {
  providerAuthorisationId: string;
  /** Our status for it (the provider's words are the same). */
  status: PermitStatus;
  /** The largest charge it allows, when the provider says. */
  maxAmount: number | null;
  /** The environment it says the authorisation lives in. */
  environment: Environment;
  /** How the customer will pay, in the provider's channel name. */
  paymentMethod: string | null;
}

/** A charge against an authorisation: `chargeId` makes it idempotent (the same id never charges twice). */
export interface AuthorisationChargeRequest {
  authorisation: AuthorisationRef;
  chargeId: string;
  /** The payment that records the charge. */
  paymentId: string;
  amount: number;
  description: string;
  customData?: CustomData | null;
}

/** What the provider answered a charge: a payment of its own (followed with `readPayment`), or a refusal (nothing charged). */
export type AuthorisationChargeResult =
  | { outcome: "answered"; providerPaymentId: string; providerStatus: string; state: "pending" | "succeeded" | "failed"; failReason: string | null }
  | {
      outcome: "refused";
      /** Our reason: the authorisation is not active there, the amount is above its maximum, or another refusal. */
      reason: "permit_not_active" | "amount_exceeds_permit" | "provider_refused";
      failure: ProviderCallError;
    };

/**
 * What a provider with `capabilities.recurring` does with standing authorisations. Each call is made on the
 * account version the authorisation was made with; every method throws `NotConfiguredError` (424) when
 * that version's credentials are gone.
 */
export interface RecurringAuthorisations<Context extends ProviderContext = ProviderContext> {
  /** Reads the authorisation. @throws {ProviderCallError} (a refusal too: the provider does not know it). */
  read(context: Context, authorisation: AuthorisationRef): Promise<AuthorisationReport>;
  /** Charges it. @throws {ProviderCallError} when the outcome is unknown (sent, no answer): send it again under the same `chargeId`. */
  charge(context: Context, request: AuthorisationChargeRequest): Promise<AuthorisationChargeResult>;
  /**
   * Revokes it: `revoked`, or `ended` when the provider will not revoke it because it ended there already
   * (read it to learn how; `failure` is its refusal).
   *
   * @throws {ProviderCallError} for any other failure.
   */
  revoke(context: Context, authorisation: AuthorisationRef): Promise<{ outcome: "revoked" } | { outcome: "ended"; failure: ProviderCallError }>;
}

/**
 * A notification's signature, checked against an account version's secret. The signature travels opaque
 * (`unknown`, as the notification carried it); only a digest of it is ever kept (orphans, known signers).
 */
export interface NotificationSignatures<Context extends ProviderContext = ProviderContext> {
  /** Is `signature` this account version's? Constant time; false when the account or its secret is gone. */
  verify(context: Context, signature: unknown, account: AccountVersion): Promise<boolean>;
  /** A digest of `signature` that may be stored and compared; null when there is none. */
  digest(signature: unknown): string | null;
  /** Is a kept digest this account version's signature? `null` when the account version or its secret is gone (nothing to tell). */
  verifyDigest(context: Context, digest: string | null, account: AccountVersion): Promise<boolean | null>;
}

/** The providers a gateway runs with (`registry.ts` builds it; `Deps.providers`). */
export interface ProviderRegistry {
  /** The provider of that name. @throws {Error} when the gateway runs no such provider (a programming error). */
  get(name: ProviderName): PaymentProvider;
  /** The provider of that name, or undefined. */
  find(name: string): PaymentProvider | undefined;
  /** Every provider, in registration order. */
  readonly all: readonly PaymentProvider[];
  /** Every provider's inbound routes. */
  readonly inbound: readonly InboundRoute[];
}
