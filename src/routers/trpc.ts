/**
 * The tRPC instance every router builds on: the request context, the error formatter that puts the
 * contract's error body into tRPC's envelope (the mapping itself is `map-error.ts`'s), and the three
 * procedure bases of contract §2.
 */
import { initTRPC } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import type { Environment } from "../config.ts";
import { BadRequestError, ForbiddenError, InvalidTokenError, NotFoundError, RateLimitedError, UnauthorizedError, ValidationError } from "../errors.ts";
import { holdsHostileText, hostileTextMessages } from "../http/hostile-text.ts";
import { setRateLimitHeaders } from "../http/ratelimit-headers.ts";
import type { RequestInfo } from "../http/request-info.ts";
import { mapError, trpcErrorShape, UNKNOWN_REQUEST_ID } from "../map-error.ts";
import type { CsvList } from "../services/reports/csv-list.ts";
import type { Principal } from "../services/auth/tokens.ts";
import { API_KEY_BEARER_PREFIX, apiKeyBearerPrincipal } from "../services/api-keys/bearer-keys.ts";
import type { Deps } from "../services/deps.ts";
import type { TenantSummary } from "../services/tenants/find-tenant.ts";
import { isId } from "../services/ids.ts";
import { CSRF_HEADER, csrfTokenMatches, findLiveSession, sessionSecretOf } from "../services/people/mod.ts";
import { type RateLimit, type RateLimitDecision, rateLimitKey } from "../services/rate-limit/mod.ts";
import { authorize, type CallScope, guardCall, isAudited } from "./call-guard.ts";

export type { RequestInfo } from "../http/request-info.ts";

/** The context of every procedure call, on `/trpc` and on the REST surface alike. */
export interface Context {
  deps: Deps;
  headers: Headers;
  request: RequestInfo;
}

/**
 * The error statuses a procedure answers beyond those its base, its input and `Idempotency-Key` give it
 * (`http/openapi.ts` derives those): its own 404, 409, a provider's 422/424/502/504…
 */
export type DeclaredErrorStatus = 400 | 401 | 403 | 404 | 409 | 422 | 424 | 429 | 502 | 504;

/**
 * Procedure metadata: trpc-to-openapi's, plus whether `x-tenant-id` is required (spec rule 1) and the
 * procedure's own error statuses, for the OpenAPI document.
 */
export type Meta = OpenApiMeta<{
  tenantHeader?: "required" | "accepted";
  errors?: readonly DeclaredErrorStatus[];
  /** The OAuth2 token endpoint: its REST errors are RFC 6749 §5.2's (`map-error.ts`, `mapError(…, "oauth")`). */
  oauthErrors?: true;
  /** The REST route also answers `Accept: text/csv`, with the output rendered by this function (`/reports/reconciliation`). */
  csv?: (output: unknown) => string;
  /**
   * A list (`{ data, nextCursor }`) whose REST route also answers `Accept: text/csv`: every item that matches
   * the filters, streamed page by page (`http/rest-bridge.ts`); `limit` is ignored, `cursor` is where it starts.
   */
  csvList?: CsvList;
  /** The answer sets or clears the dashboard's session cookie (`Set-Cookie`), for the OpenAPI document. */
  sessionCookie?: true;
  /** Public, and counted against the caller's address (the pay page's calls): its answers carry the budget's headers. */
  limitedPerAddress?: true;
  /**
   * A hot read: its REST route calls it without tRPC's middleware chain (`direct-call.ts`), and validates and
   * serializes each answer once. Only for a query whose resolver answers with views that are shared between calls
   * and never mutated (a cached final transaction's view, a cached token's claims), on a base with a guard.
   */
  directRead?: true;
}>;

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    isDev: false,
    errorFormatter({ error, ctx, path }) {
      return trpcErrorShape(mapError(error, ctx?.request.requestId ?? UNKNOWN_REQUEST_ID), path);
    },
  });

export const router = t.router;
export const middleware = t.middleware;
export const createCallerFactory = t.createCallerFactory;

/**
 * Refuses a call whose raw input holds a NUL character or an unpaired surrogate anywhere — a value, a
 * property name, a path or query parameter, at any depth — with one validation entry per place
 * (`http/hostile-text.ts`): PostgreSQL cannot store either, and would answer a 500. Every base below runs
 * it before anything reads the input; the authenticated ones right after authentication, so a caller
 * without a valid token gets 401 first, as with any other invalid input.
 */
function refuseHostileText(rawInput: unknown): void {
  // A frozen input (a hot read's, made once per path: `rest-bridge.ts`) cannot change: scanned once.
  if (typeof rawInput === "object" && rawInput !== null && cleanFrozenInputs.has(rawInput)) return;
  const messages = hostileTextMessages(rawInput);
  if (messages.length > 0) throw new ValidationError(messages);
  if (typeof rawInput === "object" && rawInput !== null && Object.isFrozen(rawInput) && Object.values(rawInput).every((value) => typeof value !== "object"))
    cleanFrozenInputs.add(rawInput);
}

/** Frozen raw inputs of plain values (what the bridge makes) already found clean: nothing in them can change. */
const cleanFrozenInputs = new WeakSet<object>();

/** No token needed. */
export const publicProcedure = t.procedure.use(async ({ getRawInput, next }) => {
  refuseHostileText(await getRawInput());
  return next();
});

const BEARER_HEADER = /^Bearer [A-Za-z0-9._~+/-]+=*$/;

function bearerToken(header: string | null): string {
  if (!header) throw new UnauthorizedError("Missing Authorization header");
  // `test` and a slice: no match array per request.
  if (!BEARER_HEADER.test(header)) throw new UnauthorizedError("Authorization header must be 'Bearer <token>'");
  return header.slice(7);
}

type CallType = "query" | "mutation" | "subscription";

function requestedEnvironment(headers: Headers): Environment | null {
  const requested = headers.get("x-environment");
  if (requested === null) return null;
  if (requested !== "sandbox" && requested !== "live") throw new BadRequestError("x-environment must be one of the following values: sandbox, live");
  return requested;
}

/**
 * A person signed in to the dashboard (issue 30): the session cookie's live session acts as a tenant token of
 * its shop, in the environment `x-environment` names (sandbox by default) — or, for the operator's staff (a
 * session in no shop), as an admin token, naming a shop with `x-tenant-id`. What the person's role allows is
 * checked by {@link authorize}. A call that changes something also carries the session's CSRF token in
 * `x-csrf-token` (403 without it). Until a person sets up two-factor sign-in that their shop (or the operator's
 * side, always) requires, only their own calls (`personProcedure`) are open to them.
 */
async function authenticateSession(ctx: Context, secret: string, type: CallType, enrolling: boolean): Promise<Principal> {
  const session = await findLiveSession(ctx.deps, secret);
  if (!session) throw new UnauthorizedError("The session has ended or expired: sign in again");
  if (type === "mutation" && !csrfTokenMatches(ctx.deps, secret, ctx.headers.get(CSRF_HEADER)))
    throw new ForbiddenError("A call that changes something needs the session's x-csrf-token header");
  if (session.mustEnrol && !enrolling) throw new ForbiddenError("This shop requires two-factor sign-in: set it up first");
  if (session.tenantId) ctx.request.tenantId = session.tenantId;
  return {
    sub: session.personId,
    role: session.tenantId ? "tenant" : "admin",
    tenantId: session.tenantId,
    environment: requestedEnvironment(ctx.headers) ?? "sandbox",
    keyId: null,
    expiresAt: session.expiresAt,
    notBefore: null,
    person: session,
  };
}

/**
 * The caller's verified token, or the dashboard's session cookie when no `Authorization` header is sent; a token
 * minted from an API key stops working once the key is revoked.
 */
// Cache hits are read synchronously (`verifyCached`, `cached`), and then the principal is answered without a
// promise: on the hot path every check is a plain call (callers await only a promise). Called from async functions
// only, where a synchronous throw rejects like any other.
function authenticate(ctx: Context, type: CallType): Principal | Promise<Principal> {
  const header = ctx.headers.get("authorization");
  if (header === null) {
    const secret = sessionSecretOf(ctx.headers);
    if (secret) return authenticateSession(ctx, secret, type, false);
  }
  const tokens = ctx.deps.tokens;
  const nowMs = ctx.deps.now().getTime();
  // A token in the cache was a well-formed bearer when it was verified: a hit needs no second look at the header.
  if (header?.startsWith("Bearer ")) {
    const hit = tokens.verifyCached?.(header.slice(7), nowMs);
    if (hit) return admitPrincipal(ctx, hit);
  }
  const token = bearerToken(header);
  // A secret API key sent as the bearer (the Stripe habit) is told apart by its prefix, before any JWT work.
  if (token.startsWith(API_KEY_BEARER_PREFIX)) return apiKeyBearerPrincipal(ctx.deps, token, nowMs).then((principal) => admitPrincipal(ctx, principal));
  // (Not in the cache: looked up above.)
  return tokens.verify(token, nowMs).then((principal) => admitPrincipal(ctx, principal));
}

/** A verified principal, unless its API key was revoked; the request learns its tenant. */
function admitPrincipal(ctx: Context, principal: Principal): Principal | Promise<Principal> {
  if (principal.keyId && principal.role === "tenant") {
    const keyId = principal.keyId;
    // No key's id holds a NUL or an unpaired surrogate, and the database could not even look one up (a 500).
    if (holdsHostileText(keyId)) throw new InvalidTokenError("Token key_id claim is not accepted");
    const apiKeyStatus = ctx.deps.apiKeyStatus;
    const active = apiKeyStatus.cached?.(keyId);
    if (active === undefined) return apiKeyStatus.isActive(keyId).then((found) => admitActive(ctx, principal, found));
    return admitActive(ctx, principal, active);
  }
  return admitActive(ctx, principal, true);
}

function admitActive(ctx: Context, principal: Principal, active: boolean): Principal {
  if (!active) throw new InvalidTokenError("The API key behind this token has been revoked");
  if (principal.tenantId) ctx.request.tenantId = principal.tenantId;
  return principal;
}

/** What a base's middleware receives besides the context: the procedure's metadata, its call type and its raw input. */
export interface BaseCall {
  meta: Meta | undefined;
  /** The procedure's path (`payments.create`): what a person's role is checked against. */
  path: string;
  type: CallType;
  /** tRPC's (a promise), or the direct call's (the input itself). */
  getRawInput: () => unknown;
  /**
   * For a call written to the audit log (`call-guard.ts`): the guard notes the caller once known, and where the
   * call acts as it resolves it, so that a refusal by its later checks is written too.
   */
  audit?: { principal?: Principal; scope?: CallScope };
}

/**
 * A procedure base's checks as a plain function: what its middleware adds to the context, or a throw. The
 * base's tRPC middleware is this function and nothing else, so a caller that runs a procedure without
 * tRPC's middleware chain (`direct-call.ts`, the hot REST reads) runs the very same checks.
 */
// Answered without a promise when nothing it checks has to wait (every cache hit): the hot reads' direct call then
// answers synchronously (`direct-call.ts`); a refusal is then a synchronous throw, which the callers (an `await`
// in a `try`, or `direct-call.ts`) take as they take a rejection.
export type BaseGuard<Added extends object = object> = (ctx: Context, call: BaseCall) => Added | Promise<Added>;

const guards = new Map<unknown, BaseGuard>();

/** The guard behind a middleware of a procedure's chain, when that middleware is a base's (see {@link BaseGuard}). */
export function baseGuardOf(middleware: unknown): BaseGuard | undefined {
  return guards.get(middleware);
}

/**
 * A base's middleware: the guard's checks, then the rest of the chain with what the guard added to the context.
 * A call that changes something is written to the audit log (`guardCall`): its outcome, or the guard's refusal
 * once the caller is known (a 401 has no caller to write).
 */
function guardMiddleware<Added extends { principal: Principal }>(guard: BaseGuard<Added>) {
  const built = t.middleware(async ({ ctx, meta, path, type, getRawInput, next }) => {
    if (!isAudited(path, type)) return next({ ctx: await guard(ctx, { meta, path, type, getRawInput }) });
    const audit: NonNullable<BaseCall["audit"]> = {};
    let added: Added;
    try {
      added = await guard(ctx, { meta, path, type, getRawInput, audit });
    } catch (error) {
      if (audit.principal && audit.scope)
        await guardCall(ctx, audit.principal, { path, type, rawInput: await getRawInput() }, audit.scope, () => Promise.reject(error));
      throw error;
    }
    const scope = audit.scope ?? scopeOf(ctx, added.principal);
    return guardCall(ctx, added.principal, { path, type, rawInput: await getRawInput() }, scope, () => next({ ctx: added }));
  });
  for (const middleware of (built as unknown as { _middlewares: unknown[] })._middlewares) guards.set(middleware, guard);
  return built;
}

/** Any valid token, admin or tenant; a token minted from an API key stops working once the key is revoked. */
export const authedProcedure = t.procedure.use(
  guardMiddleware((ctx, call) => {
    // Waiting only for what is pending: a cached answer costs no promise.
    const authenticated = authenticate(ctx, call.type);
    return authenticated instanceof Promise ? authenticated.then((principal) => authedAs(ctx, call, principal)) : authedAs(ctx, call, authenticated);
  }),
);

function authedAs(ctx: Context, call: BaseCall, principal: Principal): { principal: Principal } | Promise<{ principal: Principal }> {
  return withRawInput(ctx, call, principal, (raw) => {
    refuseHostileText(raw);
    authorize(principal, call.path, call.type);
    return { principal };
  });
}

/** Notes the caller for the call's audit entry, then goes on with its raw input: without a promise when the input is at hand. */
function withRawInput<R>(ctx: Context, call: BaseCall, principal: Principal, next: (raw: unknown) => R | Promise<R>): R | Promise<R> {
  if (call.audit) Object.assign(call.audit, { principal, scope: scopeOf(ctx, principal) });
  const raw = call.getRawInput();
  return raw instanceof Promise ? raw.then(next) : next(raw);
}

/** An operator token (`role: "admin"`), or a person of the operator's staff whose role allows the call. */
export const adminProcedure = authedProcedure.use(({ ctx, next }) => {
  if (ctx.principal.role !== "admin") throw new ForbiddenError("This endpoint needs an admin token");
  return next();
});

/** Where a call acts before its base resolves more: the caller's own tenant (none for an operator) and environment. */
function scopeOf(ctx: Context, principal: Principal): CallScope {
  let environment = principal.environment;
  try {
    environment = environmentOf(principal, ctx.headers);
  } catch {
    // A bad x-environment is the call's 400; its entry keeps the token's environment.
  }
  return { tenantId: principal.tenantId, environment };
}

function environmentOf(principal: Principal, headers: Headers): Environment {
  if (principal.role !== "admin") return principal.environment;
  return requestedEnvironment(headers) ?? principal.environment;
}

/**
 * A person's own calls (issue 30): the dashboard's session cookie only (no token acts as a person), with
 * `x-csrf-token` on a call that changes something. Open to a person who must still set up two-factor sign-in.
 */
export const personProcedure = t.procedure.use(async ({ ctx, path, type, getRawInput, next }) => {
  const secret = sessionSecretOf(ctx.headers);
  if (!secret) throw new UnauthorizedError("Sign in first: this call needs the dashboard's session cookie");
  const principal = await authenticateSession(ctx, secret, type, true);
  const rawInput = await getRawInput();
  return guardCall(ctx, principal, { path, type, rawInput }, scopeOf(ctx, principal), async () => {
    refuseHostileText(rawInput);
    authorize(principal, path, type);
    return next({ ctx: { principal, person: principal.person! } });
  });
});

/**
 * Counts a tenant token's call against its tenant's budget in that environment (contract §9). Operators'
 * admin tokens are not limited by a tenant's budget.
 */
// A decision this process makes at once (`consumeNow`: the memory buckets, a leased slice of the Redis bucket) is
// applied without a promise; undefined then, else the promise of the decision applied.
function enforceRateLimit(ctx: Context, principal: Principal, tenant: TenantSummary, environment: Environment): Promise<void> | undefined {
  if (principal.role === "admin" || ctx.request.rateLimited) return;
  ctx.request.rateLimited = true;
  const limit = tenant.rateLimit ?? ctx.deps.config.rateLimit;
  const key = rateLimitKey(tenant.id, environment);
  const limiter = ctx.deps.rateLimiter;
  const now = limiter.consumeNow(key, limit);
  if (now) return applyRateLimit(ctx, limit, now);
  return limiter.consume(key, limit).then((decision) => applyRateLimit(ctx, limit, decision));
}

function applyRateLimit(ctx: Context, limit: RateLimit, decision: RateLimitDecision): undefined {
  // The budget on every answer, a 429 included; a request let through unchecked (Redis failed) was not counted.
  if (!decision.failedOpen) setRateLimitHeaders((ctx.request.responseHeaders ??= {}), limit, decision);
  if (!decision.allowed) throw new RateLimitedError(decision.retryAfterSeconds);
  return undefined;
}

// A cached tenant is answered without a promise (see `enforceRateLimit`).
function resolveTenant(ctx: Context, principal: Principal, tenantId: string): TenantSummary | Promise<TenantSummary> {
  ctx.request.tenantId = tenantId;
  const tenants = ctx.deps.tenants;
  // The cache holds tenants only (ids checked when they were found): a hit needs no second look at the id.
  let cached = tenants.cached?.(tenantId);
  if (cached === undefined && !isId("ten", tenantId)) cached = null;
  return cached !== undefined ? admitTenant(principal, cached) : tenants.find(tenantId).then((tenant) => admitTenant(principal, tenant));
}

function admitTenant(principal: Principal, tenant: TenantSummary | null): TenantSummary {
  if (!tenant) {
    if (principal.role === "admin") throw new NotFoundError("Tenant not found");
    throw new InvalidTokenError("The token's tenant does not exist");
  }
  if (tenant.disabled && principal.role !== "admin") throw new ForbiddenError("Tenant is disabled");
  return tenant;
}

/**
 * A call on one tenant's data, in one environment. Resolves both (contract §2):
 * a tenant token acts on its own tenant (`x-tenant-id`, when sent, must match it: else 403
 * `tenant_mismatch`); an admin token must name the tenant with `x-tenant-id` (else 400) and acts in its
 * `env` claim or the `x-environment` header. A disabled tenant's own tokens are 403.
 */
// The tenant bases authenticate in their own middleware rather than on top of `authedProcedure`: one
// tRPC middleware level fewer on every tenant call (each level copies the call's options and context).
export const tenantProcedure = t.procedure.use(
  guardMiddleware((ctx, call) => {
    // Waiting only for what is pending: on a cached path (token, key, tenant, leased budget) no promise at all.
    const authenticated = authenticate(ctx, call.type);
    return authenticated instanceof Promise ? authenticated.then((principal) => tenantCallBy(ctx, call, principal)) : tenantCallBy(ctx, call, authenticated);
  }),
);

/** What the tenant bases add to a call's context. */
interface TenantCall {
  principal: Principal;
  tenant: TenantSummary;
  environment: Environment;
}

function tenantCallBy(ctx: Context, call: BaseCall, principal: Principal): TenantCall | Promise<TenantCall> {
  return withRawInput(ctx, call, principal, (raw) => tenantCallOn(ctx, call, principal, raw));
}

function tenantCallOn(ctx: Context, call: BaseCall, principal: Principal, raw: unknown): TenantCall | Promise<TenantCall> {
  refuseHostileText(raw);
  const header = ctx.headers.get("x-tenant-id");
  let tenantId: string;
  if (principal.role === "admin") {
    if (!header) throw new BadRequestError("x-tenant-id header is required with an admin token");
    tenantId = header;
  } else {
    if (header === null && call.meta?.tenantHeader === "required") throw new BadRequestError("x-tenant-id header is required");
    if (header !== null && header !== principal.tenantId) throw new ForbiddenError("x-tenant-id does not match the token's tenant", "tenant_mismatch");
    tenantId = principal.tenantId!;
  }
  const environment = environmentOf(principal, ctx.headers);
  const resolved = resolveTenant(ctx, principal, tenantId);
  return resolved instanceof Promise
    ? resolved.then((tenant) => tenantCallAdmitted(ctx, call, principal, tenant, environment))
    : tenantCallAdmitted(ctx, call, principal, resolved, environment);
}

function tenantCallAdmitted(
  ctx: Context,
  call: BaseCall,
  principal: Principal,
  tenant: TenantSummary,
  environment: Environment,
): TenantCall | Promise<TenantCall> {
  if (call.audit?.scope) call.audit.scope.tenantId = tenant.id;
  const admitted = (): TenantCall => {
    authorize(principal, call.path, call.type);
    return { principal, tenant, environment };
  };
  const limited = enforceRateLimit(ctx, principal, tenant, environment);
  return limited ? limited.then(admitted) : admitted();
}

/**
 * A call on `/tenants/{tenant_id}/…`: an admin token on any tenant, a tenant token on its own only —
 * another tenant's id is 404, as if it did not exist (contract §2). `x-tenant-id`, when sent by a tenant
 * token, must still be the token's own (403 `tenant_mismatch`). Operators may manage a disabled tenant.
 */
export const tenantOwnerProcedure = t.procedure.use(async ({ ctx, path, type, getRawInput, next }) => {
  const principal = await authenticate(ctx, type);
  const raw = (await getRawInput()) as { tenant_id?: unknown } | undefined;
  const scope = scopeOf(ctx, principal);
  return guardCall(ctx, principal, { path, type, rawInput: raw }, scope, async () => {
    refuseHostileText(raw);
    const tenantId = typeof raw?.tenant_id === "string" ? raw.tenant_id : "";
    if (principal.role !== "admin") {
      const header = ctx.headers.get("x-tenant-id");
      if (header !== null && header !== principal.tenantId) throw new ForbiddenError("x-tenant-id does not match the token's tenant", "tenant_mismatch");
      if (tenantId !== principal.tenantId) throw new NotFoundError("Tenant not found");
    }
    const tenant = await resolveTenant(ctx, principal, tenantId);
    scope.tenantId = tenant.id;
    const environment = environmentOf(principal, ctx.headers);
    await enforceRateLimit(ctx, principal, tenant, environment);
    authorize(principal, path, type);
    return next({ ctx: { principal, tenant, environment } });
  });
});

/**
 * Acting on `live` needs a tenant an operator enabled for live, and an admin or live token: a sandbox
 * token asking for live is 403 (contract §3).
 */
export function assertMayActIn(principal: Principal, tenant: TenantSummary, environment: Environment): void {
  if (environment !== "live") return;
  if (principal.role !== "admin" && principal.environment !== "live") throw new ForbiddenError("A sandbox token cannot act on live");
  if (!tenant.liveEnabled) throw new ForbiddenError("Tenant is not enabled for live");
}
