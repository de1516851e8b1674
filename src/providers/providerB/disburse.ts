/**
 * Provider B's disburse v2 API — money sent to a mobile-money wallet (providers-money-out.md, "B (PayDunya)
 * disburse v2"): its wire types and the four calls of one merchant account. It knows nothing of tenants:
 * the caller opens the credentials and gives the environment's base URL (`…/sandbox-api/v1` or `…/api/v1`),
 * from which the disburse base `…/api/v2` is derived on the same host.
 *
 * | Call | Wire |
 * |---|---|
 * | get-invoice | `POST /disburse/get-invoice` `{ account_alias, amount, withdraw_mode, callback_url, disburse_id }` → `{ disburse_token }`; moves no money |
 * | submit-invoice | `POST /disburse/submit-invoice` `{ disburse_invoice, disburse_id }` → `{ transaction_id, status? }`; sends it |
 * | check-status | `POST /disburse/check-status` `{ disburse_invoice }` → `{ status, amount: "5000.00", … }` |
 * | check-balance | `GET /disburse/check-balance` → `{ success, "Balance SN": "738612.00 XOF", … }` |
 *
 * Refusals come as HTTP 200 with `response_code` ≠ `"00"` (the client makes them `refused`): `4002` no funds
 * or a callback URL that did not answer, `1001` bad keys (also every test key: provider B has no disburse
 * sandbox), `5000` a `disburse_id` used before.
 *
 * @example
 * ```ts
 * const disburse = providerBDisburseClient({ baseUrl: config.providerB.liveUrl, timeoutMs: 15_000, keys });
 * const { disburse_token } = await disburse.getInvoice({ account_alias: "771234567", amount: 5000, withdraw_mode: "wave-senegal", callback_url, disburse_id: "po_…" });
 * await disburse.submitInvoice({ disburse_invoice: disburse_token, disburse_id: "po_…" });
 * const { status } = await disburse.checkStatus(disburse_token);
 * ```
 */
import { z } from "zod";
import { providerBCaller, type ProviderBClientOptions } from "./client.ts";
import { nullableText, SUCCESS_CODE, wireAmount } from "./wire.ts";

/** The path provider B posts a disbursement's callback to (its `callback_url`, on the gateway's public base URL). */
export const DISBURSE_CALLBACK_PATH = "/providerB/webhook/disburse";

/** `response_code` of a refusal for lack of funds (or a callback URL that did not answer 2xx at get-invoice). */
export const NO_FUNDS_CODE = "4002";
/** `response_code` of a `disburse_id` used before. */
export const DUPLICATE_ID_CODE = "5000";
/** `response_code` of keys provider B does not accept (every sandbox key at the disburse API). */
export const INVALID_KEYS_CODE = "1001";

/** A disbursement's statuses: `created` (get-invoice, nothing sent), `pending` (at the operator), then `success` or `failed`. */
export const DISBURSE_STATUSES = ["created", "pending", "success", "failed"] as const;
export type DisburseStatus = (typeof DISBURSE_STATUSES)[number];

/** `POST /disburse/get-invoice`. */
export interface DisburseInvoiceRequest {
  /** The recipient's national number. */
  account_alias: string;
  amount: number;
  withdraw_mode: string;
  callback_url: string;
  /** Our id: provider B refuses (`5000`) a second submit under it. */
  disburse_id: string;
}

/** `POST /disburse/submit-invoice`. */
export interface DisburseSubmitRequest {
  disburse_invoice: string;
  disburse_id: string;
}

/** Ids provider B sends as strings or numbers. */
const wireId = z
  .union([z.string(), z.number()])
  .nullish()
  .transform((value) => (value === null || value === undefined || value === "" ? null : String(value)));

/** Status words, in the lower case integrators report (the provider's page shows them capitalised). */
const statusWord = z
  .string()
  .trim()
  .min(1)
  .transform((value) => value.toLowerCase());

export const disburseInvoiceCreated = z.looseObject({ response_code: z.literal(SUCCESS_CODE), disburse_token: z.string().min(1) });
export type DisburseInvoiceCreated = z.infer<typeof disburseInvoiceCreated>;

export const disburseSubmitted = z.looseObject({
  response_code: z.literal(SUCCESS_CODE),
  response_text: z.unknown().optional(),
  transaction_id: wireId,
  provider_ref: wireId,
  status: statusWord.optional(),
});
export type DisburseSubmitted = z.infer<typeof disburseSubmitted>;

/** `POST /disburse/check-status`; a callback carries the same fields, flat. */
export const disburseStatusAnswer = z.looseObject({
  response_code: z.literal(SUCCESS_CODE),
  status: statusWord,
  token: z.string().optional(),
  withdraw_mode: nullableText,
  amount: wireAmount.nullish().transform((value) => value ?? null),
  /** Not documented; read when it is there. */
  fee: wireAmount.nullish().transform((value) => value ?? null),
  transaction_id: wireId,
  disburse_tx_id: wireId,
  updated_at: nullableText,
});
export type DisburseStatusAnswer = z.infer<typeof disburseStatusAnswer>;

/**
 * `GET /disburse/check-balance`: `{ success, description }` and one `Balance XX` field per country, e.g.
 * `"Balance SN": "738612.00 XOF"` (the client refuses `success: false`).
 */
export const disburseBalanceAnswer = z.looseObject({});
export type DisburseBalanceAnswer = z.infer<typeof disburseBalanceAnswer>;

export interface ProviderBDisburseClient {
  /** Records a disbursement (nothing is sent) and answers its token. Provider B first posts an empty body to `callback_url`. */
  getInvoice(request: DisburseInvoiceRequest): Promise<DisburseInvoiceCreated>;
  /** Sends it. A lost answer is an unknown outcome: read it with `checkStatus`, never submit it again. */
  submitInvoice(request: DisburseSubmitRequest): Promise<DisburseSubmitted>;
  checkStatus(token: string): Promise<DisburseStatusAnswer>;
  checkBalance(): Promise<DisburseBalanceAnswer>;
}

/**
 * The disburse base of an environment's API URL: `…/sandbox-api/v1` or `…/api/v1` → `…/api/v2` on the same
 * host and mount path (provider B has one disburse API, and no sandbox of it).
 */
export function disburseBaseUrl(apiUrl: string): string {
  const url = new URL(apiUrl);
  url.pathname = `${url.pathname.replace(/\/+$/, "").replace(/\/(sandbox-api|api)\/v1$/, "")}/api/v2`;
  return url.toString().replace(/\/+$/, "");
}

/** The disburse calls of one merchant account; `options.baseUrl` is the environment's v1 API URL. */
export function providerBDisburseClient(options: ProviderBClientOptions): ProviderBDisburseClient {
  const call = providerBCaller({ ...options, baseUrl: disburseBaseUrl(options.baseUrl) });
  return {
    getInvoice: (request) => call("POST", "/disburse/get-invoice", request, disburseInvoiceCreated),
    submitInvoice: (request) => call("POST", "/disburse/submit-invoice", request, disburseSubmitted),
    checkStatus: (token) => call("POST", "/disburse/check-status", { disburse_invoice: token }, disburseStatusAnswer),
    checkBalance: () => call("GET", "/disburse/check-balance", undefined, disburseBalanceAnswer),
  };
}
