/**
 * Provider A's HTTP client (providers.md): bearer secret key, JSON both ways, a timeout per call, and an
 * inline retry of a refused connection only — nothing was sent then, so sending again (with the same
 * `Idempotency-Key`) cannot charge twice. A timeout or a 5xx after sending is reported as such and
 * settled later by reading the transaction, never by sending blind again. Knows nothing of tenants.
 * A call that fails on our side, before provider A answered, is logged with its reason (never the key).
 */
import type { Logger } from "pino";
import type { z } from "zod";
import { REAL_TIMERS } from "../../timers.ts";
import { failureReason } from "../failure-reason.ts";
import { observeProviderCall } from "../observe-call.ts";
import { ProviderCallError, type ProviderFailureKind } from "../provider.ts";
import type { ProviderCallOutcome, ProviderMetrics, Timers } from "../provider.ts";
import {
  type WireBalance,
  type WireCreatePayout,
  type WireCreateTransaction,
  type WireMode,
  type WirePayout,
  type WireTransaction,
  wireBalancesSchema,
  wireErrorSchema,
  wirePayoutEnvelopeSchema,
  wirePayoutListSchema,
  wireTokenSchema,
  wireTransactionEnvelopeSchema,
} from "./wire.ts";

export interface ProviderAClientOptions {
  /** Without `/v1` (`https://sandbox-api.fedapay.com`, or the simulator's mount). */
  baseUrl: string;
  secretKey: string;
  /** Per call (`PROVIDER_TIMEOUT_MS`). */
  timeoutMs: number;
  fetch?: typeof fetch;
  /** Waits before the retries of a refused connection. Default 100 ms, 400 ms (two retries). */
  connectRetryDelaysMs?: readonly number[];
  /** What those waits run on: the context's `timers` (a test's virtual time); default the process's ({@link REAL_TIMERS}). */
  timers?: Timers;
  /** Where a call that got no answer is reported (provider, operation, reason; never the key). */
  logger?: Pick<Logger, "warn">;
  /** Observes every call (`passerelle_provider_call_duration_seconds`). */
  metrics?: Pick<ProviderMetrics, "providerCall">;
}

/** The operation label of a call: its route, ids and references replaced (a bounded set of values). */
function operationOf(method: string, path: string): string {
  const route = path.replace(/^\/(transactions|payouts)\/merchant\/[^/]+$/, "/$1/merchant/{reference}").replace(/^\/(transactions|payouts)\/\d+/, "/$1/{id}");
  return `${method} /v1${route}`;
}

const OUTCOMES: Record<ProviderFailureKind, ProviderCallOutcome> = {
  refused: "refused",
  timeout: "timeout",
  unreachable: "error",
  server_error: "error",
};

function isConnectionRefused(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === "ECONNREFUSED" || code === "ConnectionRefused";
}

function flattenErrors(errors: Record<string, string[] | string> | undefined): string[] {
  if (!errors) return [];
  return Object.entries(errors).flatMap(([field, messages]) => (Array.isArray(messages) ? messages : [messages]).map((m) => `${field} ${m}`));
}

type Method = "GET" | "POST" | "PUT";

/** A provider A client for one account. */
export function createProviderAClient(options: ProviderAClientOptions) {
  const doFetch = options.fetch ?? fetch;
  const base = `${options.baseUrl.replace(/\/+$/, "")}/v1`;
  const retryDelays = options.connectRetryDelaysMs ?? [100, 400];
  const timers = options.timers ?? REAL_TIMERS;
  const wait = (ms: number) => new Promise<void>((resolve) => timers.setTimeout(resolve, ms));

  async function call<T>(method: Method, path: string, schema: z.ZodType<T> | null, init: { body?: unknown; idempotencyKey?: string } = {}): Promise<T> {
    if (!options.metrics) return send(method, path, schema, init);
    const outcomeOf = (error: unknown): ProviderCallOutcome => (error instanceof ProviderCallError ? OUTCOMES[error.kind] : "error");
    return observeProviderCall(options.metrics, "providerA", operationOf(method, path), outcomeOf, () => send(method, path, schema, init));
  }

  type Init = { body?: unknown; idempotencyKey?: string };
  async function send<T>(method: Method, path: string, schema: z.ZodType<T> | null, init: Init): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${options.secretKey}`, accept: "application/json" };
    if (init.body !== undefined) headers["content-type"] = "application/json";
    if (init.idempotencyKey) headers["idempotency-key"] = init.idempotencyKey;
    const body = init.body === undefined ? undefined : JSON.stringify(init.body);
    let response: Response | undefined;
    let text = "";
    for (let attempt = 0; ; attempt++) {
      try {
        response = await doFetch(`${base}${path}`, { method, headers, body, redirect: "manual", signal: AbortSignal.timeout(options.timeoutMs) });
        text = await response.text();
        break;
      } catch (error) {
        const delay = isConnectionRefused(error) ? retryDelays[attempt] : undefined;
        if (delay !== undefined) {
          await wait(delay);
          continue;
        }
        options.logger?.warn(
          { provider: "providerA", operation: `${method} /v1${path}`, reason: failureReason(error, [options.secretKey]) },
          "provider call failed before an answer",
        );
        if (isConnectionRefused(error)) throw new ProviderCallError("providerA", "unreachable", "Provider A refused the connection");
        const name = (error as { name?: string } | null)?.name;
        if (name === "TimeoutError" || name === "AbortError")
          throw new ProviderCallError("providerA", "timeout", `Provider A did not answer within ${options.timeoutMs} ms`);
        throw new ProviderCallError("providerA", "server_error", "The connection to provider A broke before it answered");
      }
    }
    let json: unknown;
    try {
      json = text === "" ? null : JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (response.status >= 400 && response.status < 500) {
      const parsed = wireErrorSchema.safeParse(json);
      const message = (parsed.success && parsed.data.message) || `Provider A refused the request (HTTP ${response.status})`;
      throw new ProviderCallError("providerA", "refused", message, {
        status: response.status,
        providerErrors: parsed.success ? flattenErrors(parsed.data.errors) : [],
      });
    }
    if (response.status >= 500 || response.status < 200 || response.status >= 300)
      throw new ProviderCallError("providerA", "server_error", `Provider A answered HTTP ${response.status}`, { status: response.status });
    if (schema === null) return json as T;
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw new ProviderCallError("providerA", "server_error", "Provider A answered something unreadable", { status: response.status });
    return parsed.data;
  }

  const transaction = async (method: Method, path: string, init?: { body?: unknown; idempotencyKey?: string }): Promise<WireTransaction> =>
    (await call(method, path, wireTransactionEnvelopeSchema, init))["v1/transaction"];

  return {
    /** `POST /v1/transactions`, with `idempotencyKey` (our `pay_` id) as the `Idempotency-Key`. */
    createTransaction(body: WireCreateTransaction, idempotencyKey: string): Promise<WireTransaction> {
      return transaction("POST", "/transactions", { body, idempotencyKey });
    },
    /** `POST /v1/transactions/{id}/token` → the payment token. */
    async createToken(transactionId: number): Promise<string> {
      return (await call("POST", `/transactions/${transactionId}/token`, wireTokenSchema)).token;
    },
    /** `POST /v1/{mode}` `{ token }`: sends the USSD prompt. The answer is undocumented, so it is not read. */
    async sendNow(mode: WireMode, token: string, idempotencyKey: string): Promise<void> {
      await call("POST", `/${mode}`, null, { body: { token }, idempotencyKey });
    },
    /** `GET /v1/transactions/{id}`. */
    getTransaction(transactionId: number): Promise<WireTransaction> {
      return transaction("GET", `/transactions/${transactionId}`);
    },
    /** `GET /v1/transactions/merchant/{reference}`: finds the transaction we created with that `merchant_reference`. */
    getByMerchantReference(reference: string): Promise<WireTransaction> {
      return transaction("GET", `/transactions/merchant/${encodeURIComponent(reference)}`);
    },
    /** `POST /v1/payouts`: records a pending payout (nothing is sent before it is started). */
    async createPayout(body: WireCreatePayout): Promise<WirePayout> {
      return (await call("POST", "/payouts", wirePayoutEnvelopeSchema, { body }))["v1/payout"];
    },
    /** `PUT /v1/payouts/start` `{ payouts: [{ id }] }`: sends the payout now. Its answer is the started payouts. */
    async startPayout(payoutId: number): Promise<WirePayout[]> {
      return (await call("PUT", "/payouts/start", wirePayoutListSchema, { body: { payouts: [{ id: payoutId }] } }))["v1/payouts"];
    },
    /** `GET /v1/payouts/{id}`. */
    async getPayout(payoutId: number): Promise<WirePayout> {
      return (await call("GET", `/payouts/${payoutId}`, wirePayoutEnvelopeSchema))["v1/payout"];
    },
    /** `GET /v1/payouts/merchant/{reference}`: the payout we created with that `merchant_reference` (404 when none). */
    async getPayoutByMerchantReference(reference: string): Promise<WirePayout> {
      return (await call("GET", `/payouts/merchant/${encodeURIComponent(reference)}`, wirePayoutEnvelopeSchema))["v1/payout"];
    },
    /** `GET /v1/balances`: one balance per mode and currency. */
    async listBalances(): Promise<WireBalance[]> {
      return (await call("GET", "/balances", wireBalancesSchema))["v1/balances"];
    },
  };
}

export type ProviderAClient = ReturnType<typeof createProviderAClient>;
