/**
 * `POST /providerB/checkout` (spec 2.3–2.4, contract §5): a hosted checkout invoice at provider B, made
 * with the tenant's active credentials of the caller's environment, recorded as a `pending` checkout
 * payment keyed by the invoice token, with the credential version (its IPNs are verified and its
 * confirms made with that version).
 */
import type { Environment } from "../../config.ts";
import { precompile } from "../../db/precompiled.ts";
import type { CustomData, PaymentCustomer } from "../../db/schema.ts";
import { NotFoundError, ValidationError } from "../../errors.ts";
import { CollectionError } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
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
 * an orphan): the orphan check reads the table as it was before the insert, which is all it needs.
 * Precompiled: it runs on every checkout.
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
          created_at: p.created_at,
          updated_at: p.created_at,
        })
        .returning("id"),
    )
    .selectFrom("ipn_messages")
    .select("id")
    .where("state", "=", "orphan")
    .where("subject", "=", "checkout")
    .where("token", "=", p.token)
    .limit(1),
);

const storeNameOf = precompile<{ id: string }>()((db, p) => db.selectFrom("tenants").select("store_name").where("id", "=", p.id));

function raise(error: Error): never {
  throw error;
}

/**
 * Creates the invoice, records the payment, starts its sync schedule.
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
): Promise<CheckoutAnswer> {
  if (input.amount > deps.config.maxAmount) throw new ValidationError([`amount must not be greater than ${deps.config.maxAmount}`]);
  const provider = checkoutProviderOf(deps);
  const account = await provider.accountFor(deps, scope.tenantId, scope.environment);
  const storeName = scope.storeName ?? (await storeNameOf(deps.db, { id: scope.tenantId })).rows[0]?.store_name ?? raise(new NotFoundError("Tenant not found"));
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
  const { rows: orphans } = await insertCheckout(deps.db, {
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
    created_at: now,
  });
  await CHECKOUT_SYNC.enqueue(deps, { subjectId: paymentId, provider: provider.name, createdAt: now, step: 0 });
  // An IPN may have outrun our insert: pick it up now rather than at the next sweep.
  if (orphans.length > 0) await rematchOrphans(deps, { token }).catch((err) => deps.logger.warn({ err, paymentId }, "could not re-match orphan IPNs"));
  return { response_code: CREATED_CODE, response_text: created.redirectUrl!, token, paymentId };
}
