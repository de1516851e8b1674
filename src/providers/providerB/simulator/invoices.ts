/**
 * Checkout invoices: creating one, what its confirm answer (and IPN) says, and settling it when a button
 * of the hosted page is pressed. No HTTP here beyond the IPN the sender posts.
 */
import type { SimulatorContext } from "./context.ts";
import { countryOfChannel, moveBalance } from "./disburse/balances.ts";
import { randomToken, type Customer, type Invoice, type InvoiceActions, type MerchantAccount, type Mode } from "./store.ts";
import { RESPONSE_CODES, type CheckoutInvoiceCreateBody } from "./wire.ts";

/** Payment methods the sandbox page offers; the first is the default. */
export const SANDBOX_PAYMENT_METHODS = [
  "orange-money-senegal",
  "wave-senegal",
  "free-money-senegal",
  "expresso-senegal",
  "mtn-benin",
  "moov-benin",
  "card",
] as const;

export const DEFAULT_PAYMENT_METHOD = SANDBOX_PAYMENT_METHODS[0];

/** The sandbox's fictitious payer, for what the invoice did not say about its customer. */
const SANDBOX_PAYER: Customer = { name: "Awa Diop", phone: "771234567", email: "awa.diop@example.com" };

/** `test_…` tokens in the sandbox, plain ones in live, as the provider's look. */
export function newObjectToken(taken: Map<string, unknown>, mode: Mode, prefix = ""): string {
  for (;;) {
    const token = `${mode === "test" ? "test_" : ""}${prefix}${randomToken(mode === "test" ? 12 : 20)}`;
    if (!taken.has(token)) return token;
  }
}

export function actionsOf(input: { cancel_url?: string | null; return_url?: string | null; callback_url?: string | null } | null | undefined): InvoiceActions {
  return { cancel_url: input?.cancel_url ?? null, return_url: input?.return_url ?? null, callback_url: input?.callback_url ?? null };
}

export function customerOf(input: { name?: string | null; phone?: string | null; email?: string | null } | null | undefined): Customer {
  return { name: input?.name ?? null, phone: input?.phone ?? null, email: input?.email ?? null };
}

/** Records a new `pending` invoice from a validated create body. */
export function createInvoice(
  sim: SimulatorContext,
  input: { account: MerchantAccount; mode: Mode; baseUrl: string; body: CheckoutInvoiceCreateBody },
): Invoice {
  const { body } = input;
  const invoice: Invoice = {
    token: newObjectToken(sim.store.invoices, input.mode),
    mode: input.mode,
    account: input.account,
    baseUrl: input.baseUrl,
    totalAmount: body.invoice.total_amount,
    description: body.invoice.description ?? "",
    items: body.invoice.items ?? {},
    taxes: body.invoice.taxes ?? {},
    storeName: body.store.name,
    customData: body.custom_data ?? {},
    actions: actionsOf(body.actions),
    customer: customerOf(body.invoice.customer),
    status: "pending",
    failReason: null,
    paymentMethod: null,
    receiptIdentifier: null,
    providerReference: null,
    createdAt: sim.now(),
    permitToken: null,
  };
  sim.store.invoices.set(invoice.token, invoice);
  return invoice;
}

const checkoutPath = (mode: Mode) => (mode === "test" ? "sandbox-checkout" : "checkout");

/** The hosted page: `<base>/sandbox-checkout/invoice/<token>` in the sandbox, `<base>/checkout/invoice/<token>` live. */
export function invoicePageUrl(invoice: Invoice): string {
  return `${invoice.baseUrl}/${checkoutPath(invoice.mode)}/invoice/${invoice.token}`;
}

export function receiptUrl(invoice: Invoice): string {
  return `${invoice.baseUrl}/${checkoutPath(invoice.mode)}/receipt/${invoice.token}`;
}

/** `YYYY-MM-DD HH:MM:SS` in UTC, the provider's date format. */
export function providerDate(date: Date): string {
  return date.toISOString().slice(0, 19).replace("T", " ");
}

/** The invoice owned by `account` in `mode`, or undefined: another account's token is as good as unknown. */
export function findInvoice(sim: SimulatorContext, token: string, owner?: { account: MerchantAccount; mode: Mode }): Invoice | undefined {
  const invoice = sim.store.invoices.get(token);
  if (!invoice || (owner && (invoice.account !== owner.account || invoice.mode !== owner.mode))) return undefined;
  return invoice;
}

/** The confirm answer; the IPN's `data` is the same object. */
export function invoiceConfirmation(invoice: Invoice): Record<string, unknown> {
  const completed = invoice.status === "completed";
  const expires = new Date(invoice.createdAt.getTime() + 24 * 3600 * 1000);
  return {
    response_code: RESPONSE_CODES.success,
    response_text: "Transaction Found",
    hash: invoice.account.hash,
    invoice: {
      token: invoice.token,
      pal_is_on: "0",
      // The provider sends amounts back as strings.
      total_amount: String(invoice.totalAmount),
      total_amount_without_fees: String(invoice.totalAmount),
      description: invoice.description,
      expire_date: providerDate(expires),
      items: invoice.items,
      taxes: invoice.taxes,
    },
    custom_data: invoice.customData,
    actions: invoice.actions,
    mode: invoice.mode,
    status: invoice.status,
    fail_reason: invoice.failReason,
    customer: { ...invoice.customer, payment_method: invoice.paymentMethod },
    receipt_identifier: invoice.receiptIdentifier,
    receipt_url: completed ? receiptUrl(invoice) : null,
    provider_reference: invoice.providerReference,
    ...(invoice.permitToken ? { permit_token: invoice.permitToken } : {}),
  };
}

/** Sends the invoice's IPN to its `callback_url`, if it has one. */
export function sendInvoiceIpn(sim: SimulatorContext, invoice: Invoice): void {
  if (invoice.actions.callback_url) sim.ipn.send(invoice.actions.callback_url, invoiceConfirmation(invoice), { token: invoice.token, status: invoice.status });
}

export type InvoiceOutcome = "completed" | "failed" | "cancelled";

export interface SettleDetails {
  paymentMethod?: string | null;
  customer?: Partial<Customer> | null;
  failReason?: string | null;
}

/**
 * Moves an invoice to `outcome` and sends its IPN. A completed invoice is final (and credits the balance of
 * its channel's country); a cancelled or failed one may still be paid (a customer may pay after cancelling once).
 */
export function settleInvoice(
  sim: SimulatorContext,
  invoice: Invoice,
  outcome: InvoiceOutcome,
  details: SettleDetails = {},
): { ok: true } | { ok: false; reason: string } {
  if (invoice.status === "completed") return { ok: false, reason: "This invoice is already paid." };
  invoice.status = outcome;
  if (outcome !== "cancelled") {
    const given = details.customer ?? {};
    invoice.customer = {
      name: given.name || invoice.customer.name || SANDBOX_PAYER.name,
      phone: given.phone || invoice.customer.phone || SANDBOX_PAYER.phone,
      email: given.email || invoice.customer.email || SANDBOX_PAYER.email,
    };
    invoice.paymentMethod = details.paymentMethod || invoice.paymentMethod || DEFAULT_PAYMENT_METHOD;
  }
  invoice.failReason = outcome === "failed" ? details.failReason || "insufficient_funds" : null;
  if (outcome === "completed") {
    moveBalance(invoice.account, countryOfChannel(invoice.paymentMethod), invoice.totalAmount);
    invoice.receiptIdentifier = randomToken(13).toLowerCase();
    invoice.providerReference = `MP${providerDate(sim.now()).slice(2, 10).replaceAll("-", "")}.${randomToken(4)}.${randomToken(6).toUpperCase()}`;
  }
  sendInvoiceIpn(sim, invoice);
  return { ok: true };
}
