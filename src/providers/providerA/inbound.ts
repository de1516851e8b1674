/**
 * Provider A's webhooks (contract §4, providers.md): `POST /providerA/webhook/{environment}` for the
 * service's account and `…/{environment}/{tenant_id}` for a tenant's own, read as raw bytes (the signature
 * covers them exactly). No bearer token: provider A cannot send one; the signature is the authentication.
 * Each is verified with that account's webhook secret only — raw bytes, `t=…,s=…`, 300 s tolerance,
 * constant time — and applied only to a transaction of that account and environment. The body is never
 * trusted: a verified webhook only says "read this transaction again", and that read is what is applied
 * (`syncFromProvider`). `payout.sent` / `payout.failed` name our payout by its `merchant_reference` (our
 * `po_`/`rf_` id); the domain reads that payout again (`followPayout`). Unknown transactions and payouts are
 * answered 200 (else the provider retries forever).
 */
import { z } from "zod";
import type { ZodOpenApiPathItemObject } from "zod-openapi";
import type { Environment } from "../../config.ts";
import { precompile } from "../../db/precompiled.ts";
import type { Payment, PayoutRow } from "../../db/schema.ts";
import { NotFoundError, UnauthorizedError } from "../../errors.ts";
import { errorBodySchema } from "../../http/error-body.ts";
import { readRawBody } from "../../http/body-limit.ts";
import { syncFromProvider } from "../../services/direct-payments/refresh.ts";
import { followAbandonedAttempt } from "../../services/payments/abandoned-attempts.ts";
import { followPayout } from "../../services/payouts/follow-payout.ts";
import type { Deps } from "../../services/deps.ts";
import { isId } from "../../services/ids.ts";
import type { InboundRoute } from "../provider.ts";
import { SERVICE_ACCOUNT, serviceAccount, tenantAccount } from "./accounts.ts";
import { verifyProviderASignature } from "./signature.ts";
import { wirePayoutWebhookSchema, wireWebhookSchema } from "./wire.ts";

export interface ProviderAWebhook {
  environment: string;
  /** Present on the tenant's route. */
  tenantId?: string;
  rawBody: Uint8Array;
  signature: string | null;
}

const utf8 = new TextDecoder();

/** What a webhook names, read before its signature is checked: only used to find the record (and its account) it is about. */
interface WebhookFacts {
  /** `payout.sent`, `payout.failed`: the entity is a payout. */
  aboutPayout?: boolean;
  transactionId?: number;
  merchantReference?: string;
}

function parseLoosely(rawBody: Uint8Array): WebhookFacts {
  try {
    const json: unknown = JSON.parse(utf8.decode(rawBody));
    const payout = wirePayoutWebhookSchema.safeParse(json);
    if (payout.success && payout.data.name.startsWith("payout."))
      return { aboutPayout: true, merchantReference: payout.data.entity.merchant_reference ?? undefined };
    const parsed = wireWebhookSchema.safeParse(json);
    if (!parsed.success || !parsed.data.entity) return {};
    const reference = (parsed.data.entity as { merchant_reference?: unknown }).merchant_reference;
    return { transactionId: parsed.data.entity.id, merchantReference: typeof reference === "string" ? reference : undefined };
  } catch {
    return {};
  }
}

/** Our payout and refund ids (`po_`/`rf_` + ULID), which provider A carries as the payout's `merchant_reference`. */
const OUR_PAYOUT_ID = /^(po|rf)_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The payout of this account and environment a `payout.*` webhook is about (by our id, its `merchant_reference`). */
async function findPayout(
  deps: Pick<Deps, "db">,
  scope: { environment: Environment; tenantId?: string },
  facts: WebhookFacts,
): Promise<Pick<PayoutRow, "id" | "credential_version"> | undefined> {
  if (!facts.merchantReference || !OUR_PAYOUT_ID.test(facts.merchantReference)) return undefined;
  const base = deps.db
    .selectFrom("payouts")
    .select(["id", "credential_version"])
    .where("id", "=", facts.merchantReference)
    .where("environment", "=", scope.environment)
    .where("provider", "=", "providerA");
  const scoped = scope.tenantId
    ? base.where("tenant_id", "=", scope.tenantId).where("provider_account", "!=", SERVICE_ACCOUNT)
    : base.where("provider_account", "=", SERVICE_ACCOUNT);
  return scoped.executeTakeFirst();
}

/**
 * The payment a webhook is about, precompiled (one look-up runs per webhook). Its shape is `account:key`:
 * the service's account or a tenant's own, and `key` the provider's id or our `pay_` id (of a payment the
 * provider has not numbered yet).
 */
const paymentLookup = precompile<{ environment: Environment; tenant_id: string; key: string }>()((db, p, shape) => {
  const [account, key] = shape.split(":");
  const base = db.selectFrom("payments").selectAll().where("environment", "=", p.environment).where("provider", "=", "providerA");
  const scoped =
    account === "tenant"
      ? base.where("tenant_id", "=", p.tenant_id).where("provider_account", "!=", SERVICE_ACCOUNT)
      : base.where("provider_account", "=", SERVICE_ACCOUNT);
  return key === "provider"
    ? scoped.where("provider_transaction_id", "=", p.key).orderBy("id", "desc").limit(1)
    : scoped.where("id", "=", p.key).where("provider_transaction_id", "is", null);
});

/** The payment of this account and environment the webhook is about: by provider id, else by our `pay_` id. */
async function findPayment(deps: Pick<Deps, "db">, scope: { environment: Environment; tenantId?: string }, facts: WebhookFacts): Promise<Payment | undefined> {
  const account = scope.tenantId ? "tenant" : "service";
  const base = { environment: scope.environment, tenant_id: scope.tenantId ?? "" };
  if (facts.transactionId !== undefined) {
    const { rows } = await paymentLookup(deps.db, { ...base, key: String(facts.transactionId) }, `${account}:provider`);
    if (rows[0]) return rows[0];
  }
  if (facts.merchantReference && isId("pay", facts.merchantReference))
    return (await paymentLookup(deps.db, { ...base, key: facts.merchantReference }, `${account}:ours`)).rows[0];
  return undefined;
}

/**
 * Verifies and applies one webhook.
 *
 * @throws {NotFoundError} for an environment that is not `sandbox` or `live`;
 *   {@link UnauthorizedError} when the signature does not check out with the account's secret.
 */
export async function receiveProviderAWebhook(deps: Deps, webhook: ProviderAWebhook): Promise<{ received: true }> {
  if (webhook.environment !== "sandbox" && webhook.environment !== "live") throw new NotFoundError("Not found");
  const environment: Environment = webhook.environment;
  const facts = parseLoosely(webhook.rawBody);
  const scope = { environment, tenantId: webhook.tenantId };
  if (webhook.tenantId !== undefined && !isId("ten", webhook.tenantId)) throw new UnauthorizedError("Invalid provider A webhook signature");
  const payment = facts.aboutPayout ? undefined : await findPayment(deps, scope, facts);
  const payout = facts.aboutPayout ? await findPayout(deps, scope, facts) : undefined;

  // The account the route stands for: the payment's (or payout's) own credential version when the webhook
  // is about one of ours, the active one otherwise.
  const version = (payment ?? payout)?.credential_version ?? undefined;
  const account = webhook.tenantId ? await tenantAccount(deps, { tenantId: webhook.tenantId, environment, version }) : serviceAccount(deps, environment);
  const secret = account?.webhookSecret;
  const verified =
    !!secret &&
    verifyProviderASignature({ header: webhook.signature, rawBody: webhook.rawBody, secrets: [secret], nowSeconds: Math.floor(deps.now().getTime() / 1000) });
  if (!verified) {
    deps.logger.warn({ environment, tenantId: webhook.tenantId }, "provider A webhook with a bad signature refused");
    throw new UnauthorizedError("Invalid provider A webhook signature");
  }
  if (payment) await syncFromProvider(deps, payment);
  // No payment of ours carries that id any more: an attempt a routed payment moved on from, maybe.
  else if (!facts.aboutPayout && facts.transactionId !== undefined)
    await followAbandonedAttempt(deps, { provider: "providerA", providerPaymentId: String(facts.transactionId) });
  // The domain reads the payout again from provider A; the body is never applied.
  if (payout) await followPayout(deps, { provider: "providerA", payoutId: payout.id });
  return { received: true };
}

function describe(withTenant: boolean): ZodOpenApiPathItemObject {
  return {
    post: {
      operationId: withTenant ? "providerA-webhook-tenant" : "providerA-webhook",
      tags: ["providerA"],
      summary: withTenant ? "Provider A webhook for a tenant's own account" : "Provider A webhook for the service's account",
      description:
        "Sent by provider A on every status change, " +
        "signed with `X-FEDAPAY-SIGNATURE: t=<unix>,s=<hex HMAC-SHA256>` over the raw body with that account's webhook secret (300 s tolerance). " +
        "The transaction (or, for `payout.sent` / `payout.failed`, the payout named by its `merchant_reference`) is then read again from provider A. " +
        "Unknown transactions and payouts are acknowledged with 200.",
      requestParams: {
        path: z.object({
          environment: z.enum(["sandbox", "live"]),
          ...(withTenant ? { tenant_id: z.string().min(1).max(64).meta({ description: "The tenant whose own provider A account sends it" }) } : {}),
        }),
        header: z.object({ "x-fedapay-signature": z.string().meta({ description: "t=<unix>,s=<hex>[,s=<hex>]" }) }),
      },
      requestBody: { content: { "application/json": { schema: z.looseObject({ name: z.string(), entity: z.looseObject({ id: z.number().int() }) }) } } },
      responses: {
        200: { description: "Received", content: { "application/json": { schema: z.object({ received: z.literal(true) }) } } },
        401: { description: "Bad, old or foreign signature", content: { "application/json": { schema: errorBodySchema } } },
      },
    },
  };
}

const handle: InboundRoute["handle"] = async (deps, request, params) => {
  const result = await receiveProviderAWebhook(deps, {
    environment: params.environment ?? "",
    tenantId: params.tenant_id,
    rawBody: await readRawBody(request),
    signature: request.headers.get("x-fedapay-signature"),
  });
  return Response.json(result);
};

/** Provider A's two webhook routes. */
export const PROVIDER_A_WEBHOOK_ROUTES: InboundRoute[] = [
  { method: "POST", path: "/providerA/webhook/{environment}", handle, openapi: describe(false) },
  { method: "POST", path: "/providerA/webhook/{environment}/{tenant_id}", handle, openapi: describe(true) },
];
