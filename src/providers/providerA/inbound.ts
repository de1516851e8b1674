/**
 * Provider A's webhooks (contract §4, providers.md): `POST /providerA/webhook/{environment}` for the
 * service's account and `…/{environment}/{tenant_id}` for a tenant's own, read as raw bytes (the signature
 * covers them exactly). No bearer token: provider A cannot send one; the signature is the authentication.
 * Each is verified with that account's webhook secret only — raw bytes, `t=…,s=…`, 300 s tolerance,
 * constant time — and applied only to a transaction of that account and environment. The body is never
 * trusted: a verified webhook only says "read this transaction again", and that read is what is applied
 * (by the gateway's intake, `services/ipn/intake.ts`). `payout.sent` / `payout.failed` name our payout by its
 * `merchant_reference` (our `po_`/`rf_` id); the intake reads that payout again. Unknown transactions and
 * payouts are answered 200 (else the provider retries forever). This route only reads the request and
 * describes it; finding the record and its account version is the intake's.
 */
import { z } from "zod";
import type { ZodOpenApiPathItemObject } from "zod-openapi";
import { NotFoundError, UnauthorizedError } from "../../errors.ts";
import { readRawBody } from "../../http/body-limit.ts";
import { errorBodySchema } from "../../error-body.ts";
import type { Environment, InboundNotice, InboundRoute, NoticeAuthentication } from "../provider.ts";
import { type ProviderAContext, serviceAccount, tenantAccount } from "./accounts.ts";
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

/**
 * The signature check the intake runs once it knows the account: that account's webhook secret only
 * (the service's, or the tenant's version the record was made with, else its active one).
 */
function authenticateWith(context: ProviderAContext, webhook: ProviderAWebhook): NoticeAuthentication {
  return async (account) => {
    const opened =
      account.tenantId !== null
        ? await tenantAccount(context, { tenantId: account.tenantId, environment: account.environment, version: account.credentialVersion ?? undefined })
        : serviceAccount(context, account.environment);
    const secret = opened?.webhookSecret;
    const nowSeconds = Math.floor(context.now().getTime() / 1000);
    if (secret && verifyProviderASignature({ header: webhook.signature, rawBody: webhook.rawBody, secrets: [secret], nowSeconds })) return "ok";
    context.logger.warn({ environment: account.environment, tenantId: webhook.tenantId }, "provider A webhook with a bad signature refused");
    throw new UnauthorizedError("Invalid provider A webhook signature");
  };
}

/**
 * What one webhook names, for the gateway's intake: a payout (by our id) or a transaction (by provider A's
 * id, or ours while it has none), on the route's account.
 *
 * @throws {NotFoundError} for an environment that is not `sandbox` or `live`.
 */
export function describeWebhook(context: ProviderAContext, webhook: ProviderAWebhook): InboundNotice {
  if (webhook.environment !== "sandbox" && webhook.environment !== "live") throw new NotFoundError("Not found");
  const environment: Environment = webhook.environment;
  const facts = parseLoosely(webhook.rawBody);
  const scope = { environment, tenantId: webhook.tenantId ?? null };
  const authenticate = authenticateWith(context, webhook);
  if (facts.aboutPayout) return { about: "payout", provider: "providerA", scope, payoutId: facts.merchantReference ?? null, authenticate };
  return {
    about: "payment",
    provider: "providerA",
    scope,
    providerPaymentId: facts.transactionId === undefined ? null : String(facts.transactionId),
    paymentId: facts.merchantReference ?? null,
    authenticate,
  };
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

const handle: InboundRoute<ProviderAContext>["handle"] = async (context, request, params) => {
  const notice = describeWebhook(context, {
    environment: params.environment ?? "",
    tenantId: params.tenant_id,
    rawBody: await readRawBody(request),
    signature: request.headers.get("x-fedapay-signature"),
  });
  await context.gateway.intake(notice);
  return Response.json({ received: true });
};

/** Provider A's two webhook routes. */
export const PROVIDER_A_WEBHOOK_ROUTES: InboundRoute<ProviderAContext>[] = [
  { method: "POST", path: "/providerA/webhook/{environment}", handle, openapi: describe(false) },
  { method: "POST", path: "/providerA/webhook/{environment}/{tenant_id}", handle, openapi: describe(true) },
];
