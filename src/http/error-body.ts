/**
 * The single mapping from anything thrown to the error shape of contract §1:
 * `{ statusCode, message, error, code, requestId, providerErrors?, providerResponseCode?, paymentId?, transactionId? }`.
 * Both surfaces use it: the REST bridge answers with the body, `/trpc` carries it as `error.data.httpBody`.
 */
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { AppError, ValidationError, type ErrorCode } from "../errors.ts";
import { isDatabaseUnavailable } from "../db/availability.ts";
import { InvalidTokenError } from "../services/auth/invalid-token.ts";

/** The error body, as a schema: it documents every error response in the OpenAPI document. */
export const errorBodySchema = z
  .object({
    statusCode: z.number().int().meta({ example: 400 }),
    message: z.union([z.array(z.string()), z.string()]).meta({
      description: "An array with one entry per violation for 400 validation errors; one string otherwise",
    }),
    error: z.string().meta({ description: "The HTTP reason phrase", example: "Bad Request" }),
    code: z.string().meta({ description: "A stable machine-readable code (contract §1)", example: "validation_failed" }),
    requestId: z.string().meta({ description: "Also in the x-request-id header" }),
    providerErrors: z.array(z.string()).optional(),
    providerResponseCode: z.string().optional(),
    paymentId: z.string().optional().meta({
      description:
        "On a 502/504 after which the payment may still go through (the USSD push may have reached the phone): the payment, to follow by its status and events. The same Idempotency-Key answers this again. A 502/504 without it left nothing behind: retrying is safe.",
      example: "pay_01JD3M8Q4ZK2T9XG7B6V5N4C3A",
    }),
    transactionId: z.number().int().optional().meta({
      description: "Provider A's id of that payment, when the provider had answered its creation",
      example: 412,
    }),
  })
  .meta({ id: "Error" });

export type ErrorBody = z.infer<typeof errorBodySchema>;

export interface MappedError {
  status: number;
  body: ErrorBody;
  headers: Record<string, string>;
  /** True when the error is ours to fix (5xx that is not a provider's or a dependency's). */
  unexpected: boolean;
}

const REASONS: Record<number, string> = {
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  405: "Method Not Allowed",
  409: "Conflict",
  413: "Payload Too Large",
  415: "Unsupported Media Type",
  422: "Unprocessable Entity",
  424: "Failed Dependency",
  429: "Too Many Requests",
  500: "Internal Server Error",
  502: "Bad Gateway",
  503: "Service Unavailable",
  504: "Gateway Timeout",
};

/** The HTTP reason phrase of a status. */
export function reasonPhrase(status: number): string {
  return REASONS[status] ?? "Error";
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

/** tRPC's own errors (protocol misuse: batching, wrong method, …), by code. */
const TRPC_CODES: Partial<Record<TRPCError["code"], [number, ErrorCode]>> = {
  BAD_REQUEST: [400, "validation_failed"],
  UNAUTHORIZED: [401, "unauthorized"],
  FORBIDDEN: [403, "forbidden"],
  NOT_FOUND: [404, "not_found"],
  METHOD_NOT_SUPPORTED: [405, "not_found"],
  CONFLICT: [409, "conflict"],
  PAYLOAD_TOO_LARGE: [413, "payload_too_large"],
  UNSUPPORTED_MEDIA_TYPE: [415, "unsupported_media_type"],
  TOO_MANY_REQUESTS: [429, "rate_limited"],
};

/**
 * The challenge of every 401 (RFC 6750 §3): `Bearer realm="passerelle"`, naming `invalid_token` when a token
 * was sent and refused; the description keeps only the characters RFC 6750 allows in it.
 */
function bearerChallenge(error: AppError): string {
  if (!(error instanceof InvalidTokenError)) return 'Bearer realm="passerelle"';
  const description = error.message.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, "");
  return `Bearer realm="passerelle", error="invalid_token", error_description="${description}"`;
}

/** Maps anything thrown to the contract's error shape. Unknown errors become a 500 that says nothing more. */
export function mapError(thrown: unknown, requestId: string): MappedError {
  let error = thrown;
  // tRPC wraps what a procedure or its input parser threw; the cause is what we mean.
  if (error instanceof TRPCError) {
    const cause = error.cause;
    if (cause instanceof AppError) error = cause;
    else if (error.code === "BAD_REQUEST" && issuesOf(cause)) error = new ValidationError(issuesOf(cause)!.map(formatIssue));
    else if (error.code === "PARSE_ERROR") error = new AppError(400, "validation_failed", "Malformed JSON in request body");
    else if (TRPC_CODES[error.code]) {
      const [status, code] = TRPC_CODES[error.code]!;
      error = new AppError(status, code, status === 404 && error.message.startsWith("No ") ? "Not found" : error.message);
    }
  }
  if (error instanceof ValidationError) {
    return { status: 400, body: body(400, "validation_failed", error.messages, requestId), headers: {}, unexpected: false };
  }
  if (error instanceof AppError) {
    const out = body(error.status, error.code, error.message, requestId);
    if (error.extras.providerErrors) out.providerErrors = error.extras.providerErrors;
    if (error.extras.providerResponseCode !== undefined) out.providerResponseCode = error.extras.providerResponseCode;
    if (error.extras.paymentId !== undefined) out.paymentId = error.extras.paymentId;
    if (error.extras.transactionId !== undefined) out.transactionId = error.extras.transactionId;
    const headers: Record<string, string> = {};
    if (error.extras.retryAfter !== undefined) headers["retry-after"] = String(Math.max(1, Math.ceil(error.extras.retryAfter)));
    if (error.status === 401) headers["www-authenticate"] = bearerChallenge(error);
    return { status: error.status, body: out, headers, unexpected: false };
  }
  // The database, not the request, failed (unreachable, a connection lost under the request, a statement past
  // `statement_timeout`): 503, which a client may retry — with its Idempotency-Key when it was creating something.
  if (isDatabaseUnavailable(thrown)) {
    return {
      status: 503,
      body: body(503, "unavailable", "The database is unavailable; try again shortly", requestId),
      headers: { "retry-after": "1" },
      unexpected: false,
    };
  }
  return { status: 500, body: body(500, "internal", "Internal server error", requestId), headers: {}, unexpected: true };
}
