/**
 * The error body every surface answers with (contract §1), as schemas: the one the OpenAPI document shows on
 * every error response — a provider's inbound routes included — and its RFC 6749 §5.2 variant of the token
 * endpoint. What is answered for what is thrown is `map-error.ts`'s.
 *
 * @module
 */
import { z } from "zod";

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
    paymentId: z
      .string()
      .optional()
      .meta({
        description:
          "On a 502/504 after which the payment may still go through (the USSD push may have reached the phone): the payment, " +
          "to follow by its status and events. The same Idempotency-Key answers this again. A 502/504 without it left nothing behind: retrying is safe.",
        example: "pay_01JD3M8Q4ZK2T9XG7B6V5N4C3A",
      }),
    transactionId: z.number().int().optional().meta({
      description: "Provider A's id of that payment, when the provider had answered its creation",
      example: 412,
    }),
  })
  .meta({ id: "Error" });

export type ErrorBody = z.infer<typeof errorBodySchema>;

/** The challenge of a refused OAuth2 client (RFC 7617), whichever way it sent its credentials. */
export const BASIC_CHALLENGE = 'Basic realm="passerelle"';

const OAUTH_ERROR_CODES = ["invalid_request", "invalid_client", "unsupported_grant_type", "server_error", "temporarily_unavailable"] as const;

/**
 * The errors of the OAuth2 token endpoint (`POST /auth/token`), as RFC 6749 §5.2 has them: `error` is the
 * standard's code and `error_description` says what went wrong, so OAuth2 libraries read our refusals as
 * OAuth errors. The contract's other members (`statusCode`, `message`, `code`, `requestId`) stay beside
 * them — the standard lets a response carry more — so a client reading `code` keeps working. The OpenAPI
 * document's `OAuthError`.
 */
export const oauthErrorBodySchema = errorBodySchema
  .pick({ statusCode: true, message: true, code: true, requestId: true })
  .extend({
    error: z.enum(OAUTH_ERROR_CODES).meta({ description: "The RFC 6749 §5.2 error code", example: "invalid_client" }),
    error_description: z.string().meta({ description: "What went wrong, for a developer", example: "Invalid client credentials" }),
  })
  .meta({ id: "OAuthError" });

export type OAuthErrorBody = ErrorBody & { error: (typeof OAUTH_ERROR_CODES)[number]; error_description: string };
