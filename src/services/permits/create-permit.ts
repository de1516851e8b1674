/**
 * `POST /providerB/permits` (contract §5): a permit at provider B, made with the tenant's active
 * credentials of the caller's environment, recorded `pending` with the credential version (its IPNs are
 * verified, its confirms and charges made, with that version). The customer authorises it on
 * `authorizationUrl`; the permit IPN (or a confirm) makes it `active`. A `providerB-sync` chain confirms the
 * pending permit on the checkout's schedule, so a lost IPN never leaves an authorised permit pending.
 */
import type { Environment } from "../../config.ts";
import type { CustomData, PaymentCustomer } from "../../db/schema.ts";
import { NotConfiguredError, ValidationError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import { rematchOrphans } from "../ipn/orphans.ts";
import { openPermitAccount } from "./permit-account.ts";
import { PERMIT_SYNC } from "./permit-sync.ts";

/** The key under which our permit id travels in the permit's custom data at provider B. */
export const PERMIT_ID_KEY = "passerelle_permit_id";

export interface CreatePermitInput {
  customer: { name: string; email?: string; phone: string };
  description: string;
  maxAmount: number;
  returnUrl: string;
  cancelUrl: string;
  customData?: CustomData;
}

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
  const account = await openPermitAccount(deps, scope);
  if (!account) throw new NotConfiguredError(`The tenant has no provider B credentials for the ${scope.environment} environment`);
  const permitId = newId("prm");
  const customer: PaymentCustomer = { name: input.customer.name, phone: input.customer.phone };
  if (input.customer.email) customer.email = input.customer.email;

  const created = await account.permits.createPermit({
    customer: { name: input.customer.name, phone: input.customer.phone, ...(input.customer.email ? { email: input.customer.email } : {}) },
    description: input.description,
    max_amount: input.maxAmount,
    custom_data: { ...input.customData, [PERMIT_ID_KEY]: permitId },
    actions: { return_url: input.returnUrl, cancel_url: input.cancelUrl, callback_url: `${deps.config.publicBaseUrl}/providerB/webhook` },
  });

  const now = deps.now();
  await deps.db
    .insertInto("permits")
    .values({
      id: permitId,
      tenant_id: scope.tenantId,
      environment: scope.environment,
      token: created.token,
      provider_account: account.credentialsId,
      credential_version: account.version,
      status: "pending",
      customer,
      description: input.description,
      max_amount: input.maxAmount,
      currency: "XOF",
      return_url: input.returnUrl,
      cancel_url: input.cancelUrl,
      custom_data: input.customData ?? null,
      authorization_url: created.response_text,
      created_at: now,
      updated_at: now,
    })
    .execute();
  // The safety net for a lost IPN (never throws: the sweeper re-creates a chain whose enqueue failed).
  await PERMIT_SYNC.enqueue(deps, { subjectId: permitId, createdAt: now, step: 0 });
  // A permit IPN cannot precede the customer's authorisation, but an orphan kept for this token is re-matched.
  await rematchOrphans(deps, { token: created.token }).catch((err) => deps.logger.warn({ err, permitId }, "could not re-match orphan IPNs"));
  return { permitId, status: "pending", authorizationUrl: created.response_text, token: created.token };
}
