/**
 * `POST /payouts`: send money to a mobile-money wallet. The recipient's operator and country pick the
 * provider (the first the gateway runs whose payouts reach that wallet and that has an account for the tenant
 * there — the tenant's own, or the service's pooled one — or the one the caller names); the
 * payout is recorded and answered `pending`, and its first step sends it (`record-money-out.ts`).
 *
 * @module
 */
import { z } from "zod";
import { DOCUMENTED_MAX_AMOUNT } from "../amounts.ts";
import type { Environment } from "../../db/schema.ts";
import { AppError, ValidationError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { CURRENCIES } from "../payments/payment-view.ts";
import { countryField, customerNameFields, phoneNumberField } from "../request-fields.ts";
import { toPayoutView, type PayoutView } from "./payout-view.ts";
import { phonePrefixProblem } from "../countries.ts";
import { moneyOutByKey, payoutRoutes, recordMoneyOut, routeWithAccount } from "./record-money-out.ts";

const metadataField = z
  .record(z.string().max(64), z.union([z.string().max(500), z.number(), z.boolean()]))
  .refine((value) => Object.keys(value).length <= 20, { message: "must have at most 20 keys" })
  .meta({ description: "Up to 20 keys of your own, answered back as sent" });

/** The body of `POST /payouts`. */
export const payoutRequest = z
  .object({
    amount: z.number().int().min(1).meta({
      description: "Whole units of the currency; at most MAX_AMOUNT (the maximum shown is its default) and the provider's own maximum",
      example: 2500,
      maximum: DOCUMENTED_MAX_AMOUNT,
    }),
    currency: z.enum(CURRENCIES).optional().meta({ description: "Optional: it follows the country (GNF for gn, XOF otherwise)" }),
    description: z.string().trim().min(1).max(255).meta({ description: "What the payout is for", example: "Supplier invoice 88" }),
    recipient: z.object({
      phone: z.object({ number: phoneNumberField, country: countryField }),
      operator: z
        .string()
        .regex(/^[a-z][a-z0-9-]{1,31}$/, { error: "must be a lower-case operator name, like mtn" })
        .meta({ description: "The wallet's operator: mtn, moov, celtiis, togocel, orange, wave, free, expresso…", example: "mtn" }),
      ...customerNameFields,
    }),
    provider: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/)
      .optional()
      .meta({ description: "Send through this provider; by default the first that reaches the wallet", example: "providerA" }),
    metadata: metadataField.optional(),
  })
  .meta({ id: "PayoutRequest" });

export type PayoutRequest = z.infer<typeof payoutRequest>;

/**
 * Records a payout and answers it (`pending`).
 *
 * @example
 * ```ts
 * const payout = await createPayout(deps, { tenantId, environment: "sandbox", input: { amount: 500, description: "Refill", recipient: { … } } });
 * payout.id; // "po_01J…"
 * ```
 * @throws {ValidationError} for a wallet no provider (or not the named one) reaches, a calling code or currency
 *   that is not the country's; `MoneyRuleError` (422) for a provider's limit or the balance; `NotConfiguredError`
 *   (424) when the provider has no account for the tenant there.
 */
export async function createPayout(
  deps: Deps,
  request: { tenantId: string; environment: Environment; input: PayoutRequest; idempotencyKey?: string },
): Promise<PayoutView> {
  const { tenantId, environment, input } = request;
  // The key's payout, committed by an earlier run of this request: answered as it stands, never made again.
  const made = await moneyOutByKey(deps.db, { tenantId, environment, purpose: "payout", key: request.idempotencyKey });
  if (made) {
    const same = Number(made.amount) === input.amount && made.description === input.description && made.operator === input.recipient.operator;
    if (!same) throw new AppError(422, "idempotency_mismatch", "This Idempotency-Key was already used with another request body");
    return toPayoutView(made);
  }
  const { phone, operator, ...names } = input.recipient;
  const messages: string[] = [];
  const routes = payoutRoutes(deps, operator, phone.country).filter((r) => input.provider === undefined || r.provider.name === input.provider);
  if (routes.length === 0)
    messages.push(
      input.provider === undefined
        ? `recipient.operator ${operator} cannot be paid out to in country ${phone.country}`
        : `provider ${input.provider} does not pay out to ${operator} in country ${phone.country}`,
    );
  const prefix = phonePrefixProblem("recipient.phone.number", phone.number, phone.country);
  if (prefix !== undefined) messages.push(prefix);
  const currency = routes[0]?.currency;
  if (currency !== undefined && input.currency !== undefined && input.currency !== currency)
    messages.push(`currency must be ${currency} for country ${phone.country}`);
  if (messages.length > 0) throw new ValidationError(messages);
  const { route, account } = await routeWithAccount(deps, routes, tenantId, environment);
  const row = await recordMoneyOut(deps, {
    tenantId,
    environment,
    purpose: "payout",
    route,
    account,
    amount: input.amount,
    description: input.description,
    ...(input.metadata !== undefined && { metadata: input.metadata }),
    recipient: { phone, operator, ...names },
    ...(request.idempotencyKey !== undefined && { idempotencyKey: request.idempotencyKey }),
  });
  return toPayoutView(row);
}
