/**
 * Collecting by a push to the customer's phone (a USSD prompt or an app notification), whatever provider
 * carries it: record the payment, schedule its first sync, ask the provider through the port
 * (`startCollection`), and answer its failures as contract §4 says:
 *
 * | what happened                                            | answer                    | record                    |
 * |----------------------------------------------------------|---------------------------|---------------------------|
 * | the provider refused (4xx)                               | 422                       | `failed`                  |
 * | the connection was refused before anything was sent      | 502                       | `failed`                  |
 * | 5xx / timeout on a step that may have reached the phone  | 502/504 naming `paymentId`| `pending`, outcomeUnknown |
 * | 5xx / timeout on a step that cannot have (no push sent)  | 502/504                   | `failed`                  |
 *
 * Only the answer that names the payment is replayed to a retry with the same `Idempotency-Key`: the
 * others left nothing that could still charge, so the retry runs again (services/idempotency).
 *
 * The merchant's `callback_url` is ours to call: it is stored, never sent to the provider.
 *
 * @module
 */
import type { Insertable } from "kysely";
import type { Environment } from "../../config.ts";
import { precompile } from "../../db/precompiled.ts";
import type { PaymentCustomer, PaymentsTable, Provider } from "../../db/schema.ts";
import { ProviderError, UnavailableError } from "../../errors.ts";
import { CollectionError, type PaymentMethodCapability, type PaymentProvider, type ProviderCallError } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import { KeyedPaymentExists, type PaymentKey, paymentByKey, paymentKeyColumns } from "../payments/payment-key.ts";
import { recordDifference } from "../reports/differences.ts";
import { applyDirectPaymentUpdate } from "./apply-update.ts";

type PaymentColumns = Insertable<PaymentsTable>;

/**
 * The new row of the spec's endpoint (precompiled: this runs on every payment); `POST /payments` writes its own
 * with its attempt. Nothing is written when its `Idempotency-Key` names a payment already (no row returned).
 */
export const insertDirectPayment = precompile<{
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
  idempotency_key: string | null;
  idempotency_path: string | null;
  idempotency_hash: string | null;
  created_at: Date;
  updated_at: Date;
}>()((db, p) =>
  db
    .insertInto("payments")
    .values({
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
      idempotency_key: p.idempotency_key,
      idempotency_path: p.idempotency_path,
      idempotency_hash: p.idempotency_hash,
      created_at: p.created_at,
      updated_at: p.updated_at,
    })
    .onConflict((oc) => oc.columns(["tenant_id", "environment", "idempotency_path", "idempotency_key"]).where("idempotency_key", "is not", null).doNothing())
    .returning("id"),
);

/** The provider's id, once the create call answered. */
export const storeProviderTransaction = precompile<{
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

/** Whether `error` is the database refusing a second payment with the same provider id (`payments_provider_transaction_key`). */
function isProviderIdTaken(error: unknown): boolean {
  const e = error as { code?: unknown; constraint?: unknown; constraint_name?: unknown; message?: unknown } | null;
  if (e?.code !== "23505") return false;
  const constraint = e.constraint_name ?? e.constraint ?? e.message;
  return typeof constraint === "string" && constraint.includes("payments_provider_transaction_key");
}

/**
 * Stores the provider's id of a payment it just created (the `recorded` step of a collection, before the
 * phone is prompted). An id that already names another payment of the same account is the provider's fault
 * (issue 25: a provider, or a simulator, that hands an id out twice), never a 500: the payment fails before
 * anything is sent to the phone, the error is logged, the payment is kept as a reconciliation difference
 * (ours `failed`, the provider's `pending` under an id that is another payment's), and the answer is a 502
 * naming it.
 *
 * `store` writes the id instead of {@link storeProviderTransaction} (`POST /payments` writes its attempt's with
 * it, in one statement); it must write `payments.provider_transaction_id` in one statement, so that a taken
 * id fails it whole.
 *
 * @throws {ProviderError} 502 with `paymentId` when the id is taken.
 */
export async function recordProviderTransaction(
  deps: Deps,
  payment: { id: string; provider: PaymentProvider },
  collected: { providerPaymentId: string; reference: string | null; providerStatus: string },
  store?: () => Promise<unknown>,
): Promise<void> {
  try {
    if (store) await store();
    else
      await storeProviderTransaction(deps.db, {
        id: payment.id,
        provider_transaction_id: collected.providerPaymentId,
        reference: collected.reference,
        provider_status: collected.providerStatus,
        updated_at: deps.now(),
      });
    return;
  } catch (error) {
    if (!isProviderIdTaken(error)) throw error;
  }
  const row = await deps.db.selectFrom("payments").selectAll().where("id", "=", payment.id).executeTakeFirstOrThrow();
  const holder = await deps.db
    .selectFrom("payments")
    .select("id")
    .where("environment", "=", row.environment)
    .where("provider", "=", row.provider)
    .where("provider_account", "=", row.provider_account)
    .where("provider_transaction_id", "=", collected.providerPaymentId)
    .executeTakeFirst();
  const label = payment.provider.label;
  deps.logger.error(
    {
      alert: "provider_id_reused",
      paymentId: payment.id,
      provider: payment.provider.name,
      providerTransactionId: collected.providerPaymentId,
      holder: holder?.id,
    },
    "the provider answered an id that already names another payment: the payment failed before the phone was prompted",
  );
  await applyDirectPaymentUpdate(deps, payment.id, { kind: "failed", failureCode: "provider_error" });
  await recordDifference(deps.db, deps.now(), {
    subjectId: row.id,
    subjectKind: "payment",
    tenantId: row.tenant_id,
    environment: row.environment,
    provider: row.provider,
    ourState: "failed",
    providerState: "pending",
    providerStatus: `${collected.providerStatus}: ${label} gave it id ${collected.providerPaymentId}, which already names ${holder?.id ?? "another payment"}`,
    amount: Number(row.amount),
    currency: row.currency,
  });
  throw new ProviderError(
    502,
    `${label} answered with a transaction id (${collected.providerPaymentId}) that already names another payment; the payment failed and nothing was sent to the phone`,
    { paymentId: payment.id },
  );
}

/** The payment a failure left in flight at the provider: the error names it, so the caller can follow it. */
export interface InFlightPayment {
  paymentId: string;
  transactionId?: number;
}

/**
 * The answer to a failed provider call. With `inFlight` (the push may have reached the phone) the 502/504
 * names the payment, and the same `Idempotency-Key` replays it; without it nothing was left that could
 * still charge, so the answer names nothing and a retry may run again.
 */
export function failureAnswer(label: string, error: ProviderCallError, inFlight: InFlightPayment | undefined): ProviderError {
  if (error.kind === "refused") return new ProviderError(422, error.message, { providerErrors: error.providerErrors });
  if (error.kind === "unreachable") return new ProviderError(502, `${label} could not be reached; nothing was sent`);
  const status = error.kind === "timeout" ? 504 : 502;
  const what = error.kind === "timeout" ? `${label} did not answer in time` : `${label} failed to answer`;
  if (!inFlight) return new ProviderError(status, `${what} before the USSD push was sent; the payment failed and nothing was sent to the phone`);
  return new ProviderError(status, `${what}; the payment's outcome will be settled from the provider: follow it by its paymentId`, inFlight);
}

/** A push collection to start: who, where, how much, by which provider and method. */
export interface PushCollection {
  tenantId: string;
  environment: Environment;
  provider: PaymentProvider;
  /** The provider's capability the payment uses (its method, country and currency). */
  method: PaymentMethodCapability;
  amount: number;
  description: string;
  phone: { number: string; country: string };
  customer: { firstname?: string; lastname?: string; email?: string };
  /** Already checked (`validateTargetUrl`). */
  callbackUrl: string | undefined;
  /** The request's `Idempotency-Key`: the payment's own, one payment per key ({@link KeyedPaymentExists} when taken). */
  idempotency?: PaymentKey;
}

/** A started push collection: our id and the provider's. */
export interface PushStarted {
  paymentId: string;
  providerPaymentId: string;
}

/**
 * Records and starts a push collection.
 *
 * @example
 * ```ts
 * const { paymentId } = await collectByPush(deps, { tenantId, environment, provider, method, amount: 500, … });
 * ```
 * @throws {ProviderError} per the table above; `NotConfiguredError` (424) when the provider has no account there;
 *   {@link KeyedPaymentExists} when the `Idempotency-Key` names a payment already (nothing written, nothing sent),
 *   422 `idempotency_mismatch` when that payment was asked with another body, 503 when it was let go meanwhile.
 */
export async function collectByPush(deps: Deps, collection: PushCollection): Promise<PushStarted> {
  const { tenantId, environment, provider, method } = collection;
  const account = await provider.accountFor(deps, tenantId, environment);
  const paymentId = newId("pay");
  const now = deps.now();
  const { rows: inserted } = await insertDirectPayment(deps.db, {
    id: paymentId,
    tenant_id: tenantId,
    environment,
    provider: provider.name,
    provider_account: account.accountId,
    credential_version: account.credentialVersion,
    amount: collection.amount,
    currency: method.currency,
    description: collection.description,
    customer: { ...collection.customer, phone: collection.phone.number, country: collection.phone.country },
    payment_method: method.method,
    callback_url: collection.callbackUrl ?? null,
    ...paymentKeyColumns(collection.idempotency),
    created_at: now,
    updated_at: now,
  });
  if (inserted.length === 0) {
    // The key's payment, made by an earlier run of this request: answered as it stands, never pushed again.
    const made = await paymentByKey(deps, collection, collection.idempotency!);
    if (made) throw new KeyedPaymentExists(made);
    throw new UnavailableError("The payment this Idempotency-Key named failed and let it go meanwhile; nothing was sent: try again");
  }

  // The sync chain starts now: it only needs the row (the provider finds the payment by our `pay_` id when
  // its own id is not stored yet), and on every outcome below the payment needs it or the step finds it
  // final and stops. Its first step is held in this gateway until due and skipped when the payment is
  // settled here before then (first-sync.ts); the sweeper re-creates a chain lost with a stopped process.
  deps.syncHold.hold(deps, { id: paymentId, provider: provider.name, createdAt: now });
  try {
    const started = await provider.startCollection(deps, {
      kind: "ussd_push",
      paymentId,
      tenantId,
      environment,
      account,
      amount: collection.amount,
      currency: method.currency,
      description: collection.description,
      method: method.method,
      phone: collection.phone,
      customer: collection.customer,
      // The provider's id is stored before the phone is prompted: a failed store stops the payment there.
      recorded: (collected) => recordProviderTransaction(deps, { id: paymentId, provider }, collected),
    });
    return { paymentId, providerPaymentId: started.providerPaymentId };
  } catch (collectionError) {
    if (!(collectionError instanceof CollectionError)) throw collectionError;
    throw await settleFailedCollection(deps, paymentId, provider, collectionError);
  }
}

/**
 * What a failed collection leaves (the table above): pending with `outcomeUnknown` when the failed step may
 * have reached the phone, `failed` otherwise. Answers the error to throw.
 */
export async function settleFailedCollection(
  deps: Deps,
  paymentId: string,
  provider: PaymentProvider,
  collectionError: CollectionError,
): Promise<ProviderError> {
  const error = collectionError.failure;
  let inFlight: InFlightPayment | undefined;
  if (collectionError.mayHaveActed) {
    const providerId = collectionError.started?.providerPaymentId;
    inFlight = providerId !== undefined && /^\d+$/.test(providerId) ? { paymentId, transactionId: Number(providerId) } : { paymentId };
    // Only while pending: a webhook may already have settled it from the provider's side.
    await deps.db
      .updateTable("payments")
      .set({ outcome_unknown: true, updated_at: deps.now() })
      .where("id", "=", paymentId)
      .where("state", "=", "pending")
      .execute();
    deps.logger.warn(
      { paymentId, provider: provider.name, step: collectionError.step, kind: error.kind, status: error.status },
      "provider outcome unknown: left pending for the sync job",
    );
  } else {
    await applyDirectPaymentUpdate(deps, paymentId, {
      kind: "failed",
      failureCode: error.kind === "refused" ? "provider_refused" : error.kind === "unreachable" ? "provider_unreachable" : "provider_error",
    });
  }
  return failureAnswer(provider.label, error, inFlight);
}
