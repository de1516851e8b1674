/**
 * `POST /providerB/permits` (contract §5): a permit at provider B, made with the tenant's active
 * credentials of the caller's environment, recorded `pending` with the credential version (its IPNs are
 * verified, its confirms and charges made, with that version). The customer authorises it on
 * `authorizationUrl`; the permit IPN (or a confirm) makes it `active`. A `providerB-sync` chain confirms the
 * pending permit on the checkout's schedule, so a lost IPN never leaves an authorised permit pending.
 */
import type { Environment } from "../../config.ts";
import type { PaymentCustomer } from "../../db/schema.ts";
import { ValidationError } from "../../errors.ts";
import { CollectionError } from "../../providers/provider.ts";
import { checkoutProviderOf, providerFailure } from "../checkout/checkout-provider.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import { rematchOrphans } from "../ipn/orphans.ts";
import type { CreatePermitInput } from "./permit-request.ts";
import { PERMIT_SYNC } from "./permit-sync.ts";

export interface CreatedPermit {
  permitId: string;
  status: "pending";
  authorizationUrl: string;
  token: string;
}

/**
 * Creates the permit at provider B and records it.
 *
 * @example
 * ```ts
 * const { permitId, authorizationUrl } = await createPermit(deps, { tenantId, environment: "sandbox" }, input);
 * ```
 */
export async function createPermit(deps: Deps, scope: { tenantId: string; environment: Environment }, input: CreatePermitInput): Promise<CreatedPermit> {
  if (input.maxAmount > deps.config.maxAmount) throw new ValidationError([`maxAmount must not be greater than ${deps.config.maxAmount}`]);
  const provider = checkoutProviderOf(deps);
  const account = await provider.accountFor(deps, scope.tenantId, scope.environment);
  const permitId = newId("prm");
  const customer: PaymentCustomer = { name: input.customer.name, phone: input.customer.phone };
  if (input.customer.email) customer.email = input.customer.email;

  let created: Awaited<ReturnType<typeof provider.startCollection>>;
  try {
    created = await provider.startCollection(deps, {
      kind: "recurring_authorisation",
      authorisationId: permitId,
      tenantId: scope.tenantId,
      environment: scope.environment,
      account,
      maxAmount: input.maxAmount,
      description: input.description,
      customer: input.customer,
      customData: input.customData,
      returnUrl: input.returnUrl,
      cancelUrl: input.cancelUrl,
    });
  } catch (error) {
    throw error instanceof CollectionError ? providerFailure(error.failure) : error;
  }
  const token = created.providerPaymentId;
  const authorizationUrl = created.redirectUrl!;

  const now = deps.now();
  await deps.db
    .insertInto("permits")
    .values({
      id: permitId,
      tenant_id: scope.tenantId,
      environment: scope.environment,
      token,
      provider_account: account.accountId,
      credential_version: account.credentialVersion!,
      status: "pending",
      customer,
      description: input.description,
      max_amount: input.maxAmount,
      currency: "XOF",
      return_url: input.returnUrl,
      cancel_url: input.cancelUrl,
      custom_data: input.customData ?? null,
      authorization_url: authorizationUrl,
      created_at: now,
      updated_at: now,
    })
    .execute();
  // The safety net for a lost IPN (never throws: the sweeper re-creates a chain whose enqueue failed).
  await PERMIT_SYNC.enqueue(deps, { subjectId: permitId, provider: provider.name, createdAt: now, step: 0 });
  // A permit IPN cannot precede the customer's authorisation, but an orphan kept for this token is re-matched.
  await rematchOrphans(deps, { token }).catch((err) => deps.logger.warn({ err, permitId }, "could not re-match orphan IPNs"));
  return { permitId, status: "pending", authorizationUrl, token };
}
