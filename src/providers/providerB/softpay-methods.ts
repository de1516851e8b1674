/**
 * Provider B's direct mobile-money operators ("SoftPay", providers-money-out.md, "B SoftPay" and the router
 * table): for each operator × country its SoftPay slug, how the customer completes a payment (push, a code
 * got by USSD, or a URL to open) and the body its `POST softpay/{slug}` takes. The slug is also the method's
 * name (`PaymentMethodCapability.method`, a payment's `payment_method`), so a payment names its slug.
 *
 * @module
 */
import type { PaymentMethodCapability } from "../provider.ts";

/** What a SoftPay body is built from. */
export interface SoftpayPayer {
  fullName: string;
  email: string;
  /** The national number. */
  phone: string;
  /** The invoice token (`payment_token` / `invoice_token`). */
  token: string;
  /** The customer's code, for an operator of the `otp` flow (and OM-SN's OTP variant). */
  otp?: string;
  /** Where the customer lives, for the operators that ask (`_customer_address`): the country's name. */
  address: string;
}

/** One operator SoftPay serves. */
export interface SoftpayOperator {
  operator: string;
  country: string;
  slug: string;
  flow: "push" | "otp" | "redirect";
  otpHint?: string;
  /** The body of `POST softpay/{slug}`. */
  body(payer: SoftpayPayer): Record<string, string>;
}

/** The default body: `<p>_customer_fullname, <p>_email, <p>_phone_number, payment_token` and the operator's extras. */
const defaultBody =
  (prefix: string, extras: (payer: SoftpayPayer) => Record<string, string> = () => ({})) =>
  (payer: SoftpayPayer): Record<string, string> => ({
    [`${prefix}_customer_fullname`]: payer.fullName,
    [`${prefix}_email`]: payer.email,
    [`${prefix}_phone_number`]: payer.phone,
    payment_token: payer.token,
    ...extras(payer),
  });

const walletProvider = (prefix: string, value: string) => defaultBody(prefix, () => ({ [`${prefix}_wallet_provider`]: value }));
const withAddress = (prefix: string) => defaultBody(prefix, (payer) => ({ [`${prefix}_customer_address`]: payer.address }));

/** Wave's body (`wave_senegal_fullName…`, `wave_ci_…`): it answers a pay.wave.com `url`. */
const waveBody =
  (prefix: string) =>
  (payer: SoftpayPayer): Record<string, string> => ({
    [`${prefix}_fullName`]: payer.fullName,
    [`${prefix}_email`]: payer.email,
    [`${prefix}_phone`]: payer.phone,
    [`${prefix}_payment_token`]: payer.token,
  });

/** Orange Money Senegal: a QR `url` (and `other_url.om_url`), or with the customer's code its OTP variant. */
function orangeSenegalBody(payer: SoftpayPayer): Record<string, string> {
  const body: Record<string, string> = { customer_name: payer.fullName, customer_email: payer.email, phone_number: payer.phone, invoice_token: payer.token };
  return payer.otp ? { ...body, api_type: "OTPCODE", authorization_code: payer.otp } : body;
}

/** The operator × country table (providers-money-out.md, "Router table", column "B SoftPay"). */
export const SOFTPAY_OPERATORS: readonly SoftpayOperator[] = [
  { operator: "mtn", country: "bj", slug: "mtn-benin", flow: "push", body: walletProvider("mtn_benin", "MTNBENIN") },
  { operator: "moov", country: "bj", slug: "moov-benin", flow: "push", body: defaultBody("moov_benin") },
  {
    operator: "togocel",
    country: "tg",
    slug: "t-money-togo",
    flow: "push",
    body: (payer) => ({ name_t_money: payer.fullName, email_t_money: payer.email, phone_t_money: payer.phone, payment_token: payer.token }),
  },
  { operator: "moov", country: "tg", slug: "moov-togo", flow: "push", body: withAddress("moov_togo") },
  { operator: "mtn", country: "ci", slug: "mtn-ci", flow: "push", body: walletProvider("mtn_ci", "MTNCI") },
  {
    operator: "orange",
    country: "ci",
    slug: "orange-money-ci",
    flow: "otp",
    otpHint: "Dial #144*82# on the Orange phone to get a payment code, then give it with the payment",
    body: defaultBody("orange_money_ci", (payer) => ({ orange_money_ci_otp: payer.otp ?? "" })),
  },
  { operator: "moov", country: "ci", slug: "moov-ci", flow: "push", body: defaultBody("moov_ci") },
  { operator: "wave", country: "ci", slug: "wave-ci", flow: "redirect", body: waveBody("wave_ci") },
  {
    operator: "free",
    country: "sn",
    slug: "free-money-senegal",
    flow: "push",
    body: (payer) => ({ customer_name: payer.fullName, customer_email: payer.email, phone_number: payer.phone, payment_token: payer.token }),
  },
  { operator: "orange", country: "sn", slug: "new-orange-money-senegal", flow: "redirect", body: orangeSenegalBody },
  { operator: "wave", country: "sn", slug: "wave-senegal", flow: "redirect", body: waveBody("wave_senegal") },
  {
    operator: "expresso",
    country: "sn",
    slug: "expresso-senegal",
    flow: "push",
    body: (payer) => ({ expresso_sn_fullName: payer.fullName, expresso_sn_email: payer.email, expresso_sn_phone: payer.phone, payment_token: payer.token }),
  },
  { operator: "orange", country: "ml", slug: "orange-money-mali", flow: "push", body: withAddress("orange_money_mali") },
  // The slug is `moov-mali`, its fields `moov_ml_…` (the doc's one exception to "slug = prefix with -").
  { operator: "moov", country: "ml", slug: "moov-mali", flow: "push", body: withAddress("moov_ml") },
  {
    operator: "orange",
    country: "bf",
    slug: "orange-money-burkina",
    flow: "otp",
    otpHint: "Get a payment code from the Orange Money menu on the phone, then give it with the payment",
    body: (payer) => ({ name_bf: payer.fullName, email_bf: payer.email, phone_bf: payer.phone, otp_code: payer.otp ?? "", payment_token: payer.token }),
  },
  {
    operator: "moov",
    country: "bf",
    slug: "moov-burkina",
    flow: "push",
    body: (payer) => ({
      moov_burkina_faso_fullName: payer.fullName,
      moov_burkina_faso_email: payer.email,
      moov_burkina_faso_phone_number: payer.phone,
      moov_burkina_faso_payment_token: payer.token,
    }),
  },
];

/** The operator of a slug (a payment's `payment_method`), or undefined. */
export function softpayOperatorOf(slug: string): SoftpayOperator | undefined {
  return SOFTPAY_OPERATORS.find((entry) => entry.slug === slug);
}

/** The countries' names, for `_customer_address`. */
export const COUNTRY_NAMES: Record<string, string> = {
  sn: "Senegal",
  ci: "Cote d'Ivoire",
  bj: "Benin",
  tg: "Togo",
  ml: "Mali",
  bf: "Burkina Faso",
};

/**
 * Provider B's direct methods as the port lists them: one per operator × country, each collected by
 * `ussd_push` with its flow, in XOF. Provider B publishes no per-operator limits: none are given.
 */
export const PROVIDER_B_METHODS: readonly PaymentMethodCapability[] = SOFTPAY_OPERATORS.map((entry) => ({
  method: entry.slug,
  operator: entry.operator,
  country: entry.country,
  currency: "XOF",
  collection: "ussd_push",
  flow: entry.flow,
  ...(entry.otpHint ? { otpHint: entry.otpHint } : {}),
}));
