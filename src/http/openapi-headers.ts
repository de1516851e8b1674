/**
 * The headers of the OpenAPI document: the response headers the gateway sends (`x-request-id` on every
 * answer; the tenant's rate-limit budget; `Idempotent-Replayed` on a replay; `Retry-After`;
 * `WWW-Authenticate` on a 401) as `components.headers`, and the request headers the procedure bases read
 * (`x-tenant-id`, `x-environment`) as parameters — so a client generator or a validating proxy knows
 * every header without reading prose.
 *
 * @module
 */
import { RATE_LIMIT_HEADERS } from "./ratelimit-headers.ts";

/** `components.headers`, by the name each response uses in its `headers` (lower-case, as sent). */
export const HEADER_COMPONENTS = {
  "x-request-id": {
    description: "The request's id: the caller's `x-request-id` when it is 1–128 characters of `[A-Za-z0-9._:-]`, else a UUID",
    required: true,
    schema: { type: "string", minLength: 1, maxLength: 128, pattern: "^[A-Za-z0-9._:-]+$" },
  },
  [RATE_LIMIT_HEADERS[0]]: {
    description:
      "The tenant's budget (draft-ietf-httpapi-ratelimit-headers): `\"default\";q=<burst>;w=<seconds>`. Sent on every call the rate limit counted (a tenant's token or API key)",
    schema: { type: "string", pattern: '^"default";q=\\d+;w=\\d+$', example: '"default";q=200;w=2' },
  },
  [RATE_LIMIT_HEADERS[1]]: {
    description: 'What is left of the budget after this call: `"default";r=<remaining>;t=<seconds until full>` (`r=0` on a 429)',
    schema: { type: "string", pattern: '^"default";r=\\d+;t=\\d+$', example: '"default";r=150;t=1' },
  },
  "idempotent-replayed": {
    description: "`true` when this answer is the stored answer to an earlier call with the same `Idempotency-Key` (the call did not run again)",
    schema: { type: "string", enum: ["true"] },
  },
  "retry-after": { description: "Seconds to wait before trying again", schema: { type: "string", pattern: "^[1-9]\\d*$", example: "3" } },
  "www-authenticate": {
    description:
      'The Bearer challenge (RFC 6750): `Bearer realm="passerelle"`, with `error="invalid_token"` and its description when a token was sent and refused',
    schema: { type: "string", pattern: "^Bearer " },
  },
} as const;

export type HeaderName = keyof typeof HEADER_COMPONENTS;

/** A `$ref` to one header component. */
export const headerRef = (name: HeaderName) => ({ $ref: `#/components/headers/${name}` });

/** The request headers the tenant bases read, as OpenAPI parameters. */
export const TENANT_HEADER_PARAMETER = {
  name: "x-tenant-id",
  in: "header",
  required: false,
  description:
    "The tenant an operator's token acts on (required with an operator's token); with a tenant's token, when sent, it must be the token's own (else 403 `tenant_mismatch`)",
  schema: { type: "string", minLength: 1, maxLength: 64, example: "ten_01JD3XQ7Y8ZC5V4N2M1K0H9G8F" },
} as const;

export const ENVIRONMENT_HEADER_PARAMETER = {
  name: "x-environment",
  in: "header",
  required: false,
  description:
    "With an operator's token only: the environment to act in (default: the token's `env` claim); ignored for a tenant's token, which acts in its own",
  schema: { type: "string", enum: ["sandbox", "live"] },
} as const;
