/**
 * Provider B's PERMIT protocol — recurring debit authorisations (providers.md, "PERMIT"). The provider
 * publishes no document for it: this one file holds our protocol in the provider's style (wire types, the
 * four calls, and what a permit or charge IPN carries), so it can be swapped when the real document is in
 * hand. It knows nothing of tenants: the caller opens the credentials and picks the base URL.
 *
 * | Call | Wire |
 * |---|---|
 * | create | `POST /permit/create` → `{ response_code, response_text: <authorisation page URL>, token }` |
 * | confirm | `GET /permit/confirm/{token}` → `{ status, customer, max_amount, mode, … }` |
 * | charge | `POST /permit/charge` `{ permit_token, amount, description, custom_data, idempotency_key }` → `{ invoice_token, status, fail_reason }` |
 * | revoke | `POST /permit/revoke` `{ permit_token }` |
 *
 * A charge is an invoice of its own at provider B: its later state is read with the checkout client's
 * `confirmCheckoutInvoice(invoice_token)`, and its IPN carries `data[invoice][token]` and `data[permit_token]`.
 *
 * @example
 * ```ts
 * const permits = providerBPermitClient({ baseUrl, timeoutMs: 15_000, keys });
 * const { token, response_text: authorizationUrl } = await permits.createPermit(request);
 * const answer = await permits.chargePermit({ permit_token: token, amount: 5000, description: "Mai", custom_data: {}, idempotency_key: "chg_…" });
 * ```
 */
import { z } from "zod";
import { providerBCaller, type ProviderBClientOptions } from "./client.ts";
import { nullableText, SUCCESS_CODE, wireAmount } from "./wire.ts";
import type { IpnData } from "./ipn.ts";

/** Provider B's permit statuses (the same words as ours). */
export const PERMIT_STATUSES = ["pending", "active", "declined", "revoked", "expired"] as const;
export type ProviderPermitStatus = (typeof PERMIT_STATUSES)[number];

/** A charge's statuses in provider B's answer. */
export const CHARGE_STATUSES = ["completed", "failed", "pending"] as const;
export type ProviderChargeStatus = (typeof CHARGE_STATUSES)[number];

/** `response_code` of a refusal because the permit is not active (charge) or the move is not allowed (revoke). */
export const PERMIT_NOT_ACTIVE_CODE = "1004";
/** `response_code` of a charge above the permit's `max_amount`. */
export const AMOUNT_EXCEEDS_PERMIT_CODE = "1005";
/** `response_code` of an unknown token. */
export const NOT_FOUND_CODE = "1003";

/** `POST /permit/create`. */
export interface PermitCreateRequest {
  customer: { name: string; email?: string; phone: string };
  description: string;
  max_amount: number;
  custom_data: Record<string, string | number | boolean>;
  actions: { return_url: string; cancel_url: string; callback_url: string };
}

/** `POST /permit/charge`: the same `idempotency_key` never charges twice (provider B answers the first result again). */
export interface PermitChargeRequest {
  permit_token: string;
  amount: number;
  description: string;
  custom_data: Record<string, string | number | boolean>;
  idempotency_key: string;
}

export const permitCreated = z.looseObject({
  response_code: z.literal(SUCCESS_CODE),
  response_text: z.string().min(1),
  token: z.string().min(1),
});
export type PermitCreated = z.infer<typeof permitCreated>;

/** `GET /permit/confirm/{token}` — also the shape of a permit IPN's `data`. */
export const permitConfirmation = z.looseObject({
  response_code: z.literal(SUCCESS_CODE),
  permit: z.looseObject({ token: z.string().min(1) }),
  status: z.enum(PERMIT_STATUSES),
  max_amount: wireAmount.nullish().transform((value) => value ?? null),
  mode: z.enum(["test", "live"]),
  customer: z
    .looseObject({ name: nullableText, phone: nullableText, email: nullableText, payment_method: nullableText })
    .nullish()
    .transform((value) => value ?? null),
});
export type PermitConfirmation = z.infer<typeof permitConfirmation>;

export const permitChargeAnswer = z.looseObject({
  response_code: z.literal(SUCCESS_CODE),
  invoice_token: z.string().min(1),
  status: z.enum(CHARGE_STATUSES),
  fail_reason: nullableText,
});
export type PermitChargeAnswer = z.infer<typeof permitChargeAnswer>;

const permitRevoked = z.looseObject({ response_code: z.literal(SUCCESS_CODE) });

export interface ProviderBPermitClient {
  createPermit(request: PermitCreateRequest): Promise<PermitCreated>;
  /** The permit as provider B sees it now; an unknown token is a refusal (`1003`). */
  confirmPermit(token: string): Promise<PermitConfirmation>;
  /** A refusal (not active `1004`, over max `1005`, unknown `1003`) is a `refused` ProviderCallError: nothing was charged. */
  chargePermit(request: PermitChargeRequest): Promise<PermitChargeAnswer>;
  /** A refusal `1004` means the permit can no longer move to revoked (already revoked, declined or expired). */
  revokePermit(permitToken: string): Promise<void>;
}

/** The PERMIT calls of one merchant account and one mode. */
export function providerBPermitClient(options: ProviderBClientOptions): ProviderBPermitClient {
  const call = providerBCaller(options);
  return {
    createPermit: (request) => call("POST", "/permit/create", request, permitCreated),
    confirmPermit: (token) => call("GET", `/permit/confirm/${encodeURIComponent(token)}`, undefined, permitConfirmation),
    chargePermit: (request) => call("POST", "/permit/charge", request, permitChargeAnswer),
    revokePermit: async (permitToken) => void (await call("POST", "/permit/revoke", { permit_token: permitToken }, permitRevoked)),
  };
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

/** The permit token of a permit IPN (`data[permit][token]`), or null. */
export function permitTokenOfIpn(data: IpnData): string | null {
  const permit = data.permit;
  return isObject(permit) && typeof permit.token === "string" && permit.token.trim() !== "" ? permit.token.trim() : null;
}

/** The permit token a charge IPN names (`data[permit_token]`, beside `data[invoice][token]`), or null. */
export function permitTokenOfChargeIpn(data: IpnData): string | null {
  return typeof data.permit_token === "string" && data.permit_token.trim() !== "" ? data.permit_token.trim() : null;
}
