/**
 * `POST /payments`: one call for any operator the gateway's providers reach directly (issue 16). The body
 * names the operator and the customer's phone; the routes are the tenant's route list for that operator
 * and country (`routing/routes.ts`), those it has an account on, ranked by their live success rates
 * (`routing/window.ts`); the payment is tried on them in order with failover when a provider provably did
 * not act (`routed-collection.ts`), and answered with what the customer does next and its attempts.
 * `POST /payments/quote` answers the same decision without acting. The route lists and accounts come from
 * the process's routing snapshot, which the payment's first statement checks is current (`routing/route-cache.ts`).
 *
 * @module
 */
import { z } from "zod";
import type { Environment } from "../../config.ts";
import { NotConfiguredError, UnavailableError, ValidationError } from "../../errors.ts";
import type { ProviderAccountRef } from "../../providers/provider.ts";
import { DOCUMENTED_MAX_AMOUNT } from "../amounts.ts";
import type { Deps } from "../deps.ts";
import { countryField, customerNameFields, phoneNumberField } from "../request-fields.ts";
import { validateTargetUrl } from "../webhooks/url-safety.ts";
import { phonePrefixProblem } from "../countries.ts";
import { type RoutingSnapshot, routingSnapshot, snapshotAccount, snapshotRouteList, windowStats } from "../routing/route-cache.ts";
import type { Route } from "../routing/routes.ts";
import { rankRoutes } from "../routing/window.ts";
import { CURRENCIES, type PaymentDetailView, toPaymentView } from "./payment-view.ts";
import { getPayment } from "./get-payment.ts";
import { KeyedPaymentExists, paymentByKey, paymentKeyOf, releaseFailedPaymentKey, type RequestKey } from "./payment-key.ts";
import { type Candidate, collectRouted, RoutingChangedError } from "./routed-collection.ts";

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
    otp: z
      .string()
      .regex(/^[0-9]{4,8}$/, { error: "must be the 4 to 8 digits the customer got from the operator" })
      .optional()
      .meta({ description: "For an operator whose flow is otp (GET /payment-methods): the code the customer got by USSD", example: "123456" }),
    merchantReference: z.string().trim().min(1).max(255).optional().meta({
      description: "Your own reference of the payment (your order number): shown back, searchable with GET /payments?merchantReference=",
      example: "order-1042",
    }),
    metadata: z
      .record(z.string().max(64), z.union([z.string().max(500), z.number(), z.boolean()]))
      .refine((value) => Object.keys(value).length <= 20, { message: "must have at most 20 keys" })
      .optional()
      .meta({ description: "Up to 20 keys of your own, shown back as customData" }),
  })
  .meta({ id: "PaymentRequest" });

export type PaymentRequest = z.infer<typeof paymentRequest>;

/** A refusal with the reasons the real call would get, or the candidates it would try. */
export interface Plan {
  messages: string[];
  callbackUrl: string | undefined;
  /** Routes the tenant has an account on, ranked for this payment. */
  candidates: Candidate[];
  /** The first route's lack of an account, when no route has one. */
  notConfigured: NotConfiguredError | undefined;
}

/**
 * Everything `POST /payments` decides before calling a provider, and `POST /payments/quote` answers: the
 * rules the body breaks, and the routes the payment would try, in order, with why — from the tenant's routing
 * snapshot (`routing/route-cache.ts`) and the wallet's success rates (read at most once a second).
 */
export async function planPayment(
  deps: Deps,
  scope: { tenantId: string; environment: Environment },
  snapshot: RoutingSnapshot,
  input: PaymentRequest,
  random: () => number = Math.random,
): Promise<Plan> {
  const { environment } = scope;
  const { number, country } = input.customer.phone;
  const messages: string[] = [];
  const routes = snapshotRouteList(deps, snapshot, input.operator, country);
  if (routes.length === 0) messages.push(`operator ${input.operator} is not available for country ${country}`);
  const prefix = phonePrefixProblem("customer.phone.number", number, country);
  if (prefix !== undefined) messages.push(prefix);
  const currency = routes[0]?.method.currency;
  if (currency !== undefined && input.currency !== undefined && input.currency !== currency)
    messages.push(`currency must be ${currency} for country ${country}`);
  if (input.amount > deps.config.maxAmount) messages.push(`amount must not be greater than ${deps.config.maxAmount}`);
  const first = routes[0]?.method;
  if (first?.limits && input.amount < first.limits.minAmount)
    messages.push(`amount must be at least ${first.limits.minAmount} for ${input.operator} in ${country}`);
  if (first?.limits?.maxAmount && input.amount > first.limits.maxAmount)
    messages.push(`amount must be at most ${first.limits.maxAmount} for ${input.operator} in ${country}`);
  if (first?.flow === "otp" && input.otp === undefined)
    messages.push(`otp is required for ${input.operator} in ${country}: ${first.otpHint ?? "the customer gets the code from the operator"}`);
  let callbackUrl: string | undefined;
  if (input.callback_url !== undefined) {
    try {
      callbackUrl = validateTargetUrl(input.callback_url, { field: "callback_url", environment, allowPrivateTargets: deps.config.allowPrivateTargets });
    } catch (error) {
      if (error instanceof ValidationError) messages.push(...error.messages);
      else throw error;
    }
  }
  const withAccounts: (Route & { account: ProviderAccountRef })[] = [];
  let notConfigured: NotConfiguredError | undefined;
  for (const route of routes) {
    const account = await snapshotAccount(deps, scope, snapshot, route.provider);
    if (account instanceof NotConfiguredError) notConfigured ??= account;
    else withAccounts.push({ ...route, account });
  }
  const stats = withAccounts.length > 1 ? await windowStats(deps, environment, { operator: input.operator, country }) : [];
  const { exploreShare, rateMargin, windowMinutes } = deps.config.routing;
  const ranked = rankRoutes(withAccounts, stats, { exploreShare, rateMargin, windowMinutes, random });
  const candidates = ranked.map((route) => ({ ...route, account: withAccounts.find((w) => w.provider === route.provider)!.account }));
  return { messages, callbackUrl, candidates, notConfigured };
}

/** How many times a payment is planned again when the tenant's routing changed under it, before giving up (503). */
const PLANS_PER_PAYMENT = 3;

/**
 * Starts a payment and answers it as `GET /payments/{id}` shows it (`pending`), with what the customer does
 * next and the attempts made.
 *
 * @example
 * ```ts
 * const payment = await createPayment(deps, { tenantId, environment: "sandbox", input: { amount: 500, operator: "mtn", … } });
 * payment.provider; // "providerA"
 * ```
 * @throws {ValidationError} for an operator no provider serves in that country, a calling code or currency that
 *   is not the country's, an amount outside the limits, a missing code, or a callback_url we may not call;
 *   `NotConfiguredError` (424) when the tenant has no account on any of its routes; `ProviderError` as a direct payment's;
 *   `UnavailableError` (503, nothing sent) when the tenant's routing changed under three plans in a row;
 *   422 `idempotency_mismatch` when the `Idempotency-Key` names a payment asked with another body.
 *
 * With an `Idempotency-Key` the payment keeps it (`payment-key.ts`): a run that finds the key's payment made
 * (an earlier run whose answer was not stored) answers it as `GET /payments/{id}` shows it, and sends nothing.
 */
export async function createPayment(
  deps: Deps,
  request: {
    tenantId: string;
    environment: Environment;
    input: PaymentRequest;
    /** The payment link it is paid through. */
    paymentLinkId?: string;
    /** The request's `Idempotency-Key` and path: the payment's own. */
    idempotency?: RequestKey;
  },
): Promise<PaymentDetailView> {
  const { tenantId, environment, input } = request;
  const scope = { tenantId, environment };
  const key = await paymentKeyOf(request.idempotency, input);
  for (let plans = 1, fresh = false, current = false; ; plans++) {
    const snapshot = await routingSnapshot(deps, scope, { fresh, current });
    const decided = await planPayment(deps, scope, snapshot, input);
    const refused = decided.messages.length > 0 || decided.candidates.length === 0;
    // A refusal is answered from current routing only: no insert checks the snapshot's counter on that path.
    if (refused && !fresh && !current) {
      current = true;
      continue;
    }
    if (refused && key) {
      // The key's payment, made before the routing or limits changed, is answered as it stands rather than refused.
      const made = await paymentByKey(deps, scope, key);
      if (made) return getPayment(deps, { ...scope, paymentId: made.id });
    }
    if (decided.messages.length > 0) throw new ValidationError(decided.messages);
    if (decided.candidates.length === 0) throw decided.notConfigured ?? new NotConfiguredError(`No provider serves ${input.operator} for this tenant`);
    const { firstname, lastname, email } = input.customer;
    try {
      const started = await collectRouted(deps, {
        tenantId,
        environment,
        operator: input.operator,
        candidates: decided.candidates,
        amount: input.amount,
        description: input.description,
        phone: input.customer.phone,
        customer: {
          ...(firstname !== undefined && { firstname }),
          ...(lastname !== undefined && { lastname }),
          ...(email !== undefined && { email }),
        },
        ...(input.otp !== undefined && { otp: input.otp }),
        ...(input.metadata !== undefined && { metadata: input.metadata }),
        ...(input.merchantReference !== undefined && { merchantReference: input.merchantReference }),
        ...(request.paymentLinkId !== undefined && { paymentLinkId: request.paymentLinkId }),
        callbackUrl: decided.callbackUrl,
        routingVersion: snapshot.version,
        ...(key && { idempotency: key }),
      });
      return { ...toPaymentView(started.payment), attempts: started.attempts };
    } catch (error) {
      // An earlier run of this request made the payment: answered as it stands (its own run carries it through).
      if (error instanceof KeyedPaymentExists) return getPayment(deps, { ...scope, paymentId: error.payment.id });
      await releaseFailedPaymentKey(deps, scope, key, error);
      if (!(error instanceof RoutingChangedError)) throw error;
      if (plans >= PLANS_PER_PAYMENT)
        throw new UnavailableError("The tenant's route lists or provider credentials kept changing while this payment was made; nothing was sent: try again");
      fresh = true;
    }
  }
}

export const quoteSchema = z
  .object({
    valid: z.boolean().meta({ description: "Whether POST /payments would take this body" }),
    errors: z.array(z.string()).meta({ description: "The validation errors the real call would answer (400), each `<field> <rule>`" }),
    operator: z.string(),
    country: z.string(),
    currency: z.enum(CURRENCIES).nullable(),
    flow: z.enum(["push", "otp", "redirect"]).nullable().meta({ description: "What the customer does: approve a prompt, give a code first, or open a URL" }),
    nextAction: z.string().nullable().meta({ description: "In words, what the customer will be asked to do" }),
    routes: z.array(
      z.object({
        provider: z.string(),
        reason: z.string().meta({ description: "Why it stands there: the route list, the success rates, the exploration share" }),
        limits: z.object({ minAmount: z.number().int(), maxAmount: z.number().int().nullable() }).nullable(),
        fees: z.null().meta({ description: "Fees the provider publishes for it: neither provider publishes a fee a payer bears here" }),
      }),
    ),
    notConfigured: z.string().nullable().meta({ description: "When no route has an account for the tenant: why (the real call answers 424)" }),
  })
  .meta({ id: "PaymentQuote" });

export type PaymentQuote = z.infer<typeof quoteSchema>;

/** `POST /payments/quote`: what the real call would do, without doing it (no row, no provider call, no random exploration). */
export async function quotePayment(deps: Deps, request: { tenantId: string; environment: Environment; input: PaymentRequest }): Promise<PaymentQuote> {
  const { tenantId, environment, input } = request;
  // A quote writes nothing, so no insert checks the snapshot's counter: it is checked first.
  const scope = { tenantId, environment };
  const decided = await planPayment(deps, scope, await routingSnapshot(deps, scope, { current: true }), input, () => 1);
  const first = decided.candidates[0]?.method;
  const flow = first?.flow ?? (first ? "push" : null);
  return {
    valid: decided.messages.length === 0 && decided.candidates.length > 0,
    errors: decided.messages,
    operator: input.operator,
    country: input.customer.phone.country,
    currency: first?.currency ?? null,
    flow,
    nextAction:
      flow === "redirect"
        ? "open the URL the answer's nextAction gives"
        : flow === "otp"
          ? `give the code with the payment (${first?.otpHint ?? "from the operator"}), then approve`
          : flow === "push"
            ? "approve the prompt on the phone"
            : null,
    routes: decided.candidates.map((c) => ({ provider: c.provider.name, reason: c.reason, limits: c.method.limits ?? null, fees: null })),
    notConfigured: decided.candidates.length === 0 && decided.notConfigured ? decided.notConfigured.message : null,
  };
}
