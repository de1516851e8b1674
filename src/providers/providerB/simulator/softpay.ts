/**
 * SoftPay in the simulator (providers-money-out.md, "B SoftPay"): the operator calls on an invoice
 * (`POST …/softpay/{slug}`, served under both modes — the real sandbox has none) and the sandbox's
 * `make-payment`, each checking its operator's body fields, then ending the invoice by the sandbox rules
 * of the pay-ins, by amount in XOF: below 1000 completed after the approve delay; 1000 to 5000 wait on the
 * console for Approve or Fail; above 5000 failed after the delay — each with the invoice's IPN.
 *
 * - push operators (MTN, Moov, T-Money, Free, Expresso…): the rule above;
 * - code operators (Orange Money CI and Burkina, Orange Money Senegal's `OTPCODE` variant): the code
 *   {@link SANDBOX_OTP} (`123456`) only, else 422 `{"message":"Invalid or expired OTP code!"}`; then the rule;
 * - URL operators (Wave, Orange Money Senegal's QR): a `url` to the simulator's page where the customer
 *   pays or fails (`GET /softpay/pay/{token}`).
 *
 * No HTTP here beyond the IPN; the routes are in `softpay-routes.ts`.
 */
import type { SimulatorContext } from "./context.ts";
import { findInvoice, settleInvoice } from "./invoices.ts";
import type { Invoice, MerchantAccount, Mode, SoftpayPayment } from "./store.ts";
import { SANDBOX_CONSOLE_UP_TO, SANDBOX_SENT_BELOW } from "./disburse/disbursements.ts";

/** The only code the simulator's code operators accept. */
export const SANDBOX_OTP = "123456";

/** The answer to a bad code (Orange Money Senegal's, as integrators report it; the simulator uses it for every code operator). */
export const BAD_OTP_MESSAGE = "Invalid or expired OTP code!";

/** How the simulator reads one operator's body: its required fields, and which of them carry what. */
interface SimOperator {
  flow: "push" | "otp" | "redirect";
  fields: readonly string[];
  name: string;
  email: string;
  phone: string;
  token: string;
  otp?: string;
}

const byDefault = (prefix: string, extra: string[] = [], otp?: string): SimOperator => ({
  flow: otp ? "otp" : "push",
  fields: [`${prefix}_customer_fullname`, `${prefix}_email`, `${prefix}_phone_number`, "payment_token", ...extra],
  name: `${prefix}_customer_fullname`,
  email: `${prefix}_email`,
  phone: `${prefix}_phone_number`,
  token: "payment_token",
  ...(otp ? { otp } : {}),
});

const wave = (prefix: string): SimOperator => ({
  flow: "redirect",
  fields: [`${prefix}_fullName`, `${prefix}_email`, `${prefix}_phone`, `${prefix}_payment_token`],
  name: `${prefix}_fullName`,
  email: `${prefix}_email`,
  phone: `${prefix}_phone`,
  token: `${prefix}_payment_token`,
});

const flat = (name: string, email: string, phone: string, token: string, extra: { otp?: string } = {}): SimOperator => ({
  flow: extra.otp ? "otp" : "push",
  fields: [name, email, phone, token, ...(extra.otp ? [extra.otp] : [])],
  name,
  email,
  phone,
  token,
  ...extra,
});

/** The slugs the simulator serves, with their bodies (providers-money-out.md, "Default body", "Other bodies"). */
export const SIM_SOFTPAY_OPERATORS: Record<string, SimOperator> = {
  "mtn-benin": byDefault("mtn_benin", ["mtn_benin_wallet_provider"]),
  "moov-benin": byDefault("moov_benin"),
  "t-money-togo": flat("name_t_money", "email_t_money", "phone_t_money", "payment_token"),
  "moov-togo": byDefault("moov_togo", ["moov_togo_customer_address"]),
  "mtn-ci": byDefault("mtn_ci", ["mtn_ci_wallet_provider"]),
  "orange-money-ci": byDefault("orange_money_ci", ["orange_money_ci_otp"], "orange_money_ci_otp"),
  "moov-ci": byDefault("moov_ci"),
  "wave-ci": wave("wave_ci"),
  "free-money-senegal": flat("customer_name", "customer_email", "phone_number", "payment_token"),
  // The QR flow; with `api_type: "OTPCODE"` its code variant (`authorization_code`).
  "new-orange-money-senegal": { ...flat("customer_name", "customer_email", "phone_number", "invoice_token"), flow: "redirect" },
  "wave-senegal": wave("wave_senegal"),
  "expresso-senegal": flat("expresso_sn_fullName", "expresso_sn_email", "expresso_sn_phone", "payment_token"),
  "orange-money-mali": byDefault("orange_money_mali", ["orange_money_mali_customer_address"]),
  "moov-mali": byDefault("moov_ml", ["moov_ml_customer_address"]),
  "orange-money-burkina": flat("name_bf", "email_bf", "phone_bf", "payment_token", { otp: "otp_code" }),
  "moov-burkina": {
    ...flat("moov_burkina_faso_fullName", "moov_burkina_faso_email", "moov_burkina_faso_phone_number", "moov_burkina_faso_payment_token"),
  },
};

/** The wallet providers MTN's bodies must name. */
const WALLET_PROVIDERS: Record<string, string> = { "mtn-benin": "MTNBENIN", "mtn-ci": "MTNCI" };

/** A SoftPay answer: `{ success, message, … }` with its HTTP status. */
export interface SoftpayResult {
  status: number;
  body: Record<string, unknown>;
}

const refused = (status: number, message: string): SoftpayResult => ({ status, body: { success: false, message } });

const text = (value: unknown): string | null => (typeof value === "string" && value.trim() !== "" ? value.trim() : null);

/** The page where a URL operator's customer pays. */
export const softpayPageUrl = (invoice: Invoice) => `${invoice.baseUrl}/softpay/pay/${invoice.token}`;

/** The invoice a call names, if it may be paid by this account in this mode. */
function payableInvoice(sim: SimulatorContext, token: string, owner: { account: MerchantAccount; mode: Mode }): Invoice | SoftpayResult {
  const invoice = findInvoice(sim, token, owner);
  if (!invoice) return refused(404, "Invoice not found");
  if (invoice.status === "completed") return refused(409, "This invoice is already paid");
  if (sim.store.softpays.has(token) && invoice.status === "pending") return refused(409, "A payment of this invoice is already in progress");
  return invoice;
}

/**
 * One `POST softpay/{slug}` (already authenticated): checks the body, records the payment on its invoice and
 * starts it; the answer the provider gives.
 */
export function startSoftpay(
  sim: SimulatorContext,
  input: { account: MerchantAccount; mode: Mode; slug: string; body: Record<string, unknown> },
): SoftpayResult {
  const operator = SIM_SOFTPAY_OPERATORS[input.slug];
  if (!operator) return refused(404, "Not Found");
  const { body } = input;
  const missing = operator.fields.find((field) => text(body[field]) === null);
  if (missing) return refused(422, `The ${missing} field is required.`);
  const wallet = WALLET_PROVIDERS[input.slug];
  if (wallet && body[`${input.slug.replace("-", "_")}_wallet_provider`] !== wallet)
    return refused(422, `The ${input.slug.replace("-", "_")}_wallet_provider field must be ${wallet}.`);
  const found = payableInvoice(sim, text(body[operator.token])!, input);
  if (!("token" in found)) return found;
  const invoice = found;

  const otpVariant = input.slug === "new-orange-money-senegal" && body.api_type === "OTPCODE";
  const codeField = otpVariant ? "authorization_code" : operator.otp;
  if (codeField && text(body[codeField]) !== SANDBOX_OTP) return refused(422, BAD_OTP_MESSAGE);

  const flow = otpVariant ? "otp" : operator.flow;
  invoice.customer = { name: text(body[operator.name]), email: text(body[operator.email]), phone: text(body[operator.phone]) };
  invoice.paymentMethod = input.slug;
  const payment = record(sim, invoice, { slug: input.slug, flow, phone: text(body[operator.phone])! });
  if (flow === "redirect") {
    const url = softpayPageUrl(invoice);
    const otherUrl = input.slug === "new-orange-money-senegal" ? { other_url: { om_url: `${url}?app=om`, maxit_url: `${url}?app=maxit` } } : {};
    return { status: 200, body: { success: true, message: "Veuillez ouvrir le lien pour finaliser le paiement.", url, ...otherUrl } };
  }
  applyAmountRule(sim, invoice, payment);
  const pending = input.slug === "free-money-senegal" ? { data: { status: "PENDING" } } : {};
  return { status: 200, body: { success: true, message: "Votre paiement est en cours de traitement. Validez-le sur votre téléphone.", ...pending } };
}

/** The sandbox's `make-payment` `{ phone_phone, customer_email, password, invoice_token }`: a push by the amount rule. */
export function makeSandboxPayment(sim: SimulatorContext, input: { account: MerchantAccount; mode: Mode; body: Record<string, unknown> }): SoftpayResult {
  const { body } = input;
  for (const field of ["phone_phone", "customer_email", "invoice_token"])
    if (text(body[field]) === null) return refused(422, `The ${field} field is required.`);
  if (typeof body.password !== "string") return refused(422, "The password field is required.");
  const found = payableInvoice(sim, text(body.invoice_token)!, input);
  if (!("token" in found)) return found;
  found.customer = { ...found.customer, phone: text(body.phone_phone), email: text(body.customer_email) };
  const payment = record(sim, found, { slug: "checkout", flow: "push", phone: text(body.phone_phone)! });
  applyAmountRule(sim, found, payment);
  return { status: 200, body: { success: true, message: "Paiement effectué avec succès" } };
}

function record(sim: SimulatorContext, invoice: Invoice, what: Pick<SoftpayPayment, "slug" | "flow" | "phone">): SoftpayPayment {
  const payment: SoftpayPayment = { token: invoice.token, ...what, awaitingConsole: false, createdAt: sim.now() };
  sim.store.softpays.set(invoice.token, payment);
  return payment;
}

/** Below 1000: completed after the delay; 1000 to 5000: the console; above 5000: failed after the delay. */
function applyAmountRule(sim: SimulatorContext, invoice: Invoice, payment: SoftpayPayment): void {
  if (invoice.totalAmount >= SANDBOX_SENT_BELOW && invoice.totalAmount <= SANDBOX_CONSOLE_UP_TO) {
    payment.awaitingConsole = true;
    return;
  }
  const outcome = invoice.totalAmount < SANDBOX_SENT_BELOW ? "completed" : "failed";
  const timer = setTimeout(() => {
    sim.disburse.timers.delete(timer);
    if (invoice.status === "pending") settleInvoice(sim, invoice, outcome, { paymentMethod: invoice.paymentMethod, failReason: "insufficient_funds" });
    sim.saveState();
  }, sim.disburse.delayMs);
  sim.disburse.timers.add(timer);
}

/** Plays again the amount rule of the SoftPay payments still pending when the simulator stopped (their timers are gone). */
export function resumeSoftpays(sim: SimulatorContext): void {
  for (const { payment, invoice } of softpayPayments(sim)) if (invoice.status === "pending" && !payment.awaitingConsole) applyAmountRule(sim, invoice, payment);
}

/** The console's Approve or Fail of a payment waiting there; `null` when there is none. */
export function settleFromConsole(sim: SimulatorContext, token: string, outcome: "completed" | "failed"): { ok: true } | { ok: false; reason: string } | null {
  const payment = sim.store.softpays.get(token);
  const invoice = findInvoice(sim, token);
  if (!payment || !invoice) return null;
  if (invoice.status !== "pending") return { ok: false, reason: `This payment is ${invoice.status}.` };
  payment.awaitingConsole = false;
  return settleInvoice(sim, invoice, outcome, { paymentMethod: invoice.paymentMethod, failReason: "declined_in_console" });
}

/** Every SoftPay payment with its invoice, oldest first: what the console and `GET /_sim/softpay` show. */
export function softpayPayments(sim: SimulatorContext): { payment: SoftpayPayment; invoice: Invoice }[] {
  const rows: { payment: SoftpayPayment; invoice: Invoice }[] = [];
  for (const payment of sim.store.softpays.values()) {
    const invoice = sim.store.invoices.get(payment.token);
    if (invoice) rows.push({ payment, invoice });
  }
  return rows;
}
