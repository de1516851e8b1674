/**
 * `POST /providerA/direct-payment` (spec endpoint 1, contract §4): the spec's rules that one field's schema
 * cannot see, then a push collection on provider A (`collect-by-push.ts`: record, the provider's calls
 * through the port, the failure table of contract §4), answered in the spec's shape.
 */
import type { Environment } from "../../config.ts";
import type { Payment } from "../../db/schema.ts";
import { ProviderError, ValidationError } from "../../errors.ts";
import type { PaymentProvider } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { KeyedPaymentExists, paymentKeyOf, releaseFailedPaymentKey, type RequestKey } from "../payments/payment-key.ts";
import { validateTargetUrl } from "../webhooks/url-safety.ts";
import { collectByPush } from "./collect-by-push.ts";
import type { DirectPaymentInput } from "./direct-payment-request.ts";
import { phonePrefixProblem } from "../countries.ts";
import { DIRECT_PAYMENT_COUNTRIES } from "./payment-methods.ts";
import { specProviderOf } from "./spec-provider.ts";

export type { DirectPaymentInput } from "./direct-payment-request.ts";

/** Spec 2.2, plus our `paymentId`. */
export interface DirectPaymentAnswer {
  ok: true;
  transactionId: number;
  status: "pending";
  description: string;
  amount: number;
  paymentId: string;
}

/**
 * The rules one field's schema cannot see (contract §4): the operator must serve the phone's country, the
 * number's calling code must match the country, the amount at most `MAX_AMOUNT`, and `callback_url` a
 * URL we may call. Returns the normalised `callback_url`.
 *
 * @throws {ValidationError} with one `<path> <rule>` entry per violation.
 */
export function checkDirectPaymentRules(
  input: DirectPaymentInput,
  policy: { environment: Environment; maxAmount: number; allowPrivateTargets: boolean; provider: PaymentProvider },
): string | undefined {
  const messages: string[] = [];
  const { country, number } = input.phone_number;
  const served = policy.provider.capabilities.methods.find((method) => method.method === input.payment_method)?.country;
  if (served !== country) messages.push(`payment_method ${input.payment_method} is not available for country ${country}`);
  if (!(DIRECT_PAYMENT_COUNTRIES as readonly string[]).includes(country))
    messages.push(`phone_number.country must be one of the following values: ${DIRECT_PAYMENT_COUNTRIES.join(", ")}`);
  else {
    const prefix = phonePrefixProblem("phone_number.number", number, country);
    if (prefix !== undefined) messages.push(prefix);
  }
  if (input.amount > policy.maxAmount) messages.push(`amount must not be greater than ${policy.maxAmount}`);
  let callbackUrl: string | undefined;
  if (input.callback_url !== undefined) {
    try {
      callbackUrl = validateTargetUrl(input.callback_url, {
        field: "callback_url",
        environment: policy.environment,
        allowPrivateTargets: policy.allowPrivateTargets,
      });
    } catch (error) {
      if (error instanceof ValidationError) messages.push(...error.messages);
      else throw error;
    }
  }
  if (messages.length > 0) throw new ValidationError(messages);
  return callbackUrl;
}

/**
 * Initiates a direct payment for a tenant in an environment (provider A, spec 2.1).
 *
 * @example
 * ```ts
 * const answer = await createDirectPayment(deps, { tenantId, environment: "sandbox", input });
 * answer.transactionId; // provider A's integer id
 * ```
 * @throws {ValidationError} for the cross-field rules; {@link ProviderError} as `collect-by-push.ts` says;
 *   `NotConfiguredError` (424) when no provider A account serves the environment; 422 `idempotency_mismatch`
 *   when the `Idempotency-Key` names a payment asked with another body.
 *
 * With an `Idempotency-Key` the payment keeps it (`payments/payment-key.ts`): a run that finds the key's payment
 * made (an earlier run whose answer was not stored) sends nothing and answers it ({@link answerOfKeyedPayment}).
 */
export async function createDirectPayment(
  deps: Deps,
  request: { tenantId: string; environment: Environment; input: DirectPaymentInput; idempotency?: RequestKey },
): Promise<DirectPaymentAnswer> {
  const { tenantId, environment, input } = request;
  const key = await paymentKeyOf(request.idempotency, input);
  const provider = specProviderOf(deps, input.payment_method);
  const callbackUrl = checkDirectPaymentRules(input, {
    environment,
    maxAmount: deps.config.maxAmount,
    allowPrivateTargets: deps.config.allowPrivateTargets,
    provider,
  });
  const started = await collectByPush(deps, {
    ...(key && { idempotency: key }),
    tenantId,
    environment,
    provider,
    method: provider.capabilities.methods.find((method) => method.method === input.payment_method)!,
    amount: input.amount,
    description: input.description,
    phone: { number: input.phone_number.number, country: input.phone_number.country },
    customer: {
      ...(input.firstname !== undefined && { firstname: input.firstname }),
      ...(input.lastname !== undefined && { lastname: input.lastname }),
      ...(input.email !== undefined && { email: input.email }),
    },
    callbackUrl,
  }).catch(async (error: unknown) => {
    if (error instanceof KeyedPaymentExists) return answerOfKeyedPayment(error.payment);
    await releaseFailedPaymentKey(deps, request, key, error);
    throw error;
  });
  if ("ok" in started) return started;
  const transactionId = Number(started.providerPaymentId);
  return { ok: true, transactionId, status: "pending", description: input.description, amount: input.amount, paymentId: started.paymentId };
}

/**
 * The answer to a run that found its key's payment made by an earlier run: the answer that run gave (or would
 * have given) once provider A named the transaction — 200 pending with its id, as a replay answers it; before
 * that (the earlier run still at provider A, or killed there) the answer of an unknown outcome, a 502 naming the
 * payment, which is settled from provider A (found by our id) and followed by its paymentId.
 */
function answerOfKeyedPayment(payment: Payment): DirectPaymentAnswer {
  const transactionId = payment.provider_transaction_id;
  if (transactionId !== null && /^\d+$/.test(transactionId))
    return {
      ok: true,
      transactionId: Number(transactionId),
      status: "pending",
      description: payment.description,
      amount: Number(payment.amount),
      paymentId: payment.id,
    };
  throw new ProviderError(
    502,
    "This Idempotency-Key's payment was recorded by an earlier request whose answer was lost; its outcome will be settled from the provider: follow it by its paymentId",
    { paymentId: payment.id },
  );
}
