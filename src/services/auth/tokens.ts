/**
 * Bearer tokens (contract §2): HS256 JWTs signed with `JWT_SECRET`, and — when `JWT_JWKS_URL` is set —
 * RS256/ES256 tokens from the operator's identity provider. Verified tokens are kept in a bounded cache
 * keyed by the token string, because jose's Web Crypto verification costs ~40 µs of server capacity per
 * request on Bun and a cache hit ~0.05 µs (a `Map` lookup; the oldest entry goes first when it is full —
 * lru-cache's bookkeeping cost 0.2 µs a hit); `exp` and `nbf` are re-checked on every hit. A token is
 * never revoked by itself (an API key is, checked apart on every call: `key-status.ts`), so a cached
 * verification is as true in every process as the token's signature is.
 */
import { createRemoteJWKSet, errors as joseErrors, jwtVerify, SignJWT, type JWTPayload } from "jose";
import type { Config, Environment } from "../../config.ts";
import { InvalidTokenError } from "../../errors.ts";
import type { LiveSession } from "../people/live-session.ts";

/** Who is calling, as the token says. */
export interface Principal {
  sub: string;
  role: "admin" | "tenant";
  /** The token's tenant; null for an admin token (which names its tenant with `x-tenant-id`). */
  tenantId: string | null;
  environment: Environment;
  keyId: string | null;
  expiresAt: Date;
  /** When the token stops being valid before `exp` is reached: `nbf`, in seconds. */
  notBefore: number | null;
  /** A person signed in to the dashboard (the session cookie, issue 30) rather than a token. */
  person?: LiveSession;
}

const CLOCK_TOLERANCE_S = 30;
const CACHE_SIZE = 10_000;

export interface TokenVerifier {
  /** Verifies a bearer token, throwing {@link InvalidTokenError} with a reason a caller can act on. */
  verify(token: string, nowMs?: number): Promise<Principal>;
  /**
   * The cached answer for a token verified before, checked exactly as `verify` checks it (throws the same
   * errors); undefined when it is not cached (then call `verify`). Saves the hot path a promise.
   */
  verifyCached?(token: string, nowMs?: number): Principal | undefined;
}

function principalFrom(payload: JWTPayload): Principal {
  const sub = payload.sub;
  if (typeof sub !== "string" || sub.length === 0) throw new InvalidTokenError("Token has no sub claim");
  if (typeof payload.exp !== "number") throw new InvalidTokenError("Token has no exp claim");
  const env = payload.env ?? "sandbox";
  if (env !== "sandbox" && env !== "live") throw new InvalidTokenError("Token env claim must be sandbox or live");
  const keyId = typeof payload.key_id === "string" ? payload.key_id : null;
  if (payload.role === "admin") {
    return { sub, role: "admin", tenantId: null, environment: env, keyId, expiresAt: new Date(payload.exp * 1000), notBefore: payload.nbf ?? null };
  }
  if (typeof payload.tenant_id !== "string" || payload.tenant_id.length === 0)
    throw new InvalidTokenError("Token has neither a tenant_id claim nor role admin");
  return {
    sub,
    role: "tenant",
    tenantId: payload.tenant_id,
    environment: env,
    keyId,
    expiresAt: new Date(payload.exp * 1000),
    notBefore: payload.nbf ?? null,
  };
}

function explain(error: unknown): InvalidTokenError {
  if (error instanceof InvalidTokenError) return error;
  if (error instanceof joseErrors.JWTExpired) return new InvalidTokenError("Token has expired");
  if (error instanceof joseErrors.JWTClaimValidationFailed) return new InvalidTokenError(`Token ${error.claim} claim is not accepted`);
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return new InvalidTokenError("Token algorithm is not accepted");
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return new InvalidTokenError("Token signature is invalid");
  return new InvalidTokenError("Token is malformed or cannot be verified");
}

/**
 * Builds the verifier for a configuration. One per gateway; its cache (`cacheSize` tokens, 10 000 by
 * default) lives and dies with it.
 */
export function createTokenVerifier(jwt: Config["jwt"], { cacheSize = CACHE_SIZE }: { cacheSize?: number } = {}): TokenVerifier {
  const secret = new TextEncoder().encode(jwt.secret);
  const jwks = jwt.jwksUrl ? createRemoteJWKSet(new URL(jwt.jwksUrl)) : undefined;
  const cache = new Map<string, Principal>();
  const remember = (token: string, principal: Principal) => {
    if (cache.size >= cacheSize) cache.delete(cache.keys().next().value!);
    cache.set(token, principal);
  };
  const options = {
    issuer: jwt.issuer,
    audience: jwt.audience,
    clockTolerance: CLOCK_TOLERANCE_S,
    requiredClaims: ["exp", "sub"],
  };

  async function verifyUncached(token: string): Promise<Principal> {
    // The header decides which key verifies it: HS256 → our secret; RS256/ES256 → the JWKS when configured.
    const headerPart = token.split(".")[0] ?? "";
    let alg: unknown;
    try {
      alg = JSON.parse(Buffer.from(headerPart, "base64url").toString("utf8")).alg;
    } catch {
      throw new InvalidTokenError("Token is malformed or cannot be verified");
    }
    if (alg === "HS256") {
      const { payload } = await jwtVerify(token, secret, { ...options, algorithms: ["HS256"] });
      return principalFrom(payload);
    }
    if (jwks && (alg === "RS256" || alg === "ES256")) {
      const { payload } = await jwtVerify(token, jwks, { ...options, algorithms: ["RS256", "ES256"] });
      return principalFrom(payload);
    }
    throw new InvalidTokenError("Token algorithm is not accepted");
  }

  /** `exp` and `nbf` against the clock, on every answer (cached or not). */
  function checked(token: string, principal: Principal, nowMs: number): Principal {
    const nowS = nowMs / 1000;
    if (principal.expiresAt.getTime() / 1000 + CLOCK_TOLERANCE_S <= nowS) {
      cache.delete(token);
      throw new InvalidTokenError("Token has expired");
    }
    if (principal.notBefore !== null && principal.notBefore - CLOCK_TOLERANCE_S > nowS) throw new InvalidTokenError("Token nbf claim is not accepted");
    return principal;
  }

  return {
    async verify(token, nowMs = Date.now()) {
      let principal = cache.get(token);
      if (!principal) {
        try {
          principal = await verifyUncached(token);
        } catch (error) {
          throw explain(error);
        }
        remember(token, principal);
      }
      return checked(token, principal, nowMs);
    },
    verifyCached(token, nowMs = Date.now()) {
      const principal = cache.get(token);
      return principal && checked(token, principal, nowMs);
    },
  };
}

export interface MintOptions {
  sub: string;
  role?: "admin";
  tenantId?: string;
  environment?: Environment;
  keyId?: string;
  ttlSeconds?: number;
  now?: Date;
}

/** Signs an HS256 token with the service's secret (operators' admin tokens, API-key exchanges, tests). */
export async function mintToken(jwt: Config["jwt"], options: MintOptions): Promise<string> {
  const nowS = Math.floor((options.now ?? new Date()).getTime() / 1000);
  const claims: JWTPayload = { env: options.environment ?? "sandbox" };
  if (options.role) claims.role = options.role;
  if (options.tenantId) claims.tenant_id = options.tenantId;
  if (options.keyId) claims.key_id = options.keyId;
  let builder = new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setSubject(options.sub)
    .setIssuedAt(nowS)
    .setExpirationTime(nowS + (options.ttlSeconds ?? 3600))
    .setJti(crypto.randomUUID());
  if (jwt.issuer) builder = builder.setIssuer(jwt.issuer);
  if (jwt.audience) builder = builder.setAudience(jwt.audience);
  return builder.sign(new TextEncoder().encode(jwt.secret));
}
