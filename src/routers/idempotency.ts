/**
 * The `Idempotency-Key` middleware (contract §9) that every creating procedure adds:
 *
 * ```ts
 * create: tenantOwnerProcedure.use(idempotent({ sealResponse: true })).meta(…).input(…).output(…).mutation(…)
 * ```
 *
 * It works the same on the REST surface and on `/trpc`, since both call the procedure through tRPC: the
 * key comes from the request headers, the scope from the context the procedure base resolved (tenant and
 * environment; operator calls without a tenant use {@link OPERATOR_TENANT_ID}) and from `meta.openapi`
 * (method, and the path with its parameters filled from the raw input — never the URL, which differs
 * between the surfaces). Without the header the call runs as usual.
 *
 * The key's lock is renewed while the procedure runs, so a retry meanwhile is always 409. A replay answers
 * the stored output (or throws the stored error again) without running the procedure, with
 * `idempotent-replayed: true` in the response headers.
 */
import { middlewareMarker, type MiddlewareResult } from "@trpc/server/unstable-core-do-not-import";
import { z } from "zod";
import type { Environment } from "../config.ts";
import type { JsonValue } from "../db/schema.ts";
import { AppError, ValidationError, type ErrorCode, type ErrorExtras } from "../errors.ts";
import type { ErrorBody } from "../error-body.ts";
import { mapError } from "../map-error.ts";
import type { Principal } from "../services/auth/tokens.ts";
import {
  beginIdempotentRequest,
  completeIdempotentRequest,
  completeIdempotentRequestWhenBack,
  holdIdempotencyClaim,
  MAX_IDEMPOTENCY_KEY_LENGTH,
  OPERATOR_TENANT_ID,
  releaseIdempotencyClaim,
  type IdempotencyScope,
  type IdempotentAnswer,
} from "../services/idempotency/mod.ts";
import type { TenantSummary } from "../services/tenants/find-tenant.ts";
import { middleware, type Context, type Meta, type RequestInfo } from "./trpc.ts";

export interface IdempotentOptions {
  /** The answer holds a secret shown once (an API key, a signing secret): store it sealed. */
  sealResponse?: boolean;
}

/** The response header that marks a replayed answer. */
export const REPLAYED_HEADER = "idempotent-replayed";

/**
 * The request header, for `meta.openapi.requestHeaders` of an idempotent procedure: it documents the
 * header in the OpenAPI document (the middleware reads and checks it, not this schema).
 */
export const idempotencyKeyHeader = z.object({
  "idempotency-key": z
    .string()
    .min(1)
    .max(MAX_IDEMPOTENCY_KEY_LENGTH)
    .optional()
    .meta({
      description:
        "Makes the call safe to retry: the same key with the same body within 24 hours answers the first answer again, with `idempotent-replayed: true`; " +
        "another body is 422, a call while the first runs is 409.",
    }),
});

/**
 * What the procedure bases may have added to the context by the time this middleware runs. A public procedure
 * that acts for a tenant (the pay page, for a link's tenant) names it as `idempotencyOwner`.
 */
export type ResolvedContext = Context & {
  principal?: Principal;
  tenant?: TenantSummary;
  environment?: Environment;
  idempotencyOwner?: { tenantId: string; environment: Environment };
};

/** An error answer as stored: the contract's error body without the request id (a replay gets its own). */
type StoredErrorBody = Omit<ErrorBody, "requestId">;

/** Tenant and environment: the resolved tenant's, or — for operator calls without one — the operator's. */
function tenantAndEnvironment(ctx: ResolvedContext): { tenantId: string; environment: Environment } {
  if (ctx.idempotencyOwner) return ctx.idempotencyOwner;
  if (ctx.tenant && ctx.environment) return { tenantId: ctx.tenant.id, environment: ctx.environment };
  if (ctx.principal?.role === "admin") return { tenantId: OPERATOR_TENANT_ID, environment: ctx.principal.environment };
  if (ctx.principal?.tenantId) return { tenantId: ctx.principal.tenantId, environment: ctx.principal.environment };
  // A public procedure with no owner named has no caller to scope keys by: using idempotent() there is a programming error.
  throw new Error("idempotent() needs a procedure with an authenticated caller (adminProcedure, tenantProcedure, …)");
}

/** `/tenants/{tenant_id}/api-keys` with `tenant_id` from the input; the procedure path when not on REST. */
function concretePath(meta: Meta | undefined, procedurePath: string, rawInput: unknown): string {
  const template = meta?.openapi?.path;
  if (!template) return `/trpc/${procedurePath}`;
  const values = (rawInput ?? {}) as Record<string, unknown>;
  return template.replace(/\{(\w+)\}/g, (placeholder, name: string) => {
    const value = values[name];
    return value === undefined || value === null ? placeholder : encodeURIComponent(String(value));
  });
}

function scopeOf(ctx: ResolvedContext, meta: Meta | undefined, type: string, procedurePath: string, rawInput: unknown): IdempotencyScope {
  return {
    ...tenantAndEnvironment(ctx),
    method: meta?.openapi?.method ?? (type === "query" ? "GET" : "POST"),
    path: concretePath(meta, procedurePath, rawInput),
  };
}

/**
 * Ends the call with `data` as the procedure's output, without running the procedure.
 *
 * tRPC v11 has no public way for a middleware to answer by itself (trpc/trpc#4066): a middleware returns
 * what `next()` returned, `{ ok: true, data, marker }`, and tRPC hands `data` to the caller — on every
 * surface — without checking who produced it. `marker` is a compile-time brand (at run time the string
 * "middlewareMarker") that tRPC exports only from its internal entry point; this is the one place that
 * relies on it.
 */
function answerWithoutRunning(data: unknown): MiddlewareResult<object> {
  return { ok: true, data, marker: middlewareMarker };
}

/** The error a stored error answer stands for; `mapError` turns it back into the same body. */
function storedError(answer: IdempotentAnswer): AppError {
  const body = answer.body as StoredErrorBody;
  if (Array.isArray(body.message)) return new ValidationError(body.message);
  const extras: ErrorExtras = {};
  if (body.providerErrors) extras.providerErrors = body.providerErrors;
  if (body.providerResponseCode !== undefined) extras.providerResponseCode = body.providerResponseCode;
  if (body.paymentId !== undefined) extras.paymentId = body.paymentId;
  if (body.transactionId !== undefined) extras.transactionId = body.transactionId;
  return new AppError(answer.status, body.code as ErrorCode, body.message, extras);
}

function errorAnswer(error: unknown, requestId: string): IdempotentAnswer {
  const mapped = mapError(error, requestId);
  const { requestId: _perRequest, ...body } = mapped.body;
  return { status: mapped.status, body: body as JsonValue, headers: mapped.headers };
}

/** Headers the procedure added to the response while it ran (a replay must send them again). */
function addedHeaders(before: Record<string, string>, request: RequestInfo): Record<string, string> {
  const added: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.responseHeaders ?? {})) if (before[name] !== value) added[name] = value;
  return added;
}

/**
 * The `Idempotency-Key` middleware. Add it to a creating procedure after its base (which resolves the
 * caller) and before `.input()`.
 *
 * @example
 * ```ts
 * create: tenantOwnerProcedure.use(idempotent({ sealResponse: true })).meta(…).input(…).mutation(…)
 * ```
 */
export function idempotent(options: IdempotentOptions = {}) {
  return middleware(async ({ ctx, meta, type, path, getRawInput, next }) => {
    const key = ctx.headers.get("idempotency-key");
    if (key === null) return next();
    const rawInput = await getRawInput();
    const scope = scopeOf(ctx as ResolvedContext, meta, type, path, rawInput);
    const start = await beginIdempotentRequest(ctx.deps, { scope, key, request: rawInput });

    if (start.outcome === "replay") {
      const { answer } = start;
      ctx.request.responseHeaders = { ...ctx.request.responseHeaders, ...answer.headers, [REPLAYED_HEADER]: "true" };
      if (answer.status >= 400) throw storedError(answer);
      return answerWithoutRunning(answer.body);
    }

    const headersBefore = { ...ctx.request.responseHeaders };
    let result: Awaited<ReturnType<typeof next>>;
    try {
      // The key stays locked for as long as the procedure runs (a direct payment's provider calls may
      // outlast the lock's first term), so a retry meanwhile is 409 and never a second payment.
      result = await holdIdempotencyClaim(ctx.deps, start.claim, () => next());
    } catch (error) {
      // tRPC turns what a procedure throws into `{ ok: false }`; this only guards against tRPC itself.
      await releaseIdempotencyClaim(ctx.deps, start.claim).catch(() => {});
      throw error;
    }
    const answer: IdempotentAnswer = result.ok
      ? { status: 200, body: toJson(result.data), headers: addedHeaders(headersBefore, ctx.request) }
      : errorAnswer(result.error, ctx.request.requestId);
    try {
      await completeIdempotentRequest(ctx.deps, start.claim, answer, { seal: options.sealResponse });
    } catch (error) {
      // The work is done: answer it. The answer is stored (or the key freed) as soon as the database is back,
      // tried again every second for a lock's term; meanwhile a retry is 409.
      ctx.deps.logger.error({ err: error, requestId: ctx.request.requestId }, "could not store the idempotent answer; trying again every second");
      void completeIdempotentRequestWhenBack(ctx.deps, start.claim, answer, { seal: options.sealResponse });
    }
    return result;
  });
}

/**
 * The request's `Idempotency-Key` with the concrete path it was sent to (the procedure's `meta.openapi.path`,
 * parameters filled in — this middleware's scope), for a service whose row keeps the key for good (a payment:
 * `services/payments/payment-key.ts`). Undefined without the header. The middleware has checked the key already.
 */
export function requestKey(ctx: Pick<Context, "headers">, path: string): { key: string; path: string } | undefined {
  const key = ctx.headers.get("idempotency-key");
  return key === null ? undefined : { key, path };
}

/** The output as it travels on the wire (dates become strings), which is what a replay must answer. */
function toJson(data: unknown): JsonValue {
  return data === undefined ? null : (JSON.parse(JSON.stringify(data)) as JsonValue);
}
