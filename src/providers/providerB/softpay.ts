/**
 * Provider B's direct mobile-money payments ("SoftPay", providers-money-out.md): an invoice is created
 * (`POST checkout-invoice/create`, our `pay_` id in its custom data, like a checkout), recorded by the
 * domain, then paid by the operator's call (`POST softpay/{slug}`) with the customer's phone — a push to the
 * phone, a code the customer got by USSD, or a URL the customer opens (Wave, Orange Money Senegal's QR).
 * The payment then ends like a checkout: the invoice's IPN, and its confirm call.
 *
 * SoftPay answers `{ success, message, url?, other_url? }`, not `response_code`, so its calls have their
 * own error mapping here (the same kinds as `client.ts`): `success: false` or a 4xx is a refusal (a bad
 * Orange Money code is a 422 `{"message":"Invalid or expired OTP code!"}`), a 5xx or an unreadable answer
 * is `server_error`, no answer is `timeout`, no connection `unreachable`.
 *
 * The real sandbox has no `softpay/{slug}` (it answers 404: SoftPay is live only); it has one
 * `softpay/checkout/make-payment` for its fictitious customers, called instead when the slug answers 404 in
 * the sandbox. Its `password` is the sandbox customer's, given as the payment's `otp`.
 *
 * @module
 */
import type { Logger } from "pino";
import { z } from "zod";
import { failureReason } from "../failure-reason.ts";
import { observeProviderCall } from "../observe-call.ts";
import { CollectionError, type CollectionStarted, ProviderCallError, type ProviderFailureKind, type UssdPushRequest } from "../provider.ts";
import type { ProviderCallOutcome, ProviderMetrics } from "../provider.ts";
import { keyHeaders, type ProviderBClient, type ProviderBClientOptions } from "./client.ts";
import { nationalNumberOf } from "./map.ts";
import { COUNTRY_NAMES, type SoftpayOperator, softpayOperatorOf, SOFTPAY_OPERATORS } from "./softpay-methods.ts";

/** The clients of the account a SoftPay payment is made on (a `ProviderBAccount`): its invoice and its payment. */
type SoftpayAccount = { invoices: ProviderBClient; softpay: ProviderBSoftpayClient };

/** SoftPay's answer to a payment call. */
const softpayAnswer = z.looseObject({
  success: z.boolean(),
  message: z.unknown().optional(),
  url: z.string().nullish(),
  other_url: z.looseObject({ om_url: z.string().nullish(), maxit_url: z.string().nullish() }).nullish(),
});
export type SoftpayAnswer = z.infer<typeof softpayAnswer>;

/** The sandbox's one SoftPay call (providers-money-out.md: `make-payment`). */
export interface SandboxPaymentBody {
  phone_phone: string;
  customer_email: string;
  password: string;
  invoice_token: string;
}

/** The SoftPay calls of one merchant account and one mode. */
export interface ProviderBSoftpayClient {
  /** `POST softpay/{slug}`; a 404 is a refusal whose `status` is 404. */
  pay(slug: string, body: Record<string, string>): Promise<SoftpayAnswer>;
  /** `POST softpay/checkout/make-payment` (the sandbox's). */
  makeSandboxPayment(body: SandboxPaymentBody): Promise<SoftpayAnswer>;
}

const failed = (kind: ProviderFailureKind, message: string, details: ProviderCallError["details"] = {}) =>
  new ProviderCallError("providerB", kind, message, details);

const OUTCOMES: Record<ProviderFailureKind, ProviderCallOutcome> = { refused: "refused", timeout: "timeout", unreachable: "error", server_error: "error" };

/** The refusal's text: SoftPay's `message`, else the PayDunya `response_text`. */
function messageOf(json: unknown, fallback: string): string {
  const body = (typeof json === "object" && json !== null ? json : {}) as { message?: unknown; response_text?: unknown };
  if (typeof body.message === "string" && body.message.trim() !== "") return body.message;
  if (typeof body.response_text === "string" && body.response_text.trim() !== "") return body.response_text;
  return fallback;
}

/** Builds the SoftPay client of an account (the same options as its invoice client). */
export function providerBSoftpayClient(
  options: Pick<ProviderBClientOptions, "baseUrl" | "timeoutMs" | "keys" | "fetch"> & {
    logger?: Pick<Logger, "warn">;
    metrics?: Pick<ProviderMetrics, "providerCall">;
  },
): ProviderBSoftpayClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const doFetch = options.fetch ?? fetch;

  const send = async (operation: string, path: string, body: unknown): Promise<SoftpayAnswer> => {
    let response: Response;
    try {
      response = await doFetch(`${baseUrl}${path}`, {
        method: "POST",
        headers: { ...keyHeaders(options.keys), "content-type": "application/json", accept: "application/json" },
        body: JSON.stringify(body),
        redirect: "manual",
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      const name = error instanceof Error ? error.name : "";
      options.logger?.warn(
        { provider: "providerB", operation, reason: failureReason(error, Object.values(options.keys)) },
        "provider call failed before an answer",
      );
      if (name === "TimeoutError" || name === "AbortError") throw failed("timeout", `Provider B did not answer within ${options.timeoutMs} ms`);
      throw failed("unreachable", "Provider B could not be reached");
    }
    const status = response.status;
    let json: unknown;
    try {
      json = await response.json();
    } catch {
      if (status >= 400 && status < 500) throw failed("refused", `Provider B refused the payment (${status})`, { status });
      throw failed("server_error", `Provider B answered ${status} without a JSON body`, { status });
    }
    if (status >= 500) throw failed("server_error", `Provider B failed with ${status}`, { status });
    if (status >= 400) throw failed("refused", messageOf(json, `Provider B refused the payment (${status})`), { status });
    const answer = softpayAnswer.safeParse(json);
    if (!answer.success) throw failed("server_error", "Provider B answered with an unexpected body", { status });
    if (!answer.data.success) throw failed("refused", messageOf(json, "Provider B refused the payment"), { status });
    return answer.data;
  };
  const call = (operation: string, path: string, body: unknown): Promise<SoftpayAnswer> => {
    const metrics = options.metrics;
    if (!metrics) return send(operation, path, body);
    const outcomeOf = (error: unknown): ProviderCallOutcome => (error instanceof ProviderCallError ? OUTCOMES[error.kind] : "error");
    return observeProviderCall(metrics, "providerB", operation, outcomeOf, () => send(operation, path, body));
  };
  return {
    // The slug is one of a bounded set (SOFTPAY_OPERATORS): it may name the operation.
    pay: (slug, body) => call(`POST /softpay/${slug}`, `/softpay/${encodeURIComponent(slug)}`, body),
    makeSandboxPayment: (body) => call("POST /softpay/checkout/make-payment", "/softpay/checkout/make-payment", body),
  };
}

/** The operator of a push request: by its method (the slug), else by its operator and country. */
export function softpayOperatorFor(request: Pick<UssdPushRequest, "method" | "operator" | "phone">): SoftpayOperator | undefined {
  return (
    softpayOperatorOf(request.method) ??
    SOFTPAY_OPERATORS.find((entry) => entry.operator === request.operator && entry.country === request.phone.country.toLowerCase())
  );
}

const refusedBeforeAnyCall = (message: string) => new CollectionError(failed("refused", message), "softpay", undefined, false);

/**
 * Starts a SoftPay payment on `account` (the tenant's, of the payment's credential version): the invoice,
 * `request.recorded`, then the operator's call. Failures are {@link CollectionError}s: at the invoice,
 * nothing was started; at the SoftPay call, the invoice is `started` and the payment may have reached the
 * phone when the answer is unknown (5xx, timeout).
 *
 * @example
 * ```ts
 * const started = await startSoftpay(account, { storeName, callbackUrl }, request); // started.redirectUrl for Wave
 * ```
 */
export async function startSoftpay(
  account: SoftpayAccount,
  context: { storeName: string; callbackUrl: string; paymentIdKey: string; logger?: Pick<Logger, "info"> },
  request: UssdPushRequest,
): Promise<CollectionStarted> {
  const operator = softpayOperatorFor(request);
  if (!operator) throw refusedBeforeAnyCall(`Provider B takes no direct payment by ${request.method}`);
  if (operator.flow === "otp" && !request.otp?.trim()) throw refusedBeforeAnyCall(`A ${operator.slug} payment needs the customer's code (otp)`);
  const phone = nationalNumberOf(request.phone.number, operator.country) ?? request.phone.number;
  const fullName = [request.customer.firstname, request.customer.lastname].filter(Boolean).join(" ").trim() || phone;
  // SoftPay bodies all carry an e-mail; a customer without one is named by a placeholder that reaches nobody.
  const email = request.customer.email ?? `${phone}@customer.passerelle.invalid`;

  let started: CollectionStarted;
  try {
    const created = await account.invoices.createCheckoutInvoice({
      invoice: {
        total_amount: request.amount,
        description: request.description,
        customer: { name: fullName, email, phone },
        items: { item_0: { name: request.description, quantity: 1, unit_price: request.amount, total_price: request.amount } },
      },
      store: { name: context.storeName },
      custom_data: { [context.paymentIdKey]: request.paymentId },
      actions: { callback_url: context.callbackUrl },
    });
    started = { providerPaymentId: created.token, reference: null, providerStatus: "pending" };
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    throw new CollectionError(error, "create", undefined, false);
  }
  await request.recorded(started);

  const otp = request.otp?.trim() || undefined;
  const body = operator.body({
    fullName,
    email,
    phone,
    token: started.providerPaymentId,
    address: COUNTRY_NAMES[operator.country] ?? operator.country,
    ...(otp ? { otp } : {}),
  });
  let answer: SoftpayAnswer;
  try {
    answer = await payOrSandbox(account, request, operator, body, { phone, email, otp, token: started.providerPaymentId });
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    // Refused or unreachable: nothing was pushed. A 5xx or no answer: the push may be on the phone.
    throw new CollectionError(error, "softpay", started, error.outcomeUnknown);
  }
  if (answer.other_url?.om_url) context.logger?.info({ paymentId: request.paymentId, omUrl: answer.other_url.om_url }, "Orange Money app link of the payment");
  return { ...started, ...(answer.url ? { redirectUrl: answer.url } : {}) };
}

/** The slug's call; in the sandbox, `make-payment` when the slug answers 404 (the real sandbox has no SoftPay). */
async function payOrSandbox(
  account: SoftpayAccount,
  request: UssdPushRequest,
  operator: SoftpayOperator,
  body: Record<string, string>,
  payer: { phone: string; email: string; otp: string | undefined; token: string },
): Promise<SoftpayAnswer> {
  try {
    return await account.softpay.pay(operator.slug, body);
  } catch (error) {
    if (!(request.environment === "sandbox" && error instanceof ProviderCallError && error.kind === "refused" && error.status === 404)) throw error;
    return account.softpay.makeSandboxPayment({ phone_phone: payer.phone, customer_email: payer.email, password: payer.otp ?? "", invoice_token: payer.token });
  }
}
