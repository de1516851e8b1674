/**
 * The single mapping from anything thrown to what the gateway answers: the HTTP status, the error shape of
 * contract §1 (`{ statusCode, message, error, code, requestId, providerErrors?, providerResponseCode?,
 * paymentId?, transactionId? }`), the headers (`Retry-After`, `WWW-Authenticate`) and tRPC's code. Every
 * surface answers through it: the REST bridge and the HTTP layer send the body ({@link mapError}), the
 * token endpoint its RFC 6749 §5.2 variant (`mapError(…, "oauth")`), and `/trpc` carries the same body as
 * `error.data.httpBody` in tRPC's envelope ({@link trpcErrorShape}). Errors themselves are `errors.ts`'s
 * classes; nothing else knows an HTTP status, a reason phrase or a tRPC code.
 *
 * @example
 * ```ts
 * const mapped = mapError(new RateLimitedError(3), requestId);
 * // { status: 429, body: { statusCode: 429, code: "rate_limited", … }, headers: { "retry-after": "3" }, trpcCode: "TOO_MANY_REQUESTS", unexpected: false }
 * ```
 */
import { TRPCError, type TRPC_ERROR_CODE_KEY } from "@trpc/server";
import { TRPC_ERROR_CODES_BY_KEY } from "@trpc/server/rpc";
import { isDatabaseUnavailable } from "./db/availability.ts";
import { BASIC_CHALLENGE, type ErrorBody, type OAuthErrorBody } from "./error-body.ts";
import { AppError, InvalidTokenError, ValidationError, type ErrorCode } from "./errors.ts";

/** What an error is answered with, on any surface. */
export interface MappedError {
  status: number;
  /** The contract's body; on the token endpoint, its {@link OAuthErrorBody} variant. */
  body: ErrorBody;
  headers: Record<string, string>;
  /** tRPC's code for `status` (`UNAUTHORIZED`, `NOT_FOUND`, …), for `/trpc`'s envelope. */
  trpcCode: TRPC_ERROR_CODE_KEY;
  /** True when the error is ours to fix (5xx that is not a provider's or a dependency's). */
  unexpected: boolean;
}

/** How the body is written: the contract's (every route), or RFC 6749 §5.2's (the OAuth2 token endpoint). */
export type ErrorDialect = "contract" | "oauth";

interface StatusRow {
  /** The HTTP reason phrase: the body's `error`. */
  reason: string;
  /** tRPC's code for the status, on `/trpc`. */
  trpc: TRPC_ERROR_CODE_KEY;
  /** When tRPC itself throws this code (protocol misuse: batching, wrong method, …): the contract's code for it. */
  fromTrpc?: ErrorCode;
}

// Every status the gateway answers with an error. 424 has no tRPC code: PRECONDITION_FAILED says the same to a
// client — the call cannot succeed until something about the tenant changes (its provider credentials), and
// retrying as is will not help.
const STATUSES: Record<number, StatusRow> = {
  400: { reason: "Bad Request", trpc: "BAD_REQUEST", fromTrpc: "validation_failed" },
  401: { reason: "Unauthorized", trpc: "UNAUTHORIZED", fromTrpc: "unauthorized" },
  403: { reason: "Forbidden", trpc: "FORBIDDEN", fromTrpc: "forbidden" },
  404: { reason: "Not Found", trpc: "NOT_FOUND", fromTrpc: "not_found" },
  405: { reason: "Method Not Allowed", trpc: "METHOD_NOT_SUPPORTED", fromTrpc: "not_found" },
  409: { reason: "Conflict", trpc: "CONFLICT", fromTrpc: "conflict" },
  413: { reason: "Payload Too Large", trpc: "PAYLOAD_TOO_LARGE", fromTrpc: "payload_too_large" },
  415: { reason: "Unsupported Media Type", trpc: "UNSUPPORTED_MEDIA_TYPE", fromTrpc: "unsupported_media_type" },
  // tRPC has no code for 431; the HTTP layer answers it before any procedure, BAD_REQUEST in `/trpc`'s envelope.
  431: { reason: "Request Header Fields Too Large", trpc: "BAD_REQUEST" },
  422: { reason: "Unprocessable Entity", trpc: "UNPROCESSABLE_CONTENT" },
  424: { reason: "Failed Dependency", trpc: "PRECONDITION_FAILED" },
  429: { reason: "Too Many Requests", trpc: "TOO_MANY_REQUESTS", fromTrpc: "rate_limited" },
  500: { reason: "Internal Server Error", trpc: "INTERNAL_SERVER_ERROR" },
  502: { reason: "Bad Gateway", trpc: "BAD_GATEWAY" },
  503: { reason: "Service Unavailable", trpc: "SERVICE_UNAVAILABLE" },
  504: { reason: "Gateway Timeout", trpc: "GATEWAY_TIMEOUT" },
};

/** tRPC's own errors, by code: the status and contract code they are answered with. */
const FROM_TRPC = new Map<TRPC_ERROR_CODE_KEY, [number, ErrorCode]>(
  Object.entries(STATUSES).flatMap(([status, row]) => (row.fromTrpc ? [[row.trpc, [Number(status), row.fromTrpc]] as const] : [])),
);

/** The HTTP reason phrase of a status. */
export function reasonPhrase(status: number): string {
  return STATUSES[status]?.reason ?? "Error";
}

/** tRPC's code for an HTTP status (`INTERNAL_SERVER_ERROR` for one it has none for). */
export function trpcCodeOf(status: number): TRPC_ERROR_CODE_KEY {
  return STATUSES[status]?.trpc ?? "INTERNAL_SERVER_ERROR";
}

interface IssueLike {
  code: string;
  path: readonly PropertyKey[];
  message: string;
  input?: unknown;
  expected?: string;
  values?: readonly unknown[];
  minimum?: number | bigint;
  maximum?: number | bigint;
  inclusive?: boolean;
  origin?: string;
  format?: string;
  keys?: readonly string[];
}

// Our schemas phrase their own rules ("must be in international format, …"); zod's defaults start with a
// capital ("Invalid input: …") and are rephrased here in the spec's `<path> <rule>` style.
const OWN_RULE = /^(must|should|is|cannot|has|may) /;

function describeType(expected: string | undefined): string {
  switch (expected) {
    case "string":
      return "a string";
    case "number":
      return "a number";
    case "int":
      return "an integer number";
    case "boolean":
      return "a boolean value";
    case "object":
      return "an object";
    case "array":
      return "an array";
    default:
      return `of type ${expected ?? "unknown"}`;
  }
}

/** Phrases one zod issue as `<dotted.path> <rule>`, class-validator style. */
export function formatIssue(issue: IssueLike): string {
  const path = issue.path.length > 0 ? issue.path.map(String).join(".") : "body";
  if (OWN_RULE.test(issue.message)) return `${path} ${issue.message}`;
  switch (issue.code) {
    case "invalid_value":
      if (issue.values && issue.values.length > 1) return `${path} must be one of the following values: ${issue.values.map(String).join(", ")}`;
      return `${path} must be equal to ${String(issue.values?.[0])}`;
    case "invalid_type":
      // zod 4 leaves `input` out of issues unless asked; its default message ends with what it received.
      if (issue.input === undefined && /received (undefined|null)$/.test(issue.message)) return `${path} should not be empty`;
      return `${path} must be ${describeType(issue.expected)}`;
    case "too_small": {
      const min = Number(issue.minimum);
      if (issue.origin === "string") return min <= 1 ? `${path} should not be empty` : `${path} must be longer than or equal to ${min} characters`;
      if (issue.origin === "array" || issue.origin === "set") return `${path} must contain at least ${min} elements`;
      return issue.inclusive === false ? `${path} must be greater than ${min}` : `${path} must not be less than ${min}`;
    }
    case "too_big": {
      const max = Number(issue.maximum);
      if (issue.origin === "string") return `${path} must be shorter than or equal to ${max} characters`;
      if (issue.origin === "array" || issue.origin === "set") return `${path} must contain no more than ${max} elements`;
      return issue.inclusive === false ? `${path} must be less than ${max}` : `${path} must not be greater than ${max}`;
    }
    case "invalid_format":
      if (issue.format === "email") return `${path} must be an email`;
      if (issue.format === "url") return `${path} must be a URL address`;
      return `${path} is not in the expected format`;
    case "unrecognized_keys":
      return `${path} has unknown properties: ${(issue.keys ?? []).join(", ")}`;
    case "not_multiple_of":
      return `${path} must be a multiple of the allowed step`;
    default:
      return `${path} is invalid`;
  }
}

function issuesOf(error: unknown): IssueLike[] | undefined {
  if (error && typeof error === "object" && "issues" in error && Array.isArray((error as { issues: unknown }).issues))
    return (error as { issues: IssueLike[] }).issues;
  return undefined;
}

function body(status: number, code: ErrorCode, message: string | string[], requestId: string): ErrorBody {
  return { statusCode: status, message, error: reasonPhrase(status), code, requestId };
}

/**
 * The challenge of every 401 (RFC 6750 §3): `Bearer realm="passerelle"`, naming `invalid_token` when a token
 * was sent and refused; the description keeps only the characters RFC 6750 allows in it.
 */
function bearerChallenge(error: AppError): string {
  if (!(error instanceof InvalidTokenError)) return 'Bearer realm="passerelle"';
  const description = error.message.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, "");
  return `Bearer realm="passerelle", error="invalid_token", error_description="${description}"`;
}

function mapped(status: number, body: ErrorBody, headers: Record<string, string>, unexpected = false): MappedError {
  return { status, body, headers, trpcCode: trpcCodeOf(status), unexpected };
}

/** Maps anything thrown to the contract's error shape. Unknown errors become a 500 that says nothing more. */
function mapContractError(thrown: unknown, requestId: string): MappedError {
  let error = thrown;
  // tRPC wraps what a procedure or its input parser threw; the cause is what we mean.
  if (error instanceof TRPCError) {
    const cause = error.cause;
    const own = FROM_TRPC.get(error.code);
    if (cause instanceof AppError) error = cause;
    else if (error.code === "BAD_REQUEST" && issuesOf(cause)) error = new ValidationError(issuesOf(cause)!.map(formatIssue));
    else if (error.code === "PARSE_ERROR") error = new AppError(400, "validation_failed", "Malformed JSON in request body");
    else if (own) {
      const [status, code] = own;
      error = new AppError(status, code, status === 404 && error.message.startsWith("No ") ? "Not found" : error.message);
    }
  }
  if (error instanceof ValidationError) return mapped(400, body(400, "validation_failed", error.messages, requestId), {});
  if (error instanceof AppError) {
    const out = body(error.status, error.code, error.message, requestId);
    if (error.extras.providerErrors) out.providerErrors = error.extras.providerErrors;
    if (error.extras.providerResponseCode !== undefined) out.providerResponseCode = error.extras.providerResponseCode;
    if (error.extras.paymentId !== undefined) out.paymentId = error.extras.paymentId;
    if (error.extras.transactionId !== undefined) out.transactionId = error.extras.transactionId;
    const headers: Record<string, string> = {};
    if (error.extras.retryAfter !== undefined) headers["retry-after"] = String(Math.max(1, Math.ceil(error.extras.retryAfter)));
    if (error.status === 401) headers["www-authenticate"] = bearerChallenge(error);
    return mapped(error.status, out, headers);
  }
  // The database, not the request, failed (unreachable, a connection lost under the request, a statement past
  // `statement_timeout`): 503, which a client may retry — with its Idempotency-Key when it was creating something.
  if (isDatabaseUnavailable(thrown)) {
    return mapped(503, body(503, "unavailable", "The database is unavailable; try again shortly", requestId), { "retry-after": "1" });
  }
  return mapped(500, body(500, "internal", "Internal server error", requestId), {}, true);
}

/** True when the input parser refused `grant_type`'s value (a `grant_type` that is missing is `invalid_request`). */
function refusesGrantType(thrown: unknown): boolean {
  const cause = thrown instanceof TRPCError ? thrown.cause : undefined;
  const issues = (cause as { issues?: unknown } | undefined)?.issues;
  return (
    Array.isArray(issues) && issues.some((issue: { path?: unknown[]; code?: string }) => issue.path?.[0] === "grant_type" && issue.code === "invalid_value")
  );
}

function oauthCode(thrown: unknown, status: number): OAuthErrorBody["error"] {
  if (status === 400 && refusesGrantType(thrown)) return "unsupported_grant_type";
  if (status === 401) return "invalid_client";
  if (status === 503) return "temporarily_unavailable";
  if (status >= 500) return "server_error";
  return "invalid_request";
}

/**
 * The token endpoint's answer for a mapped error: the same status, the RFC 6749 §5.2 body and, on a 401, the
 * Basic challenge (RFC 6749 §5.2: the authentication scheme the client may use).
 */
function asOAuthError(thrown: unknown, contract: MappedError): MappedError {
  const { error: _reasonPhrase, ...members } = contract.body;
  const description = Array.isArray(members.message) ? members.message.join("; ") : members.message;
  const body: OAuthErrorBody = { error: oauthCode(thrown, contract.status), error_description: description, ...members };
  const headers = contract.status === 401 ? { ...contract.headers, "www-authenticate": BASIC_CHALLENGE } : contract.headers;
  return { ...contract, body, headers };
}

/**
 * Maps anything thrown to what the gateway answers with: status, body, headers and tRPC code. Unknown errors
 * become a 500 that says nothing more (`unexpected`: the caller logs them). `"oauth"` writes the body as the
 * OAuth2 token endpoint answers (RFC 6749 §5.2); every other route keeps the contract's body.
 *
 * @example
 * ```ts
 * mapError(new UnauthorizedError(), requestId, "oauth").body; // { error: "invalid_client", error_description: "Missing or invalid bearer token", … }
 * ```
 */
export function mapError(thrown: unknown, requestId: string, dialect: ErrorDialect = "contract"): MappedError {
  const contract = mapContractError(thrown, requestId);
  return dialect === "oauth" ? asOAuthError(thrown, contract) : contract;
}

/** What `error.data` holds on `/trpc`: tRPC's code and the HTTP status of the error, and the REST error body. */
export interface ErrorData {
  httpStatus: number;
  httpBody: ErrorBody;
  /** tRPC's code for `httpStatus` (`UNAUTHORIZED`, `NOT_FOUND`, …); the contract's code is `httpBody.code`. */
  code: TRPC_ERROR_CODE_KEY;
  path?: string;
}

/** tRPC's error shape: its JSON-RPC number, a message, and {@link ErrorData}. */
export interface TrpcErrorShape {
  code: number;
  message: string;
  data: ErrorData;
}

/**
 * tRPC's error shape for a mapped error: the tRPC code matching its HTTP status, with its JSON-RPC number,
 * and the contract's body in `data.httpBody` (contract §1).
 *
 * @example
 * ```ts
 * trpcErrorShape(mapError(new UnauthorizedError(), requestId)); // { code: -32001, data: { code: "UNAUTHORIZED", httpStatus: 401, … } }
 * ```
 */
export function trpcErrorShape(error: MappedError, path?: string): TrpcErrorShape {
  const message = Array.isArray(error.body.message) ? error.body.message.join("; ") : error.body.message;
  const data: ErrorData = { httpStatus: error.status, httpBody: error.body, code: error.trpcCode };
  if (path !== undefined) data.path = path;
  return { code: TRPC_ERROR_CODES_BY_KEY[error.trpcCode], message, data };
}

/** Stands for the request id when tRPC fails before it built a context; the HTTP layer fills it in. */
export const UNKNOWN_REQUEST_ID = "__request_id__";
