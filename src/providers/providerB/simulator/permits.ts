/**
 * PERMIT, our protocol in the provider's style (providers.md): standing authorisations the customer grants
 * on a page, then charges against them. A charge is an invoice of its own (so `checkout-invoice/confirm`
 * reads it), settled at once by the sandbox rule or left `pending` by the `pending-next` switch.
 */
import type { SimulatorContext } from "./context.ts";
import { actionsOf, customerOf, DEFAULT_PAYMENT_METHOD, newObjectToken, providerDate, settleInvoice } from "./invoices.ts";
import type { ChargeAnswer, Invoice, MerchantAccount, Mode, Permit, PermitStatus } from "./store.ts";
import { RESPONSE_CODES, type PermitChargeBody, type PermitCreateBody } from "./wire.ts";

/** Sandbox rule: a charge up to this amount completes at once, a larger one fails. */
export const SANDBOX_CHARGE_LIMIT = 50_000;

/** Records a new `pending` permit from a validated create body. */
export function createPermit(sim: SimulatorContext, input: { account: MerchantAccount; mode: Mode; baseUrl: string; body: PermitCreateBody }): Permit {
  const { body } = input;
  const permit: Permit = {
    token: newObjectToken(sim.store.permits, input.mode, "pmt_"),
    mode: input.mode,
    account: input.account,
    baseUrl: input.baseUrl,
    description: body.description,
    maxAmount: body.max_amount ?? null,
    customer: customerOf(body.customer),
    customData: body.custom_data ?? {},
    actions: actionsOf(body.actions),
    status: "pending",
    paymentMethod: null,
    chargeSwitch: "by-amount",
    createdAt: sim.now(),
    authorizedAt: null,
  };
  sim.store.permits.set(permit.token, permit);
  return permit;
}

/** The authorisation page: `<base>/permit/authorize/<token>`. */
export function permitPageUrl(permit: Permit): string {
  return `${permit.baseUrl}/permit/authorize/${permit.token}`;
}

/** The permit owned by `account` in `mode`, or undefined. */
export function findPermit(sim: SimulatorContext, token: string, owner?: { account: MerchantAccount; mode: Mode }): Permit | undefined {
  const permit = sim.store.permits.get(token);
  if (!permit || (owner && (permit.account !== owner.account || permit.mode !== owner.mode))) return undefined;
  return permit;
}

/** The permit confirm answer; a permit IPN's `data` is the same object (`data[permit][token]`, `data[status]`). */
export function permitConfirmation(permit: Permit): Record<string, unknown> {
  return {
    response_code: RESPONSE_CODES.success,
    response_text: "Permit Found",
    hash: permit.account.hash,
    permit: {
      token: permit.token,
      description: permit.description,
      max_amount: permit.maxAmount,
      created_at: providerDate(permit.createdAt),
      authorized_at: permit.authorizedAt ? providerDate(permit.authorizedAt) : null,
    },
    status: permit.status,
    max_amount: permit.maxAmount,
    customer: { ...permit.customer, payment_method: permit.paymentMethod },
    custom_data: permit.customData,
    actions: permit.actions,
    mode: permit.mode,
  };
}

export type PermitTransition = "authorize" | "decline" | "revoke" | "expire";

const TRANSITIONS: Record<PermitTransition, { from: readonly PermitStatus[]; to: PermitStatus }> = {
  authorize: { from: ["pending"], to: "active" },
  decline: { from: ["pending"], to: "declined" },
  revoke: { from: ["pending", "active"], to: "revoked" },
  expire: { from: ["pending", "active"], to: "expired" },
};

/**
 * Applies a state change and sends the permit IPN. Asking for the state the permit is already in changes
 * nothing and sends nothing (`changed: false`); any other move outside the table is refused.
 */
export function transitionPermit(
  sim: SimulatorContext,
  permit: Permit,
  transition: PermitTransition,
  details: { paymentMethod?: string | null } = {},
): { ok: true; changed: boolean } | { ok: false; reason: string } {
  const rule = TRANSITIONS[transition];
  if (permit.status === rule.to) return { ok: true, changed: false };
  if (!rule.from.includes(permit.status)) return { ok: false, reason: `The permit is ${permit.status}; it cannot be ${rule.to} now.` };
  permit.status = rule.to;
  if (rule.to === "active") {
    permit.authorizedAt = sim.now();
    permit.paymentMethod = details.paymentMethod || DEFAULT_PAYMENT_METHOD;
  }
  if (permit.actions.callback_url) sim.ipn.send(permit.actions.callback_url, permitConfirmation(permit), { token: permit.token, status: permit.status });
  return { ok: true, changed: true };
}

type ChargeResult = { answer: ChargeAnswer; refused?: undefined } | { answer?: undefined; refused: { status: number; code: string; text: string } };

/**
 * Charges a permit. The same idempotency key (per account and mode) answers its first result again
 * without charging; a refusal (unknown permit, not active, over `max_amount`) charges nothing and is not
 * remembered under the key.
 */
export function chargePermit(sim: SimulatorContext, input: { account: MerchantAccount; mode: Mode; body: PermitChargeBody }): ChargeResult {
  const { account, mode, body } = input;
  const replayKey = body.idempotency_key ? `${account.masterKey} ${mode} ${body.idempotency_key}` : undefined;
  const earlier = replayKey ? sim.store.charges.get(replayKey) : undefined;
  if (earlier) return { answer: earlier };

  const permit = findPermit(sim, body.permit_token, { account, mode });
  if (!permit) return { refused: { status: 404, code: RESPONSE_CODES.notFound, text: "Permit Not Found" } };
  if (permit.status !== "active")
    return { refused: { status: 409, code: RESPONSE_CODES.permitNotActive, text: `Permit is not active (status: ${permit.status})` } };
  if (permit.maxAmount !== null && body.amount > permit.maxAmount)
    return { refused: { status: 422, code: RESPONSE_CODES.amountExceedsPermit, text: `Amount exceeds the permit's max_amount (${permit.maxAmount})` } };

  const invoice: Invoice = {
    token: newObjectToken(sim.store.invoices, mode),
    mode,
    account,
    baseUrl: permit.baseUrl,
    totalAmount: body.amount,
    description: body.description ?? permit.description,
    items: {},
    taxes: {},
    storeName: "",
    customData: body.custom_data ?? {},
    actions: { ...permit.actions },
    customer: { ...permit.customer },
    status: "pending",
    failReason: null,
    paymentMethod: permit.paymentMethod,
    receiptIdentifier: null,
    providerReference: null,
    createdAt: sim.now(),
    permitToken: permit.token,
  };
  sim.store.invoices.set(invoice.token, invoice);

  // A `pending` charge stays so, without an IPN, until `/_sim/invoices/<invoice_token>/pay` or `…/fail`.
  if (permit.chargeSwitch === "fail") settleInvoice(sim, invoice, "failed", { failReason: "insufficient_funds" });
  else if (permit.chargeSwitch === "by-amount" && body.amount > SANDBOX_CHARGE_LIMIT)
    settleInvoice(sim, invoice, "failed", { failReason: "amount_limit_exceeded" });
  else if (permit.chargeSwitch === "by-amount") settleInvoice(sim, invoice, "completed");

  const answer: ChargeAnswer = {
    response_code: RESPONSE_CODES.success,
    response_text: { completed: "Charge Completed", failed: "Charge Failed", pending: "Charge Pending" }[invoice.status as ChargeAnswer["status"]],
    invoice_token: invoice.token,
    permit_token: permit.token,
    amount: body.amount,
    status: invoice.status as ChargeAnswer["status"],
    fail_reason: invoice.failReason,
  };
  if (replayKey) sim.store.charges.set(replayKey, answer);
  return { answer };
}
