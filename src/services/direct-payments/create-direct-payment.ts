/**
 * `POST /providerA/direct-payment` (spec endpoint 1, contract §4): record the payment, then the three
 * provider A calls — create (our `pay_` id as `Idempotency-Key`, `merchant_reference` and in
 * `custom_metadata`), token, USSD push — then schedule its sync. Failures as contract §4 says:
 *
 * | what happened                                            | answer                    | record                    |
 * |----------------------------------------------------------|---------------------------|---------------------------|
 * | the provider refused (4xx)                               | 422                       | `failed`                  |
 * | the connection was refused before anything was sent      | 502                       | `failed`                  |
 * | 5xx / timeout on create or push (it may have acted)      | 502/504 naming `paymentId`| `pending`, outcomeUnknown |
 * | 5xx / timeout on the token call (no push was sent)       | 502/504                   | `failed`                  |
 *
 * Only the answer that names the payment is replayed to a retry with the same `Idempotency-Key`: the
 * others left nothing that could still charge, so the retry runs again (services/idempotency).
 *
 * The merchant's `callback_url` is ours to call: it is stored, never sent to provider A.
 */
import type { Insertable } from "kysely";
import type { Environment } from "../../config.ts";
import { precompile } from "../../db/precompiled.ts";
import type { PaymentCustomer, PaymentsTable, Provider } from "../../db/schema.ts";
import { ProviderError, ValidationError } from "../../errors.ts";
import { CollectionError, type PaymentProvider, type ProviderCallError } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import { validateTargetUrl } from "../webhooks/url-safety.ts";
import { applyDirectPaymentUpdate } from "./apply-update.ts";
import { scheduleFirstSync } from "./first-sync.ts";
import { CALLING_CODES, type PaymentMethod } from "./payment-methods.ts";
import { syncWaitMs } from "./sync-jobs.ts";

/** Spec 2.1, as validated by the router's schema. */
export interface DirectPaymentInput {
  description: string;
  amount: number;
  payment_method: PaymentMethod;
  phone_number: { number: string; country: string };
  firstname?: string;
  lastname?: string;
  email?: string;
  callback_url?: string;
}

/** Spec 2.2, plus our `paymentId`. */
export interface DirectPaymentAnswer {
  ok: true;
  transactionId: number;
  status: "pending";
  description: string;
  amount: number;
  paymentId: string;
}

/**
 * The rules one field's schema cannot see (contract §4): the operator must serve the phone's country, the
 * number's calling code must match the country, the amount at most `MAX_AMOUNT`, and `callback_url` a
 * URL we may call. Returns the normalised `callback_url`.
 *
 * @throws {ValidationError} with one `<path> <rule>` entry per violation.
 */
export function checkDirectPaymentRules(
  input: DirectPaymentInput,
  policy: { environment: Environment; maxAmount: number; allowPrivateTargets: boolean; provider: PaymentProvider },
): string | undefined {
  const messages: string[] = [];
  const { country, number } = input.phone_number;
  const served = policy.provider.capabilities.methods.find((method) => method.method === input.payment_method)?.country;
  if (served !== country) messages.push(`payment_method ${input.payment_method} is not available for country ${country}`);
  const callingCode = CALLING_CODES[country];
  if (callingCode === undefined) messages.push(`phone_number.country must be one of the following values: ${Object.keys(CALLING_CODES).join(", ")}`);
  else if (!number.startsWith(`+${callingCode}`)) messages.push(`phone_number.number must start with +${callingCode} for country ${country}`);
  if (input.amount > policy.maxAmount) messages.push(`amount must not be greater than ${policy.maxAmount}`);
  let callbackUrl: string | undefined;
  if (input.callback_url !== undefined) {
    try {
      callbackUrl = validateTargetUrl(input.callback_url, {
        field: "callback_url",
        environment: policy.environment,
        allowPrivateTargets: policy.allowPrivateTargets,
      });
    } catch (error) {
      if (error instanceof ValidationError) messages.push(...error.messages);
      else throw error;
    }
  }
  if (messages.length > 0) throw new ValidationError(messages);
  return callbackUrl;
}

type PaymentColumns = Insertable<PaymentsTable>;

/** The new row (precompiled: this runs on every payment). */
const insertDirectPayment = precompile<{
  id: string;
  tenant_id: string;
  environment: Environment;
  provider: Provider;
  provider_account: string;
  credential_version: number | null;
  amount: number;
  currency: PaymentColumns["currency"];
  description: string;
  customer: PaymentCustomer;
  payment_method: string;
  callback_url: string | null;
  created_at: Date;
  updated_at: Date;
  next_sync_at: Date;
}>()((db, p) =>
  db.insertInto("payments").values({
    id: p.id,
    tenant_id: p.tenant_id,
    environment: p.environment,
    provider: p.provider,
    kind: "direct_payment",
    provider_account: p.provider_account,
    credential_version: p.credential_version,
    amount: p.amount,
    currency: p.currency,
    description: p.description,
    customer: p.customer,
    payment_method: p.payment_method,
    callback_url: p.callback_url,
    created_at: p.created_at,
    updated_at: p.updated_at,
    sync_attempt: 0,
    next_sync_at: p.next_sync_at,
  }),
);

/** The provider's id, once the create call answered. */
const storeProviderTransaction = precompile<{
  id: string;
  provider_transaction_id: string;
  reference: string | null;
  provider_status: string;
  updated_at: Date;
}>()((db, p) =>
  db
    .updateTable("payments")
    .set({ provider_transaction_id: p.provider_transaction_id, reference: p.reference, provider_status: p.provider_status, updated_at: p.updated_at })
    .where("id", "=", p.id),
);

/** The payment a failure left in flight at the provider: the error names it, so the caller can follow it. */
interface InFlightPayment {
  paymentId: string;
  transactionId?: number;
}

/**
 * The answer to a failed provider call. With `inFlight` (the push may have reached the phone) the 502/504
 * names the payment, and the same `Idempotency-Key` replays it; without it nothing was left that could
 * still charge, so the answer names nothing and a retry may run again.
 */
function failureAnswer(error: ProviderCallError, inFlight: InFlightPayment | undefined): ProviderError {
  if (error.kind === "refused") return new ProviderError(422, error.message, { providerErrors: error.providerErrors });
  if (error.kind === "unreachable") return new ProviderError(502, "Provider A could not be reached; nothing was sent");
  const status = error.kind === "timeout" ? 504 : 502;
  const what = error.kind === "timeout" ? "Provider A did not answer in time" : "Provider A failed to answer";
  if (!inFlight) return new ProviderError(status, `${what} before the USSD push was sent; the payment failed and nothing was sent to the phone`);
  return new ProviderError(status, `${what}; the payment's outcome will be settled from the provider: follow it by its paymentId`, inFlight);
}

/**
 * Initiates a direct payment for a tenant in an environment.
 *
 * @example
 * ```ts
 * const answer = await createDirectPayment(deps, { tenantId, environment: "sandbox", input });
 * answer.transactionId; // provider A's integer id
 * ```
 * @throws {ValidationError} for the cross-field rules; {@link ProviderError} per the table above;
 *   `NotConfiguredError` (424) when no provider A account serves the environment.
 */
export async function createDirectPayment(
  deps: Deps,
  request: { tenantId: string; environment: Environment; input: DirectPaymentInput },
): Promise<DirectPaymentAnswer> {
  const { tenantId, environment, input } = request;
  const provider = deps.providers.get("providerA");
  const callbackUrl = checkDirectPaymentRules(input, {
    environment,
    maxAmount: deps.config.maxAmount,
    allowPrivateTargets: deps.config.allowPrivateTargets,
    provider,
  });
  const account = await provider.accountFor(deps, tenantId, environment);
  const country = input.phone_number.country;
  const currency = provider.capabilities.methods.find((method) => method.method === input.payment_method)!.currency;
  const paymentId = newId("pay");
  const now = deps.now();
  const firstSyncAt = new Date(now.getTime() + syncWaitMs(0));
  const named = {
    ...(input.firstname !== undefined && { firstname: input.firstname }),
    ...(input.lastname !== undefined && { lastname: input.lastname }),
    ...(input.email !== undefined && { email: input.email }),
  };
  await insertDirectPayment(deps.db, {
    id: paymentId,
    tenant_id: tenantId,
    environment,
    provider: provider.name as Provider,
    provider_account: account.accountId,
    credential_version: account.credentialVersion,
    amount: input.amount,
    currency,
    description: input.description,
    customer: { ...named, phone: input.phone_number.number, country },
    payment_method: input.payment_method,
    callback_url: callbackUrl ?? null,
    created_at: now,
    updated_at: now,
    next_sync_at: firstSyncAt,
  });

  // The first sync run is scheduled now: it only needs the row (it finds the transaction by our `pay_` id
  // when the provider id is not stored yet), and on every outcome below the payment needs it or the run
  // finds it final and stops. It is held in this process until due and skipped when the payment is
  // settled here before then (first-sync.ts); the row's `next_sync_at` lets the sweeper cover the rest.
  scheduleFirstSync(deps, paymentId, firstSyncAt);
  try {
    const started = await provider.startCollection(deps, {
      kind: "ussd_push",
      paymentId,
      tenantId,
      environment,
      account,
      amount: input.amount,
      currency,
      description: input.description,
      method: input.payment_method,
      phone: { number: input.phone_number.number, country },
      customer: named,
      // The provider's id is stored before the phone is prompted: a failed store stops the payment there.
      recorded: (collection) =>
        storeProviderTransaction(deps.db, {
          id: paymentId,
          provider_transaction_id: collection.providerPaymentId,
          reference: collection.reference,
          provider_status: collection.providerStatus,
          updated_at: deps.now(),
        }),
    });
    const transactionId = Number(started.providerPaymentId);
    return { ok: true, transactionId, status: "pending", description: input.description, amount: input.amount, paymentId };
  } catch (collectionError) {
    if (!(collectionError instanceof CollectionError)) throw collectionError;
    const error = collectionError.failure;
    let inFlight: InFlightPayment | undefined;
    if (collectionError.mayHaveActed) {
      const started = collectionError.started;
      inFlight = started === undefined ? { paymentId } : { paymentId, transactionId: Number(started.providerPaymentId) };
      // Only while pending: a webhook may already have settled it from the provider's side.
      await deps.db
        .updateTable("payments")
        .set({ outcome_unknown: true, updated_at: deps.now() })
        .where("id", "=", paymentId)
        .where("state", "=", "pending")
        .execute();
      deps.logger.warn({ paymentId, step: collectionError.step, kind: error.kind, status: error.status }, "provider A outcome unknown: left pending for the sync job");
    } else {
      await applyDirectPaymentUpdate(deps, paymentId, {
        kind: "failed",
        failureCode: error.kind === "refused" ? "provider_refused" : error.kind === "unreachable" ? "provider_unreachable" : "provider_error",
      });
    }
    throw failureAnswer(error, inFlight);
  }
}
