/**
 * `POST /providerB/checkout` (spec 2.3–2.4, contract §5): a hosted checkout invoice at provider B, made
 * with the tenant's active credentials of the caller's environment, recorded as a `pending` checkout
 * payment keyed by the invoice token, with the credential version (its IPNs are verified and its
 * confirms made with that version) and the invoice page as what the customer does next (`open_url`).
 *
 * With an `Idempotency-Key` the payment keeps it (`payments/payment-key.ts`): the tenant's store name is read
 * with the key's payment, if any (one statement, as before), and a run that finds it (an earlier run whose answer
 * was not stored) answers it — its token and invoice page — without creating another invoice at provider B. Two
 * runs at once that both find none (possible only once the key's lock was taken over) both create an invoice; the
 * one recorded second answers the first's payment, and its own invoice, never shown to anyone, is left unpaid.
 * A run killed between provider B's answer and the insert left no row: its retry creates another invoice, the
 * first one never shown to anyone either.
 */
import type { Environment } from "../../config.ts";
import { precompile } from "../../db/precompiled.ts";
import type { CustomData, NextAction, Payment, PaymentCustomer } from "../../db/schema.ts";
import { NotFoundError, UnavailableError, ValidationError } from "../../errors.ts";
import { CollectionError } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import { assertSameRequest, type PaymentKey, paymentByKey, paymentKeyOf, type RequestKey } from "../payments/payment-key.ts";
import { rematchOrphans } from "../ipn/orphans.ts";
import type { CheckoutInput } from "./checkout-request.ts";
import { CHECKOUT_SYNC } from "./checkout-sync.ts";
import { checkoutProviderOf, providerFailure } from "./checkout-provider.ts";

/** The `response_code` of the answer (the contract's answer keeps provider B's success code). */
const CREATED_CODE = "00";

export interface CheckoutAnswer {
  response_code: string;
  response_text: string;
  token: string;
  paymentId: string;
}

/**
 * The pending checkout's row, and in the same round trip whether an IPN for its token outran it (kept as
 * an orphan): the orphan check reads the table as it was before the insert, which is all it needs. No row
 * when its `Idempotency-Key` names a payment already (nothing written). Precompiled: it runs on every checkout.
 */
const insertCheckout = precompile<{
  id: string;
  provider: string;
  tenant_id: string;
  environment: Environment;
  provider_account: string;
  token: string;
  amount: number;
  description: string;
  customer: PaymentCustomer;
  custom_data: CustomData | null;
  merchant_reference: string | null;
  credential_version: number;
  next_action: NextAction;
  idempotency_key: string | null;
  idempotency_path: string | null;
  idempotency_hash: string | null;
  created_at: Date;
}>()((db, p) =>
  db
    .with("inserted", (w) =>
      w
        .insertInto("payments")
        .values({
          id: p.id,
          tenant_id: p.tenant_id,
          environment: p.environment,
          provider: p.provider,
          kind: "checkout",
          provider_account: p.provider_account,
          provider_transaction_id: p.token,
          provider_status: "pending",
          state: "pending",
          amount: p.amount,
          currency: "XOF",
          description: p.description,
          customer: p.customer,
          custom_data: p.custom_data,
          merchant_reference: p.merchant_reference,
          credential_version: p.credential_version,
          next_action: p.next_action,
          idempotency_key: p.idempotency_key,
          idempotency_path: p.idempotency_path,
          idempotency_hash: p.idempotency_hash,
          created_at: p.created_at,
          updated_at: p.created_at,
        })
        .onConflict((oc) =>
          oc.columns(["tenant_id", "environment", "idempotency_path", "idempotency_key"]).where("idempotency_key", "is not", null).doNothing(),
        )
        .returning("id"),
    )
    .selectFrom("inserted")
    .select((eb) => [
      "inserted.id",
      eb
        .exists(
          eb
            .selectFrom("ipn_messages")
            .select("ipn_messages.id")
            .where("ipn_messages.state", "=", "orphan")
            .where("ipn_messages.subject", "=", "checkout")
            .where("ipn_messages.token", "=", p.token),
        )
        .as("orphaned"),
    ]),
);

/**
 * The tenant's store name, and the payment its `Idempotency-Key` names, if any (a null key names none): one
 * statement. Precompiled: it runs on every checkout.
 */
const storeNameAndKeyOf = precompile<{ id: string; environment: Environment; idempotency_path: string | null; idempotency_key: string | null }>()((db, p) =>
  db
    .selectFrom("tenants")
    .leftJoin("payments", (join) =>
      join
        .onRef("payments.tenant_id", "=", "tenants.id")
        .on("payments.environment", "=", p.environment)
        .on("payments.idempotency_path", "=", p.idempotency_path)
        .on("payments.idempotency_key", "=", p.idempotency_key),
    )
    .select(["tenants.store_name", "payments.id as keyed_id", "payments.idempotency_hash", "payments.provider_transaction_id", "payments.next_action"])
    .where("tenants.id", "=", p.id),
);

/** What the customer does next: pay on the invoice's page. */
function invoicePage(url: string): NextAction {
  return { type: "open_url", url, instructions: "Send the customer to this URL to pay the invoice on provider B's page" };
}

/** The answer to a run that found its key's checkout made by an earlier run: that checkout, as it was answered. */
function answerOfKeyedCheckout(payment: Pick<Payment, "id" | "provider_transaction_id" | "next_action">): CheckoutAnswer {
  const page = payment.next_action;
  if (page?.type !== "open_url" || payment.provider_transaction_id === null) throw new Error(`checkout ${payment.id} has no invoice page recorded`);
  return { response_code: CREATED_CODE, response_text: page.url, token: payment.provider_transaction_id, paymentId: payment.id };
}

/**
 * Creates the invoice, records the payment, starts its sync schedule — or, when the `Idempotency-Key` names a
 * checkout already, answers that one (422 `idempotency_mismatch` when it was asked with another body).
 *
 * @example
 * ```ts
 * const answer = await createCheckout(deps, { tenantId, environment: "sandbox" }, input);
 * answer.response_text; // "…/sandbox-checkout/invoice/test_…"
 * ```
 */
export async function createCheckout(
  deps: Deps,
  scope: { tenantId: string; environment: Environment /** The tenant's store name when the caller already has it (saves a read). */; storeName?: string },
  input: CheckoutInput,
  /** The request's `Idempotency-Key` and path: the checkout payment's own. */
  idempotency?: RequestKey,
): Promise<CheckoutAnswer> {
  if (input.amount > deps.config.maxAmount) throw new ValidationError([`amount must not be greater than ${deps.config.maxAmount}`]);
  const provider = checkoutProviderOf(deps);
  const account = await provider.accountFor(deps, scope.tenantId, scope.environment);
  const key = await paymentKeyOf(idempotency, input);
  let storeName = scope.storeName;
  if (storeName === undefined || key) {
    const read = (
      await storeNameAndKeyOf(deps.db, {
        id: scope.tenantId,
        environment: scope.environment,
        idempotency_path: key?.path ?? null,
        idempotency_key: key?.key ?? null,
      })
    ).rows[0];
    if (!read) throw new NotFoundError("Tenant not found");
    storeName ??= read.store_name;
    // The key's checkout, made by an earlier run of this request: answered, never created again at provider B.
    if (key && read.keyed_id !== null) {
      assertSameRequest(read, key);
      return answerOfKeyedCheckout({ id: read.keyed_id, provider_transaction_id: read.provider_transaction_id, next_action: read.next_action });
    }
  }
  const paymentId = newId("pay");
  const customer: PaymentCustomer = { name: input.customer.name };
  if (input.customer.email) customer.email = input.customer.email;
  if (input.customer.phone) customer.phone = input.customer.phone;

  let created: Awaited<ReturnType<typeof provider.startCollection>>;
  try {
    created = await provider.startCollection(deps, {
      kind: "hosted_checkout",
      paymentId,
      tenantId: scope.tenantId,
      environment: scope.environment,
      account,
      amount: input.amount,
      currency: "XOF",
      description: input.description,
      storeName,
      customer: input.customer,
      customData: input.customData,
      channels: input.channels,
      returnUrl: input.returnUrl,
      cancelUrl: input.cancelUrl,
    });
  } catch (error) {
    throw error instanceof CollectionError ? providerFailure(error.failure) : error;
  }
  const token = created.providerPaymentId;

  const now = deps.now();
  const { rows: inserted } = await insertCheckout(deps.db, {
    id: paymentId,
    provider: provider.name,
    tenant_id: scope.tenantId,
    environment: scope.environment,
    provider_account: account.accountId,
    token,
    amount: input.amount,
    description: input.description,
    customer,
    custom_data: input.customData ?? null,
    merchant_reference: input.merchantReference ?? null,
    credential_version: account.credentialVersion!,
    next_action: invoicePage(created.redirectUrl!),
    idempotency_key: key?.key ?? null,
    idempotency_path: key?.path ?? null,
    idempotency_hash: key?.hash ?? null,
    created_at: now,
  });
  if (inserted.length === 0) return answerOfRace(deps, scope, key!, token);
  await CHECKOUT_SYNC.enqueue(deps, { subjectId: paymentId, provider: provider.name, createdAt: now, step: 0 });
  // An IPN may have outrun our insert: pick it up now rather than at the next sweep.
  if (inserted[0]!.orphaned) await rematchOrphans(deps, { token }).catch((err) => deps.logger.warn({ err, paymentId }, "could not re-match orphan IPNs"));
  return { response_code: CREATED_CODE, response_text: created.redirectUrl!, token, paymentId };
}

/**
 * Another run of the same request recorded its checkout first (both found none: the key's lock was taken over):
 * that checkout is the answer; this run's invoice, shown to no one, stays unpaid at provider B.
 */
async function answerOfRace(deps: Deps, scope: { tenantId: string; environment: Environment }, key: PaymentKey, token: string): Promise<CheckoutAnswer> {
  const made = await paymentByKey(deps, scope, key);
  if (!made) throw new UnavailableError("The checkout this Idempotency-Key named was let go meanwhile: try again");
  deps.logger.warn(
    { paymentId: made.id, unusedInvoice: token },
    "two runs of one keyed checkout created two invoices; the second is answered as the first and left unpaid",
  );
  return answerOfKeyedCheckout(made);
}
