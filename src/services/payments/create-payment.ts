/**
 * `POST /payments`: one call for any operator the gateway's providers reach by a push to the phone. The
 * body names the operator and the customer's phone; the provider is the first one the gateway runs whose
 * capabilities serve that operator in that country (`PaymentProvider.capabilities.methods`; routing
 * between several comes later). The collection itself is the direct payment's (`collect-by-push.ts`):
 * record, first sync, the provider's calls through the port, contract §4's failure table.
 *
 * @module
 */
import { z } from "zod";
import type { Environment } from "../../config.ts";
import { ValidationError } from "../../errors.ts";
import type { PaymentMethodCapability, PaymentProvider } from "../../providers/provider.ts";
import { DOCUMENTED_MAX_AMOUNT } from "../../routers/documented-max-amount.ts";
import type { Deps } from "../deps.ts";
import { collectByPush } from "../direct-payments/collect-by-push.ts";
import { CALLING_CODES } from "../direct-payments/payment-methods.ts";
import { countryField, customerNameFields, phoneNumberField } from "../request-fields.ts";
import { validateTargetUrl } from "../webhooks/url-safety.ts";
import { getPayment } from "./get-payment.ts";
import { CURRENCIES, type PaymentView } from "./payment-view.ts";

/** The body of `POST /payments`: the one schema the router validates with and the service reads. */
export const paymentRequest = z
  .object({
    amount: z.number().int().min(1).meta({
      description: "Whole units of the currency; at most MAX_AMOUNT (the maximum shown is its default)",
      example: 500,
      maximum: DOCUMENTED_MAX_AMOUNT,
    }),
    currency: z.enum(CURRENCIES).optional().meta({ description: "Optional: it follows the country (GNF for gn, XOF otherwise)" }),
    description: z.string().trim().min(1).max(255).meta({ description: "Free text label of the payment", example: "Order 1042" }),
    operator: z
      .string()
      .regex(/^[a-z][a-z0-9-]{1,31}$/, { error: "must be a lower-case operator name, like mtn" })
      .meta({ description: "The customer's mobile-money operator: mtn, moov, celtiis, togocel, airtel, free…", example: "mtn" }),
    customer: z.object({ phone: z.object({ number: phoneNumberField, country: countryField }), ...customerNameFields }),
    callback_url: z.string().max(2048).optional().meta({
      example: "https://merchant.example/passerelle/callback",
      description: "Where we send this payment's events (signed with the tenant's callback secret); never sent to the provider",
    }),
  })
  .meta({ id: "PaymentRequest" });

export type PaymentRequest = z.infer<typeof paymentRequest>;

/** The first provider (in the gateway's order) that pushes a payment to `operator` phones in `country`. */
function routeOf(deps: Pick<Deps, "providers">, operator: string, country: string): { provider: PaymentProvider; method: PaymentMethodCapability } | undefined {
  for (const provider of deps.providers.all) {
    const method = provider.capabilities.methods.find((m) => m.operator === operator && m.country === country && m.collection === "ussd_push");
    if (method) return { provider, method };
  }
  return undefined;
}

/**
 * Starts a payment and answers it as `GET /payments/{id}` shows it (`pending`).
 *
 * @example
 * ```ts
 * const payment = await createPayment(deps, { tenantId, environment: "sandbox", input: { amount: 500, operator: "mtn", … } });
 * payment.provider; // "providerA"
 * ```
 * @throws {ValidationError} for an operator no provider serves in that country, a calling code that is not the
 *   country's, a currency that is not the country's, an amount above MAX_AMOUNT or a callback_url we may not call;
 *   `ProviderError` and `NotConfiguredError` as a direct payment's.
 */
export async function createPayment(deps: Deps, request: { tenantId: string; environment: Environment; input: PaymentRequest }): Promise<PaymentView> {
  const { tenantId, environment, input } = request;
  const { number, country } = input.customer.phone;
  const messages: string[] = [];
  const route = routeOf(deps, input.operator, country);
  if (!route) messages.push(`operator ${input.operator} is not available for country ${country}`);
  const callingCode = CALLING_CODES[country];
  if (callingCode !== undefined && !number.startsWith(`+${callingCode}`))
    messages.push(`customer.phone.number must start with +${callingCode} for country ${country}`);
  if (route && input.currency !== undefined && input.currency !== route.method.currency)
    messages.push(`currency must be ${route.method.currency} for country ${country}`);
  if (input.amount > deps.config.maxAmount) messages.push(`amount must not be greater than ${deps.config.maxAmount}`);
  let callbackUrl: string | undefined;
  if (input.callback_url !== undefined) {
    try {
      callbackUrl = validateTargetUrl(input.callback_url, { field: "callback_url", environment, allowPrivateTargets: deps.config.allowPrivateTargets });
    } catch (error) {
      if (error instanceof ValidationError) messages.push(...error.messages);
      else throw error;
    }
  }
  if (messages.length > 0 || !route) throw new ValidationError(messages);
  const { firstname, lastname, email } = input.customer;
  const started = await collectByPush(deps, {
    tenantId,
    environment,
    provider: route.provider,
    method: route.method,
    amount: input.amount,
    description: input.description,
    phone: { number, country },
    customer: {
      ...(firstname !== undefined && { firstname }),
      ...(lastname !== undefined && { lastname }),
      ...(email !== undefined && { email }),
    },
    callbackUrl,
  });
  return getPayment(deps, { tenantId, environment, paymentId: started.paymentId });
}
