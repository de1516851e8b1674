/**
 * A secret API key sent directly as the bearer token (`Authorization: Bearer psk_sandbox_…`, the
 * Stripe/Paystack habit): it acts exactly as a token minted for that key at `POST /auth/token` would —
 * same principal, same revocation check (`key-status.ts`, so a revoked key stops working within
 * `KEY_STATUS_CACHE_MS`). A process remembers which key a secret is, so a key used on every request
 * costs one HMAC and one query the first time, not on each request.
 */
import { hashApiKeySecret } from "../../crypto/secrets.ts";
import { InvalidTokenError } from "../../errors.ts";
import type { Principal } from "../auth/tokens.ts";
import type { Deps } from "../deps.ts";
import { ACCESS_TOKEN_TTL_S } from "./api-keys.ts";

/** Every API key secret starts with it (`psk_<environment>_…`); no JWT does (a JWT starts with `ey`). */
export const API_KEY_BEARER_PREFIX = "psk_";

/**
 * The principal of an API key secret sent as the bearer, refused with {@link InvalidTokenError} when no
 * key has that secret. Whether the key is revoked is the caller's check, as for a minted token's `key_id`.
 *
 * @example
 * ```ts
 * const principal = await apiKeyBearerPrincipal(deps, "psk_sandbox_…", Date.now()); // { sub: "key:key_…", role: "tenant", … }
 * ```
 */
export async function apiKeyBearerPrincipal(deps: Pick<Deps, "db" | "config" | "apiKeyStatus">, secret: string, nowMs: number): Promise<Principal> {
  let key = deps.apiKeyStatus.keyOfSecret(secret);
  if (!key) {
    const row = await deps.db
      .selectFrom("api_keys")
      .select(["id", "tenant_id", "environment"])
      .where("secret_hash", "=", hashApiKeySecret(deps.config.apiKeyPepper, secret))
      .executeTakeFirst();
    if (!row) throw new InvalidTokenError("Invalid API key");
    key = { id: row.id, tenantId: row.tenant_id, environment: row.environment };
    deps.apiKeyStatus.rememberSecret(secret, key);
  }
  // A key does not expire: `expiresAt` is that of a token minted for it now.
  return {
    sub: `key:${key.id}`,
    role: "tenant",
    tenantId: key.tenantId,
    environment: key.environment,
    keyId: key.id,
    expiresAt: new Date(nowMs + ACCESS_TOKEN_TTL_S * 1000),
    notBefore: null,
  };
}
