/**
 * The errors of the OAuth2 token endpoint (`POST /auth/token`), as RFC 6749 §5.2 has them: `error` is the
 * standard's code and `error_description` says what went wrong, so OAuth2 libraries read our refusals as
 * OAuth errors. The contract's other members (`statusCode`, `message`, `code`, `requestId`) stay beside
 * them — the standard lets a response carry more — so a client reading `code` keeps working. A 401 challenges
 * with HTTP Basic (RFC 6749 §5.2: the authentication scheme the client may use), whichever way the client sent
 * its credentials. Every other route keeps the contract's body as it is.
 */
import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { errorBodySchema, type ErrorBody, type MappedError } from "./error-body.ts";

/** The challenge of a refused client (RFC 7617). */
export const BASIC_CHALLENGE = 'Basic realm="passerelle"';

const OAUTH_ERROR_CODES = ["invalid_request", "invalid_client", "unsupported_grant_type", "server_error", "temporarily_unavailable"] as const;

/** The token endpoint's error body, as a schema (the OpenAPI document's `OAuthError`). */
export const oauthErrorBodySchema = errorBodySchema
  .pick({ statusCode: true, message: true, code: true, requestId: true })
  .extend({
    error: z.enum(OAUTH_ERROR_CODES).meta({ description: "The RFC 6749 §5.2 error code", example: "invalid_client" }),
    error_description: z.string().meta({ description: "What went wrong, for a developer", example: "Invalid client credentials" }),
  })
  .meta({ id: "OAuthError" });

export type OAuthErrorBody = ErrorBody & { error: (typeof OAUTH_ERROR_CODES)[number]; error_description: string };

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
 * The token endpoint's answer for an error `mapError` mapped: the same status, the RFC 6749 §5.2 body
 * and, on a 401, the Basic challenge.
 *
 * @example
 * ```ts
 * oauthErrorFor(error, mapError(error, requestId)).body; // { error: "invalid_client", error_description: "Invalid client credentials", … }
 * ```
 */
export function oauthErrorFor(thrown: unknown, mapped: MappedError): MappedError {
  const { error: _reasonPhrase, ...contract } = mapped.body;
  const description = Array.isArray(contract.message) ? contract.message.join("; ") : contract.message;
  const body: OAuthErrorBody = { error: oauthCode(thrown, mapped.status), error_description: description, ...contract };
  const headers = mapped.status === 401 ? { ...mapped.headers, "www-authenticate": BASIC_CHALLENGE } : mapped.headers;
  return { ...mapped, body, headers };
}
