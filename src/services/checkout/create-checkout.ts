/**
 * `POST /providerB/checkout` (spec 2.3–2.4, contract §5): a hosted checkout invoice at provider B, made
 * with the tenant's active credentials of the caller's environment, recorded as a `pending` checkout
 * payment keyed by the invoice token, with the credential version (its IPNs are verified and its
 * confirms made with that version).
 */
import type { Environment } from "../../config.ts";
import { precompile } from "../../db/precompiled.ts";
import type { CustomData, PaymentCustomer } from "../../db/schema.ts";
import { NotConfiguredError, NotFoundError, ValidationError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import { rematchOrphans } from "../ipn/orphans.ts";
import { CHECKOUT_SYNC } from "./checkout-sync.ts";
import { openProviderBAccount } from "./provider-b-account.ts";

/** The key under which our payment id travels in the invoice's custom data. */
export const PAYMENT_ID_KEY = "passerelle_payment_id";

export interface CheckoutInput {
  amount: number;
  description: string;
  returnUrl: string;
  cancelUrl: string;
  customer: { name: string; email?: string; phone?: string };
  customData?: CustomData;
  channels?: string[];
}

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
  tenant_id: string;
  environment: Environment;
  provider_account: string;
  token: string;
  amount: number;
  description: string;
  customer: PaymentCustomer;
  custom_data: CustomData | null;
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
          provider: "providerB",
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
  const account = await openProviderBAccount(deps, scope);
  if (!account) throw new NotConfiguredError(`The tenant has no provider B credentials for the ${scope.environment} environment`);
  const storeName = scope.storeName ?? (await storeNameOf(deps.db, { id: scope.tenantId })).rows[0]?.store_name ?? raise(new NotFoundError("Tenant not found"));
  const paymentId = newId("pay");
  const customer: PaymentCustomer = { name: input.customer.name };
  if (input.customer.email) customer.email = input.customer.email;
  if (input.customer.phone) customer.phone = input.customer.phone;

  const created = await account.client.createCheckoutInvoice({
    invoice: {
      total_amount: input.amount,
      description: input.description,
      customer: {
        name: input.customer.name,
        ...(input.customer.email ? { email: input.customer.email } : {}),
        ...(input.customer.phone ? { phone: input.customer.phone } : {}),
      },
      items: { item_0: { name: input.description, quantity: 1, unit_price: input.amount, total_price: input.amount } },
      ...(input.channels?.length ? { channels: input.channels } : {}),
    },
    store: { name: storeName },
    custom_data: { ...input.customData, [PAYMENT_ID_KEY]: paymentId },
    actions: { cancel_url: input.cancelUrl, return_url: input.returnUrl, callback_url: `${deps.config.publicBaseUrl}/providerB/webhook` },
  });

  const now = deps.now();
  const { rows: orphans } = await insertCheckout(deps.db, {
    id: paymentId,
    tenant_id: scope.tenantId,
    environment: scope.environment,
    provider_account: account.credentialsId,
    token: created.token,
    amount: input.amount,
    description: input.description,
    customer,
    custom_data: input.customData ?? null,
    credential_version: account.version,
    created_at: now,
  });
  await CHECKOUT_SYNC.enqueue(deps, { subjectId: paymentId, createdAt: now, step: 0 });
  // An IPN may have outrun our insert: pick it up now rather than at the next sweep.
  if (orphans.length > 0)
    await rematchOrphans(deps, { token: created.token }).catch((err) => deps.logger.warn({ err, paymentId }, "could not re-match orphan IPNs"));
  return { response_code: created.response_code, response_text: created.response_text, token: created.token, paymentId };
}
