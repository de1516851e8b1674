/**
 * Provider B's HTTP client: create a hosted checkout invoice and confirm one, with the merchant's keys in
 * the four `PAYDUNYA-*` headers. It knows nothing of tenants: the caller opens the credentials and picks
 * the base URL. Every failure is a {@link ProviderCallError} (`../provider.ts`), the same as every
 * provider's: a refusal (any status whose body carries a `response_code` other than "00", or — in an answer
 * without one, such as the disburse API's balance — `success: false`) is `refused` with that code as `providerCode`; garbage or a 5xx is `server_error`; no connection is `unreachable`; no
 * answer within the timeout is `timeout`. The domain answers them 422, 502 and 504. A call that fails on
 * our side, before provider B answered (a key that cannot travel in a header, DNS, a refused connection,
 * the timeout), is also logged with its reason: the failure alone does not say why.
 *
 * @example
 * ```ts
 * const client = providerBClient({ baseUrl: config.providerB.sandboxUrl, timeoutMs: 15_000, keys });
 * const { token, response_text: pageUrl } = await client.createCheckoutInvoice(request);
 * const confirmation = await client.confirmCheckoutInvoice(token);
 * ```
 */
import type { Logger } from "pino";
import type { z } from "zod";
import { failureReason } from "../failure-reason.ts";
import { observeProviderCall } from "../observe-call.ts";
import { ProviderCallError, type ProviderFailureKind } from "../provider.ts";
import type { ProviderCallOutcome, ProviderMetrics } from "../provider.ts";
import {
  checkoutConfirmation,
  checkoutInvoiceCreated,
  providerAnswer,
  SUCCESS_CODE,
  successFlag,
  type CheckoutConfirmation,
  type CheckoutInvoiceCreated,
  type CheckoutInvoiceCreateRequest,
} from "./wire.ts";

/** A merchant account's keys (spec 2.5). */
export interface ProviderBKeys {
  masterKey: string;
  privateKey: string;
  token: string;
  publicKey?: string;
}

export interface ProviderBClientOptions {
  /** Including the version path: `…/sandbox-api/v1` or `…/api/v1`. */
  baseUrl: string;
  timeoutMs: number;
  keys: ProviderBKeys;
  fetch?: typeof fetch;
  /** Where a call that got no answer is reported (provider, operation, reason; never a key). */
  logger?: Pick<Logger, "warn">;
  /** Observes every call (`passerelle_provider_call_duration_seconds`). */
  metrics?: Pick<ProviderMetrics, "providerCall">;
}

export interface ProviderBClient {
  createCheckoutInvoice(request: CheckoutInvoiceCreateRequest): Promise<CheckoutInvoiceCreated>;
  /** The invoice as provider B sees it now; an unknown token is a refusal (`1003`). */
  confirmCheckoutInvoice(token: string): Promise<CheckoutConfirmation>;
}

/** The key headers of a call (`PAYDUNYA-PUBLIC-KEY` only when the merchant has one). */
export function keyHeaders(keys: ProviderBKeys): Record<string, string> {
  const headers: Record<string, string> = {
    "PAYDUNYA-MASTER-KEY": keys.masterKey,
    "PAYDUNYA-PRIVATE-KEY": keys.privateKey,
    "PAYDUNYA-TOKEN": keys.token,
  };
  if (keys.publicKey) headers["PAYDUNYA-PUBLIC-KEY"] = keys.publicKey;
  return headers;
}

/** One call to provider B, its answer checked against `schema`; failures are {@link ProviderCallError}s. */
export type ProviderBCall = <T extends z.ZodType>(method: "GET" | "POST", path: string, body: unknown, schema: T) => Promise<z.output<T>>;

/**
 * The calls of one merchant account and one mode, with the error mapping above: shared by this client
 * and the PERMIT adapter (`permit.ts`).
 */
export function providerBCaller(options: ProviderBClientOptions): ProviderBCall {
  const baseUrl = options.baseUrl.replace(/\/+$/, "");
  const doFetch = options.fetch ?? fetch;

  const send = async <T extends z.ZodType>(method: "GET" | "POST", path: string, body: unknown, schema: T): Promise<z.output<T>> => {
    let response: Response;
    try {
      response = await doFetch(`${baseUrl}${path}`, {
        method,
        headers: { ...keyHeaders(options.keys), "content-type": "application/json", accept: "application/json" },
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: "manual",
        signal: AbortSignal.timeout(options.timeoutMs),
      });
    } catch (error) {
      const name = error instanceof Error ? error.name : "";
      const operation = operationOf(method, path);
      options.logger?.warn(
        { provider: "providerB", operation, reason: failureReason(error, Object.values(options.keys)) },
        "provider call failed before an answer",
      );
      if (name === "TimeoutError" || name === "AbortError") throw failed("timeout", `Provider B did not answer within ${options.timeoutMs} ms`);
      throw failed("unreachable", "Provider B could not be reached");
    }
    let json: unknown;
    try {
      json = await response.json();
    } catch {
      throw failed("server_error", `Provider B answered ${response.status} without a JSON body`, { status: response.status });
    }
    const answer = providerAnswer.safeParse(json);
    if (!answer.success) return readSuccessFlag(json, response.status, schema);
    // The provider's SDKs only read the body: a 4xx with a response_code is a refusal, not garbage.
    if (answer.data.response_code !== SUCCESS_CODE) {
      if (response.status >= 500) throw failed("server_error", `Provider B failed with ${response.status}`, { status: response.status });
      const text = typeof answer.data.response_text === "string" && answer.data.response_text ? answer.data.response_text : "Provider B refused the request";
      throw failed("refused", text, { status: response.status, providerCode: answer.data.response_code });
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) throw failed("server_error", "Provider B answered with an unexpected body", { status: response.status });
    return parsed.data;
  };
  const metrics = options.metrics;
  if (!metrics) return send;
  const outcomeOf = (error: unknown): ProviderCallOutcome => (error instanceof ProviderCallError ? OUTCOMES[error.kind] : "error");
  return function call<T extends z.ZodType>(method: "GET" | "POST", path: string, body: unknown, schema: T): Promise<z.output<T>> {
    return observeProviderCall(metrics, "providerB", operationOf(method, path), outcomeOf, () => send(method, path, body, schema));
  };
}

/**
 * An answer without `response_code`: the disburse API's `check-balance` says `{ success, description, … }`
 * instead. `success: false` is a refusal, `true` is read with `schema`; anything else is garbage.
 */
function readSuccessFlag<T extends z.ZodType>(json: unknown, status: number, schema: T): z.output<T> {
  const flag = successFlag.safeParse(json);
  if (!flag.success || status >= 500) throw failed("server_error", `Provider B answered ${status} without a response_code`, { status });
  if (!flag.data.success) {
    const text = typeof flag.data.description === "string" && flag.data.description ? flag.data.description : "Provider B refused the request";
    throw failed("refused", text, { status });
  }
  const parsed = schema.safeParse(json);
  if (!parsed.success) throw failed("server_error", "Provider B answered with an unexpected body", { status });
  return parsed.data;
}

const failed = (kind: ProviderFailureKind, message: string, details: ProviderCallError["details"] = {}) =>
  new ProviderCallError("providerB", kind, message, details);

/** The metrics outcome of each failure. */
const OUTCOMES: Record<ProviderFailureKind, ProviderCallOutcome> = { refused: "refused", timeout: "timeout", unreachable: "error", server_error: "error" };

/** The invoice or permit token in a confirm path is not a key, but the operation is named by its route (a bounded set of values). */
function operationOf(method: string, path: string): string {
  return `${method} ${path.replace(/\/confirm\/[^/]+$/, "/confirm/{token}")}`;
}

/** Builds a client for one merchant account and one mode (the base URL says which). */
export function providerBClient(options: ProviderBClientOptions): ProviderBClient {
  const call = providerBCaller(options);
  return {
    createCheckoutInvoice: (request) => call("POST", "/checkout-invoice/create", request, checkoutInvoiceCreated),
    confirmCheckoutInvoice: (token) => call("GET", `/checkout-invoice/confirm/${encodeURIComponent(token)}`, undefined, checkoutConfirmation),
  };
}
