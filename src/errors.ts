/**
 * Errors are values of a small set of classes, thrown by services and routers and mapped in exactly one
 * place (`map-error.ts`) to what every surface answers: the HTTP error shape of contract §1, its
 * headers (`Retry-After`, `WWW-Authenticate`), the token endpoint's RFC 6749 variant and tRPC's code.
 * Nothing here knows about HTTP beyond the status number each class stands for.
 */

/** Every `code` of contract §1: the one list, also the `code` enum of the OpenAPI document's `Error` schema. */
export const ERROR_CODES = [
  "validation_failed",
  "unauthorized",
  "forbidden",
  "tenant_mismatch",
  "tenant_disabled",
  "not_found",
  "conflict",
  "idempotency_in_flight",
  "idempotency_mismatch",
  "payload_too_large",
  "headers_too_large",
  "unsupported_media_type",
  "provider_refused",
  "amount_exceeds_permit",
  "permit_not_active",
  "payment_not_refundable",
  "amount_exceeds_refundable",
  "insufficient_balance",
  "payout_limit_exceeded",
  "not_configured",
  "rate_limited",
  "provider_error",
  "provider_timeout",
  "unavailable",
  "internal",
] as const;

/** A `code` of contract §1. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Extra fields some errors add to the body (provider refusals, unknown outcomes, rate limits). */
export interface ErrorExtras {
  providerErrors?: string[];
  providerResponseCode?: string;
  /**
   * On a 502/504: the payment that was sent and whose outcome is unknown (the USSD push may have reached
   * the phone). The caller follows it by its status and events; the same `Idempotency-Key` replays it.
   */
  paymentId?: string;
  /** Provider A's id of that payment, when the provider had answered its create call. */
  transactionId?: number;
  /** Seconds; sent as the `Retry-After` header, not in the body. */
  retryAfter?: number;
}

/** The base of every error the gateway means to show a caller. */
export class AppError extends Error {
  override name = "AppError";
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly extras: ErrorExtras = {},
  ) {
    super(message);
  }
}

/** 400 with one message per violation, phrased `<path> <rule>`. */
export class ValidationError extends AppError {
  override name = "ValidationError";
  constructor(readonly messages: string[]) {
    super(400, "validation_failed", messages.join("; "));
  }
}

/** 400 for a request that cannot be read at all (malformed JSON, a body that is not an object). */
export class BadRequestError extends AppError {
  override name = "BadRequestError";
  constructor(message: string) {
    super(400, "validation_failed", message);
  }
}

export class UnauthorizedError extends AppError {
  override name = "UnauthorizedError";
  constructor(message = "Missing or invalid bearer token") {
    super(401, "unauthorized", message);
  }
}

/**
 * RFC 6750 §3.1 `invalid_token`: a bearer token was sent and refused (malformed, forged, expired, revoked, an
 * unknown API key). Still a 401 `unauthorized` (contract §1); its class names the error in the
 * `WWW-Authenticate` challenge.
 */
export class InvalidTokenError extends UnauthorizedError {
  override name = "InvalidTokenError";
}

export class ForbiddenError extends AppError {
  override name = "ForbiddenError";
  constructor(message: string, code: "forbidden" | "tenant_mismatch" | "tenant_disabled" = "forbidden") {
    super(403, code, message);
  }
}

/** 404 — unknown, or not the caller's: never reveals that another tenant's object exists. */
export class NotFoundError extends AppError {
  override name = "NotFoundError";
  constructor(message = "Not found") {
    super(404, "not_found", message);
  }
}

export class ConflictError extends AppError {
  override name = "ConflictError";
  constructor(message: string, code: "conflict" | "idempotency_in_flight" | "permit_not_active" | "payment_not_refundable" = "conflict") {
    super(409, code, message);
  }
}

export class PayloadTooLargeError extends AppError {
  override name = "PayloadTooLargeError";
  constructor(limitBytes: number) {
    super(413, "payload_too_large", `Request body is larger than ${limitBytes} bytes`);
  }
}

/** 431 — the request's head (its request line and header fields) is over the gateway's limit. */
export class HeadersTooLargeError extends AppError {
  override name = "HeadersTooLargeError";
  constructor(limitBytes: number) {
    super(431, "headers_too_large", `Request line and headers are larger than ${limitBytes} bytes`);
  }
}

export class UnsupportedMediaTypeError extends AppError {
  override name = "UnsupportedMediaTypeError";
  constructor(accepted: string[]) {
    super(415, "unsupported_media_type", `Content-Type must be ${accepted.join(" or ")}`);
  }
}

/**
 * 422 — the request is well formed but the money does not allow it: a refund above what is left of the
 * payment, a payout beyond the tenant's available balance, or beyond a limit the provider documents.
 */
export class MoneyRuleError extends AppError {
  override name = "MoneyRuleError";
  constructor(code: "amount_exceeds_refundable" | "insufficient_balance" | "payout_limit_exceeded", message: string) {
    super(422, code, message);
  }
}

/** 424 — the tenant is not configured for this (e.g. no provider B credentials in that environment). */
export class NotConfiguredError extends AppError {
  override name = "NotConfiguredError";
  constructor(message: string) {
    super(424, "not_configured", message);
  }
}

export class RateLimitedError extends AppError {
  override name = "RateLimitedError";
  constructor(retryAfterSeconds: number, message = "Too many requests") {
    super(429, "rate_limited", message, { retryAfter: retryAfterSeconds });
  }
}

/**
 * A provider refused (422), answered garbage or 5xx (502), or did not answer in time (504). A 502/504
 * that left a payment in flight names it (`paymentId`, `transactionId`).
 */
export class ProviderError extends AppError {
  override name = "ProviderError";
  constructor(
    status: 422 | 502 | 504,
    message: string,
    extras: Pick<ErrorExtras, "providerErrors" | "providerResponseCode" | "paymentId" | "transactionId"> = {},
  ) {
    super(status, status === 422 ? "provider_refused" : status === 504 ? "provider_timeout" : "provider_error", message, extras);
  }
}

export class UnavailableError extends AppError {
  override name = "UnavailableError";
  constructor(message = "A dependency is unavailable") {
    super(503, "unavailable", message);
  }
}
