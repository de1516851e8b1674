/**
 * What the pay page (`/pay/{id}`) may see and do, without a token (issue 31 point 2): a link's public face —
 * the shop's name, what is paid, the wallets it takes in each country with their flows — a payment through
 * it, made by `POST /payments`'s own service (routing, failover) as the tenant's payment with the link
 * recorded, and that payment's progress. Everything is scoped to the link's id: a payment is shown only
 * through the link it was paid through, and nothing else of the tenant is ever answered.
 *
 * @module
 */
import { z } from "zod";
import type { Payment, PaymentLink } from "../../db/schema.ts";
import { ConflictError, NotFoundError, ValidationError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { isId } from "../ids.ts";
import { createPayment } from "../payments/create-payment.ts";
import type { RequestKey } from "../payments/payment-key.ts";
import { CURRENCIES } from "../payments/payment-view.ts";
import { countryField, phoneNumberField } from "../request-fields.ts";
import { listPaymentMethods } from "../routing/payment-methods.ts";
import { servedWallets } from "../routing/routes.ts";
import { isLinkId } from "./links.ts";
import { linkStatus, PAYMENT_LINK_STATUSES } from "./link-view.ts";

export const publicLinkSchema = z
  .object({
    id: z.string(),
    status: z.enum(PAYMENT_LINK_STATUSES),
    shop: z.string().meta({ description: "The merchant's name" }),
    description: z.string(),
    amount: z.number().int().nullable(),
    amountMin: z.number().int().nullable(),
    amountMax: z.number().int().nullable(),
    currency: z.enum(CURRENCIES),
    returnUrl: z.string().nullable(),
    environment: z.enum(["sandbox", "live"]),
    wallets: z
      .array(
        z.object({
          country: z.string(),
          operator: z.string(),
          flow: z.enum(["push", "otp", "redirect"]),
          otpHint: z.string().nullable().meta({ description: "How the customer gets the code, for flow otp" }),
        }),
      )
      .meta({ description: "The wallets the link takes, per country, that the merchant can take payments from" }),
    rescue: z
      .object({
        paymentId: z.string(),
        open: z.boolean().meta({ description: "Whether a try is taken now; false while one is under way (follow paymentId)" }),
        operator: z.string().nullable().meta({ description: "The wallet that stalled or failed" }),
        reason: z.string().meta({ description: "no_answer, or the failure the customer can fix" }),
      })
      .nullable()
      .meta({ description: "For a rescue URL (/pay/rs_…): the payment it rescues; null for a payment link" }),
  })
  .meta({ id: "PublicPaymentLink" });

export type PublicLinkView = z.infer<typeof publicLinkSchema>;

export const linkPaymentRequest = z
  .object({
    operator: z
      .string()
      .regex(/^[a-z][a-z0-9-]{1,31}$/, { error: "must be a lower-case operator name, like mtn" })
      .meta({ description: "The wallet's operator (one the link's wallets list)", example: "mtn" }),
    phone: z.object({ number: phoneNumberField, country: countryField }),
    amount: z.number().int().min(1).optional().meta({ description: "For a link whose amount the customer chooses" }),
    otp: z
      .string()
      .regex(/^[0-9]{4,8}$/, { error: "must be the 4 to 8 digits the customer got from the operator" })
      .optional()
      .meta({ description: "For a wallet whose flow is otp: the code the customer got by USSD", example: "123456" }),
  })
  .meta({ id: "PaymentLinkPaymentRequest" });

export type LinkPaymentRequest = z.infer<typeof linkPaymentRequest>;

export const publicPaymentSchema = z
  .object({
    id: z.string(),
    state: z.enum(["pending", "succeeded", "failed", "cancelled", "refunded"]),
    amount: z.number().int(),
    currency: z.enum(CURRENCIES),
    operator: z.string().nullable(),
    nextAction: z.object({ type: z.enum(["none", "enter_code", "open_url"]), url: z.string().optional(), instructions: z.string() }).nullable(),
    failureCode: z.string().nullable(),
    completedAt: z.string().nullable(),
    rescueUrl: z
      .string()
      .meta({ format: "uri-reference" })
      .nullable()
      .meta({ description: "When its push stalled or failed and a try is taken: the page (/pay/rs_…) to try again or choose another wallet" }),
  })
  .meta({ id: "PublicLinkPayment" });

export type PublicPaymentView = z.infer<typeof publicPaymentSchema>;

/** A payment as the pay page shows it (`rescueUrl`: its rescue's path, when one is offered and takes a try). */
export function publicPayment(row: Payment, rescueUrl: string | null = null): PublicPaymentView {
  return {
    rescueUrl,
    id: row.id,
    state: row.state,
    amount: Number(row.amount),
    currency: row.currency,
    operator: row.operator,
    nextAction: row.next_action ?? null,
    failureCode: row.failure_code,
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}

async function linkById(deps: Pick<Deps, "db">, id: string): Promise<PaymentLink> {
  const row = isLinkId(id) ? await deps.db.selectFrom("payment_links").selectAll().where("id", "=", id).executeTakeFirst() : undefined;
  if (!row) throw new NotFoundError("Payment link not found");
  return row;
}

/** The countries a link takes: its own list, or every country of its currency the gateway reaches. */
export function countriesOf(deps: Pick<Deps, "providers">, link: Pick<PaymentLink, "countries" | "currency">): string[] {
  if (link.countries) return link.countries;
  const all = [...new Set(servedWallets(deps).map((w) => w.country))];
  return all.filter((country) => (country === "gn") === (link.currency === "GNF"));
}

/** The wallets the tenant takes in `countries`, in `currency`, among `allowed` (null: every one): what the pay page offers. */
export async function walletsOffered(
  deps: Deps,
  scope: { tenantId: string; environment: "sandbox" | "live" },
  countries: readonly string[],
  currency: string,
  allowed: readonly string[] | null,
): Promise<PublicLinkView["wallets"]> {
  const wallets: PublicLinkView["wallets"] = [];
  for (const country of countries) {
    const { methods } = await listPaymentMethods(deps, scope, country);
    for (const method of methods)
      if (method.currency === currency && (allowed === null || allowed.includes(method.operator)))
        wallets.push({ country, operator: method.operator, flow: method.flow, otpHint: method.otpHint });
  }
  return wallets;
}

/** The link's public face: what the pay page shows. 404 for no such link. */
export async function publicPaymentLink(deps: Deps, id: string): Promise<PublicLinkView> {
  const link = await linkById(deps, id);
  const tenant = await deps.db.selectFrom("tenants").select(["name", "disabled"]).where("id", "=", link.tenant_id).executeTakeFirstOrThrow();
  const status = tenant.disabled && link.active ? "deactivated" : linkStatus(link, deps.now());
  const scope = { tenantId: link.tenant_id, environment: link.environment };
  const wallets = status === "active" ? await walletsOffered(deps, scope, countriesOf(deps, link), link.currency, link.wallets) : [];
  return {
    id: link.id,
    status,
    shop: tenant.name,
    description: link.description,
    amount: link.amount === null ? null : Number(link.amount),
    amountMin: link.amount_min === null ? null : Number(link.amount_min),
    amountMax: link.amount_max === null ? null : Number(link.amount_max),
    currency: link.currency,
    returnUrl: link.return_url,
    environment: link.environment,
    wallets,
    rescue: null,
  };
}

const REFUSALS: Record<Exclude<ReturnType<typeof linkStatus>, "active">, string> = {
  expired: "This payment link has expired",
  deactivated: "This payment link was deactivated by the merchant",
  used: "This payment link has already been paid",
};

/**
 * A payment through the link: `POST /payments`'s service, as the link's tenant, with the link's description,
 * reference and metadata and the link recorded on the payment — and the page's `Idempotency-Key` (`idempotency`,
 * under the call's path) as the payment's own.
 *
 * @throws {ConflictError} (409) for a link expired, deactivated or used; {@link ValidationError} for a country,
 *   wallet or amount the link does not take; and whatever `POST /payments` answers.
 */
export async function payThroughLink(deps: Deps, id: string, input: LinkPaymentRequest, idempotency?: RequestKey): Promise<PublicPaymentView> {
  const link = await linkById(deps, id);
  const tenant = await deps.db.selectFrom("tenants").select("disabled").where("id", "=", link.tenant_id).executeTakeFirstOrThrow();
  const status = tenant.disabled ? "deactivated" : linkStatus(link, deps.now());
  if (status !== "active") throw new ConflictError(REFUSALS[status]);
  const messages: string[] = [];
  if (!countriesOf(deps, link).includes(input.phone.country)) messages.push(`phone.country ${input.phone.country} is not taken by this link`);
  if (link.wallets !== null && !link.wallets.includes(input.operator)) messages.push(`operator ${input.operator} is not taken by this link`);
  let amount: number;
  if (link.amount !== null) {
    amount = Number(link.amount);
    if (input.amount !== undefined && input.amount !== amount) messages.push(`amount must be ${amount} for this link`);
  } else {
    amount = input.amount ?? 0;
    if (input.amount === undefined) messages.push("amount is required: this link's amount is the customer's to choose");
    else if (input.amount < Number(link.amount_min) || input.amount > Number(link.amount_max))
      messages.push(`amount must be between ${link.amount_min} and ${link.amount_max}`);
  }
  if (messages.length > 0) throw new ValidationError(messages);
  const payment = await createPayment(deps, {
    tenantId: link.tenant_id,
    environment: link.environment,
    paymentLinkId: link.id,
    ...(idempotency && { idempotency }),
    input: {
      amount,
      currency: link.currency,
      description: link.description,
      operator: input.operator,
      customer: { phone: input.phone },
      ...(input.otp !== undefined && { otp: input.otp }),
      ...(link.merchant_reference !== null && { merchantReference: link.merchant_reference }),
      ...(link.metadata !== null && { metadata: link.metadata }),
    },
  });
  const row = await deps.db.selectFrom("payments").selectAll().where("id", "=", payment.id).executeTakeFirstOrThrow();
  return publicPayment(row);
}

/** A payment made through the link, by the link's id and its own: 404 for any payment not paid through that link. */
export async function linkPayment(deps: Pick<Deps, "db">, id: string, paymentId: string): Promise<PublicPaymentView> {
  const row =
    isLinkId(id) && isId("pay", paymentId)
      ? await deps.db.selectFrom("payments").selectAll().where("id", "=", paymentId).where("payment_link_id", "=", id).executeTakeFirst()
      : undefined;
  if (!row) throw new NotFoundError("Payment not found");
  return publicPayment(row, await openRescuePath(deps, row));
}

/**
 * The path of the payment's rescue while it takes a try (`services/rescue/`): offered after the payment's last
 * attempt, the payment neither paid nor cancelled.
 */
async function openRescuePath(deps: Pick<Deps, "db">, row: Payment): Promise<string | null> {
  if (row.state !== "pending" && row.state !== "failed") return null;
  const rescue = await deps.db
    .selectFrom("payment_rescues")
    .select("id")
    .where("payment_id", "=", row.id)
    .where("offered_for_attempt", "=", (eb) =>
      eb
        .selectFrom("payment_attempts")
        .select((s) => s.fn.max("attempt").as("m"))
        .where("payment_attempts.payment_id", "=", row.id),
    )
    .executeTakeFirst();
  return rescue ? `/pay/${rescue.id}` : null;
}
