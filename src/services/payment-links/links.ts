/**
 * A tenant's payment links (issue 31 point 1): `POST /payment-links`, the list and the detail (with its QR
 * code, share texts and payments), and `PATCH` to deactivate. Every query is scoped to the tenant and the
 * environment: another tenant's link is 404, as if it did not exist.
 *
 * @module
 */
import { monotonicFactory } from "ulid";
import type { Currency, Environment, PaymentLink } from "../../db/schema.ts";
import { NotFoundError, ValidationError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { toPaymentView } from "../payments/payment-view.ts";
import { servedWallets } from "../routing/routes.ts";
import { type PaymentLinkDetailView, type PaymentLinkRequest, type PaymentLinkView, linkUrl, toPaymentLinkView } from "./link-view.ts";
import { qrCodes, shareTexts } from "./share.ts";

const ulid = monotonicFactory();

/**
 * A link's public id: `pl_` and 16 characters — a ULID's time (10) and the last 6 of its random part, so ids
 * sort by creation (newest first is id descending) and stay short enough to type from a printed page.
 */
export function newLinkId(): string {
  const id = ulid();
  return `pl_${id.slice(0, 10)}${id.slice(20)}`;
}

/** Whether `value` is shaped like a link id. */
export function isLinkId(value: string): boolean {
  return /^pl_[0-9A-HJKMNP-TV-Z]{16}$/.test(value);
}

/** The country whose customers pay in GNF; every other one the gateway reaches pays in XOF. */
const GNF_COUNTRY = "gn";

function currencyOfCountry(country: string): Currency {
  return country === GNF_COUNTRY ? "GNF" : "XOF";
}

/** The rules the schema alone cannot say: bounds in order, a currency its countries pay in, wallets that exist. */
function checkRequest(deps: Pick<Deps, "config" | "providers" | "now">, input: PaymentLinkRequest): { currency: Currency; messages: string[] } {
  const messages: string[] = [];
  const { amount } = input;
  if (typeof amount === "object" && amount.min > amount.max) messages.push("amount.min must not be greater than amount.max");
  const most = typeof amount === "number" ? amount : amount.max;
  if (most > deps.config.maxAmount) messages.push(`amount must not be greater than ${deps.config.maxAmount}`);
  const served = servedWallets(deps);
  const knownCountries = new Set(served.map((w) => w.country));
  for (const country of input.countries ?? [])
    if (!knownCountries.has(country)) messages.push(`countries: ${country} is not a country the gateway takes payments in`);
  const knownOperators = new Set(served.map((w) => w.operator));
  for (const operator of input.wallets ?? [])
    if (!knownOperators.has(operator)) messages.push(`wallets: ${operator} is not an operator the gateway takes payments from`);
  const currencies = new Set((input.countries ?? []).map(currencyOfCountry));
  if (currencies.size > 1) messages.push("countries must all pay in one currency (GNF in gn, XOF elsewhere)");
  const currency = input.currency ?? (currencies.size === 1 ? [...currencies][0]! : "XOF");
  if (currencies.size === 1 && !currencies.has(currency)) messages.push(`currency must be ${[...currencies][0]} for the countries given`);
  if (input.expiresAt !== undefined && new Date(input.expiresAt).getTime() <= deps.now().getTime()) messages.push("expiresAt must be in the future");
  return { currency, messages };
}

/** The link row of the tenant and environment; 404 for any other. */
export async function findLink(deps: Pick<Deps, "db">, scope: { tenantId: string; environment: Environment }, id: string): Promise<PaymentLink> {
  const row = isLinkId(id)
    ? await deps.db
        .selectFrom("payment_links")
        .selectAll()
        .where("id", "=", id)
        .where("tenant_id", "=", scope.tenantId)
        .where("environment", "=", scope.environment)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new NotFoundError("Payment link not found");
  return row;
}

/** The detail: the view, its QR codes, its share texts (with the tenant's name) and its latest payments. */
async function detailOf(deps: Deps, row: PaymentLink): Promise<PaymentLinkDetailView> {
  const view = toPaymentLinkView(row, { publicBaseUrl: deps.config.publicBaseUrl, now: deps.now() });
  const [tenant, payments, qr] = await Promise.all([
    deps.db.selectFrom("tenants").select("name").where("id", "=", row.tenant_id).executeTakeFirstOrThrow(),
    deps.db
      .selectFrom("payments")
      .selectAll()
      .where("payment_link_id", "=", row.id)
      .where("tenant_id", "=", row.tenant_id)
      .orderBy("id", "desc")
      .limit(100)
      .execute(),
    qrCodes(view.url),
  ]);
  return { ...view, qr, share: shareTexts({ ...view, shop: tenant.name }), payments: payments.map(toPaymentView) };
}

/**
 * Creates a link and answers its detail (URL, QR code, share texts).
 *
 * @example
 * ```ts
 * const link = await createPaymentLink(deps, { tenantId, environment: "sandbox" }, { amount: 2500, description: "Commande 42", reusable: false });
 * link.url; // "https://…/pay/pl_01KBB4W5Z0M3Q9XC"
 * ```
 * @throws {ValidationError} for an amount given both ways or neither, a currency its countries do not pay in, an unknown wallet or country, a past expiry.
 */
export async function createPaymentLink(
  deps: Deps,
  scope: { tenantId: string; environment: Environment },
  input: PaymentLinkRequest,
): Promise<PaymentLinkDetailView> {
  const { currency, messages } = checkRequest(deps, input);
  if (messages.length > 0) throw new ValidationError(messages);
  if (scope.environment === "live" && input.returnUrl !== undefined && !input.returnUrl.startsWith("https:"))
    throw new ValidationError(["returnUrl must be an https URL in live"]);
  const now = deps.now();
  const row = await deps.db
    .insertInto("payment_links")
    .values({
      id: newLinkId(),
      tenant_id: scope.tenantId,
      environment: scope.environment,
      amount: typeof input.amount === "number" ? input.amount : null,
      amount_min: typeof input.amount === "number" ? null : input.amount.min,
      amount_max: typeof input.amount === "number" ? null : input.amount.max,
      currency,
      description: input.description,
      reusable: input.reusable,
      expires_at: input.expiresAt === undefined ? null : new Date(input.expiresAt),
      wallets: input.wallets === undefined ? null : [...new Set(input.wallets)],
      countries: input.countries === undefined ? null : [...new Set(input.countries)],
      metadata: input.metadata ?? null,
      merchant_reference: input.merchantReference ?? null,
      return_url: input.returnUrl ?? null,
      created_at: now,
      updated_at: now,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  return detailOf(deps, row);
}

/** One link of the tenant with its QR code, share texts and payments. */
export async function getPaymentLink(deps: Deps, scope: { tenantId: string; environment: Environment }, id: string): Promise<PaymentLinkDetailView> {
  return detailOf(deps, await findLink(deps, scope, id));
}

/** The tenant's links in the environment, newest first, a page at a time. */
export async function listPaymentLinks(
  deps: Deps,
  scope: { tenantId: string; environment: Environment },
  page: { limit: number; cursor?: string | undefined; active?: boolean | undefined },
): Promise<{ data: PaymentLinkView[]; nextCursor: string | null }> {
  let after: string | undefined;
  if (page.cursor !== undefined) {
    after = /^[A-Za-z0-9_-]+$/.test(page.cursor) ? Buffer.from(page.cursor, "base64url").toString("utf8") : "";
    if (!isLinkId(after)) throw new ValidationError(["cursor must be a nextCursor returned by an earlier page"]);
  }
  let query = deps.db
    .selectFrom("payment_links")
    .selectAll()
    .where("tenant_id", "=", scope.tenantId)
    .where("environment", "=", scope.environment)
    .orderBy("id", "desc")
    .limit(page.limit + 1);
  if (after !== undefined) query = query.where("id", "<", after);
  if (page.active !== undefined) query = query.where("active", "=", page.active);
  const rows = await query.execute();
  const now = deps.now();
  const shown = rows.slice(0, page.limit);
  return {
    data: shown.map((row) => toPaymentLinkView(row, { publicBaseUrl: deps.config.publicBaseUrl, now })),
    nextCursor: rows.length > page.limit ? Buffer.from(shown[shown.length - 1]!.id).toString("base64url") : null,
  };
}

/** Deactivates a link: its pay page says so and takes no payment from then on. Deactivating it again changes nothing. */
export async function deactivatePaymentLink(deps: Deps, scope: { tenantId: string; environment: Environment }, id: string): Promise<PaymentLinkDetailView> {
  const row = await findLink(deps, scope, id);
  if (!row.active) return detailOf(deps, row);
  const now = deps.now();
  const updated = await deps.db
    .updateTable("payment_links")
    .set({ active: false, deactivated_at: now, updated_at: now })
    .where("id", "=", row.id)
    .where("tenant_id", "=", scope.tenantId)
    .returningAll()
    .executeTakeFirstOrThrow();
  return detailOf(deps, updated);
}

export { linkUrl };
