/**
 * A third provider, written the way docs/adding-a-provider.md says a provider is written: "provider C", a
 * small mobile-money API served over real HTTP by the test ({@link startProviderC}), and its adapter
 * ({@link providerC}) implementing the port with nothing but the library's public exports. It takes Wave
 * payments in Senegal by a push to the phone, answers `PENDING` / `SUCCESSFUL` / `FAILED`, and notifies
 * the gateway with an HMAC-SHA256 of the raw body in `x-providerc-signature`. It declares itself: its
 * variables (`PROVIDER_C_URL`, `PROVIDER_C_API_KEY`, `PROVIDER_C_NOTIFY_SECRET`), the credentials a tenant
 * may store for its own account (an API key), its label and its inbound route.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { z } from "zod";
import {
  CollectionError,
  type CollectionStarted,
  type Environment,
  type Payment,
  type PaymentProvider,
  type PaymentReport,
  ProviderCallError,
  type ProviderContext,
  type UssdPushRequest,
} from "../../src/mod.ts";

// ---------------------------------------------------------------------------------------------------
// The provider's own API: what a real provider runs on its side (the test's stand-in for its servers).
// ---------------------------------------------------------------------------------------------------

interface Collection {
  id: string;
  reference: string;
  amount: number;
  currency: string;
  msisdn: string;
  status: "PENDING" | "SUCCESSFUL" | "FAILED";
}

export interface ProviderCServer {
  url: string;
  /** Every collection it holds, by its id. */
  collections: Map<string, Collection>;
  /** Every request it received, as `METHOD /path`. */
  calls: string[];
  /** The bearer each collection was created with, by its id. */
  createdWith: Map<string, string>;
  /** Where it posts its notifications (the gateway's inbound route). */
  notifyUrl: string | undefined;
  /** The customer settles a collection on the phone: the status changes and a signed notification is posted. */
  settle(id: string, status: "SUCCESSFUL" | "FAILED", options?: { notify?: boolean }): Promise<number | undefined>;
  stop(): Promise<void>;
}

export function signProviderC(secret: string, body: string): string {
  return createHmac("sha256", secret).update(body).digest("hex");
}

/** Starts provider C's API on a free port; `apiKeys` are the bearers of its accounts, `secret` signs its notifications. */
export function startProviderC(options: { apiKeys: string[]; secret: string }): ProviderCServer {
  const collections = new Map<string, Collection>();
  const calls: string[] = [];
  const createdWith = new Map<string, string>();
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const url = new URL(request.url);
      calls.push(`${request.method} ${url.pathname}`);
      if (!options.apiKeys.some((key) => request.headers.get("authorization") === `Bearer ${key}`))
        return Response.json({ error: "unauthorized" }, { status: 401 });
      if (request.method === "POST" && url.pathname === "/v1/collections") {
        const body = (await request.json()) as Omit<Collection, "id" | "status">;
        if (body.amount > 100_000) return Response.json({ error: "amount_too_high" }, { status: 422 });
        const collection: Collection = { ...body, id: `col_${collections.size + 1}`, status: "PENDING" };
        collections.set(collection.id, collection);
        createdWith.set(collection.id, request.headers.get("authorization")!.slice("Bearer ".length));
        return Response.json(collection, { status: 201 });
      }
      const found = /^\/v1\/collections\/([\w-]+)$/.exec(url.pathname);
      if (request.method === "GET" && found) {
        const collection = collections.get(found[1]!);
        return collection ? Response.json(collection) : Response.json({ error: "not_found" }, { status: 404 });
      }
      return Response.json({ error: "not_found" }, { status: 404 });
    },
  });
  const self: ProviderCServer = {
    url: server.url.toString().replace(/\/$/, ""),
    collections,
    calls,
    createdWith,
    notifyUrl: undefined,
    async settle(id, status, settleOptions = {}) {
      const collection = collections.get(id);
      if (!collection) throw new Error(`provider C holds no collection ${id}`);
      collection.status = status;
      if (settleOptions.notify === false || !self.notifyUrl) return undefined;
      const body = JSON.stringify({ event: "collection.updated", data: { id, status } });
      const answer = await fetch(self.notifyUrl, {
        method: "POST",
        headers: { "content-type": "application/json", "x-providerc-signature": signProviderC(options.secret, body) },
        body,
      });
      return answer.status;
    },
    stop: () => server.stop(true),
  };
  return self;
}

// ---------------------------------------------------------------------------------------------------
// The adapter: what would live in src/providers/providerC/ (client, wire ↔ domain, signature, inbound).
// ---------------------------------------------------------------------------------------------------

const wireCollection = z.object({ id: z.string(), reference: z.string(), status: z.enum(["PENDING", "SUCCESSFUL", "FAILED"]) });

const STATE_OF = { PENDING: "pending", SUCCESSFUL: "succeeded", FAILED: "failed" } as const;

function toReport(wire: z.infer<typeof wireCollection>): PaymentReport {
  return {
    providerPaymentId: wire.id,
    reference: wire.reference,
    providerStatus: wire.status,
    state: STATE_OF[wire.status],
    errorCode: null,
    approvedAt: null,
  };
}

/** Provider C's configuration section (`config.providerC`), from the variables it declares. */
export interface ProviderCSettings {
  url: string;
  /** The service's own account. */
  apiKey: string;
  /** What its notifications are signed with. */
  notifySecret: string;
}

type ProviderCContext = ProviderContext<{ providerC: ProviderCSettings }>;

/** The API key a payment is made with: the tenant's own (a version of its stored set), or the service's. */
async function apiKeyOf(context: ProviderCContext, account: { tenantId: string; environment: Environment; accountId: string; version: number | null }) {
  if (account.accountId === "service") return context.config.providerC.apiKey;
  const opened = await context.gateway.openAccount({
    provider: "providerC",
    tenantId: account.tenantId,
    environment: account.environment,
    version: account.version ?? undefined,
  });
  if (!opened?.fields.apiKey) throw new ProviderCallError("providerC", "refused", "Provider C: the tenant's credentials are gone");
  return opened.fields.apiKey;
}

async function call(context: ProviderCContext, apiKey: string, method: "GET" | "POST", path: string, body?: unknown): Promise<z.infer<typeof wireCollection>> {
  let response: Response;
  try {
    response = await fetch(`${context.config.providerC.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(5_000),
    });
  } catch (error) {
    const refused = (error as { code?: string }).code === "ConnectionRefused" || (error as { code?: string }).code === "ECONNREFUSED";
    throw new ProviderCallError("providerC", refused ? "unreachable" : "timeout", "Provider C did not answer");
  }
  const json = (await response.json().catch(() => undefined)) as unknown;
  if (response.status >= 400 && response.status < 500)
    throw new ProviderCallError("providerC", "refused", `Provider C refused the request (${(json as { error?: string })?.error ?? response.status})`, {
      status: response.status,
    });
  const parsed = wireCollection.safeParse(json);
  if (!response.ok || !parsed.success) throw new ProviderCallError("providerC", "server_error", "Provider C failed to answer", { status: response.status });
  return parsed.data;
}

async function startCollection(context: ProviderCContext, request: UssdPushRequest): Promise<CollectionStarted> {
  try {
    const apiKey = await apiKeyOf(context, { ...request, accountId: request.account.accountId, version: request.account.credentialVersion });
    const created = await call(context, apiKey, "POST", "/v1/collections", {
      reference: request.paymentId,
      amount: request.amount,
      currency: request.currency,
      msisdn: request.phone.number,
    });
    const started = { providerPaymentId: created.id, reference: created.reference, providerStatus: created.status };
    // One call both records and pushes: the domain stores the id before we answer.
    await request.recorded(started);
    return started;
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    throw new CollectionError(error, "create", undefined, error.outcomeUnknown);
  }
}

async function readPayment(context: ProviderCContext, payment: Payment): Promise<PaymentReport | null> {
  if (payment.provider_transaction_id === null) return null;
  const apiKey = await apiKeyOf(context, {
    tenantId: payment.tenant_id,
    environment: payment.environment,
    accountId: payment.provider_account,
    version: payment.credential_version,
  });
  try {
    return toReport(await call(context, apiKey, "GET", `/v1/collections/${encodeURIComponent(payment.provider_transaction_id)}`));
  } catch (error) {
    if (error instanceof ProviderCallError && error.status === 404) return null;
    throw error;
  }
}

/** Provider C's adapter: its account and secret come from the configuration section it declares. */
export const providerC: PaymentProvider<ProviderCContext> = {
  name: "providerC",
  label: "Provider C",
  configuration: {
    variables: {
      PROVIDER_C_URL: z.url({ protocol: /^https?$/ }).default("https://api.provider-c.example"),
      PROVIDER_C_API_KEY: z.string().min(8),
      PROVIDER_C_NOTIFY_SECRET: z.string().min(8),
    },
    section: (values) => ({
      url: values.PROVIDER_C_URL as string,
      apiKey: values.PROVIDER_C_API_KEY as string,
      notifySecret: values.PROVIDER_C_NOTIFY_SECRET as string,
    }),
  },
  credentials: {
    fields: [{ name: "apiKey", label: { en: "API key", fr: "Clé d'API" } }],
    summary: "the tenant's own provider C account",
    title: { en: "Your own provider C account (optional)", fr: "Votre propre compte fournisseur C (facultatif)" },
    hint: { en: "Wave payments in Senegal go through it when it is stored.", fr: "Les paiements Wave au Sénégal passent par ce compte s'il est enregistré." },
  },
  capabilities: {
    collect: ["ussd_push"],
    recurring: false,
    payout: false,
    refund: false,
    refundsOutsideGateway: false,
    methods: [{ method: "wave_sn", operator: "wave", country: "sn", currency: "XOF", collection: "ussd_push" }],
    limits: { minAmount: 1, maxAmount: 100_000 },
  },
  async accountFor(context, tenantId, environment) {
    const own = await context.gateway.openAccount({ provider: "providerC", tenantId, environment });
    return own ? { accountId: own.id, credentialVersion: own.version } : { accountId: "service", credentialVersion: null };
  },
  startCollection: (context, request) => startCollection(context, request as UssdPushRequest),
  readPayment,
  inbound: [
    {
      method: "POST",
      path: "/providerC/notify",
      openapi: {
        post: {
          operationId: "providerC-notify",
          summary: "Provider C's notifications",
          responses: { 200: { description: "Received" }, 401: { description: "Bad signature" } },
        },
      },
      async handle(context, request) {
        const raw = await request.text();
        const given = Buffer.from(request.headers.get("x-providerc-signature") ?? "", "hex");
        const expected = Buffer.from(signProviderC(context.config.providerC.notifySecret, raw), "hex");
        if (given.length !== expected.length || !timingSafeEqual(given, expected)) return Response.json({ error: "bad signature" }, { status: 401 });
        const id = (JSON.parse(raw) as { data?: { id?: unknown } }).data?.id;
        // Checked above with provider C's one secret: the gateway's intake finds the payment and reads it again.
        if (typeof id === "string")
          await context.gateway.intake({
            about: "payment",
            provider: "providerC",
            scope: null,
            providerPaymentId: id,
            paymentId: null,
            authenticate: async () => "ok",
          });
        return Response.json({ received: true });
      },
    },
  ],
};
