/**
 * The IETF `RateLimit-Policy` and `RateLimit` response headers (draft-ietf-httpapi-ratelimit-headers-10,
 * September 2025: structured fields, one policy item named `"default"`), for a request the tenant's rate
 * limit counted (contract §9).
 *
 * How the token bucket reads in them:
 * - `RateLimit-Policy: "default";q=<burst>;w=<seconds>` — `burst` requests per `w` seconds, `w` being the
 *   time an empty bucket takes to fill again at `rps` (`ceil(burst / rps)`): `q / w` is the sustained rate.
 * - `RateLimit: "default";r=<remaining>;t=<seconds>` — the whole requests left in the bucket after this one,
 *   and the seconds (rounded up) until it is full again. `r` is 0 on a 429, which also has `Retry-After`.
 *
 * @module
 */
import type { RateLimit, RateLimitDecision } from "../services/rate-limit/mod.ts";

/** The header names, lower-case as they are sent (HTTP/2 and 3 require it). */
export const RATE_LIMIT_HEADERS = ["ratelimit-policy", "ratelimit"] as const;

/**
 * The two headers for one counted request.
 *
 * @example
 * ```ts
 * rateLimitHeaders({ rps: 100, burst: 200 }, { remaining: 150, resetSeconds: 1 });
 * // { "ratelimit-policy": '"default";q=200;w=2', ratelimit: '"default";r=150;t=1' }
 * ```
 */
export function rateLimitHeaders(limit: RateLimit, decision: Pick<RateLimitDecision, "remaining" | "resetSeconds">): Record<string, string> {
  return setRateLimitHeaders({}, limit, decision);
}

/** {@link rateLimitHeaders} written into `headers` (a request's response headers), which it returns. */
export function setRateLimitHeaders(
  headers: Record<string, string>,
  limit: RateLimit,
  decision: Pick<RateLimitDecision, "remaining" | "resetSeconds">,
): Record<string, string> {
  let policy = policies.get(limit);
  if (policy === undefined) {
    const window = Math.max(1, Math.ceil(limit.burst / limit.rps));
    policies.set(limit, (policy = `"default";q=${limit.burst};w=${window}`));
  }
  headers["ratelimit-policy"] = policy;
  headers.ratelimit = `"default";r=${decision.remaining};t=${decision.resetSeconds}`;
  return headers;
}

/** The policy of each limit object seen (a tenant's, the service's), written once: it is the same on every answer. */
const policies = new WeakMap<RateLimit, string>();
