/**
 * The tRPC instance every router builds on: the request context, the error formatter that puts the
 * contract's error body into tRPC's envelope, and the three procedure bases of contract §2.
 */
import { initTRPC } from "@trpc/server";
import type { OpenApiMeta } from "trpc-to-openapi";
import type { Environment } from "../config.ts";
import { BadRequestError, ForbiddenError, NotFoundError, UnauthorizedError } from "../errors.ts";
import { mapError, type ErrorBody } from "../http/error-body.ts";
import type { Principal } from "../services/auth/tokens.ts";
import type { Deps } from "../services/deps.ts";
import type { TenantSummary } from "../services/tenants/find-tenant.ts";

/** What the HTTP layer learns about a request while tRPC handles it (for the request log line). */
export interface RequestInfo {
  requestId: string;
  tenantId?: string;
  /** Headers a procedure adds to its HTTP response (e.g. `idempotent-replayed`), on either surface. */
  responseHeaders?: Record<string, string>;
}

/** The context of every procedure call, on `/trpc` and on the REST surface alike. */
export interface Context {
  deps: Deps;
  headers: Headers;
  request: RequestInfo;
}

/** Procedure metadata: trpc-to-openapi's, plus whether `x-tenant-id` is required (spec rule 1). */
export type Meta = OpenApiMeta<{ tenantHeader?: "required" | "accepted" }>;

/** What `error.data` holds on `/trpc`: the HTTP status and the REST error body. */
export interface ErrorData {
  httpStatus: number;
  httpBody: ErrorBody;
  code: string;
  path?: string;
}

/** Stands for the request id when tRPC fails before it built a context; the HTTP layer fills it in. */
export const UNKNOWN_REQUEST_ID = "__request_id__";

const t = initTRPC
  .context<Context>()
  .meta<Meta>()
  .create({
    isDev: false,
    errorFormatter({ shape, error, ctx, path }) {
      const mapped = mapError(error, ctx?.request.requestId ?? UNKNOWN_REQUEST_ID);
      const data: ErrorData = { httpStatus: mapped.status, httpBody: mapped.body, code: mapped.body.code, path };
      return { code: shape.code, message: Array.isArray(mapped.body.message) ? mapped.body.message.join("; ") : mapped.body.message, data };
    },
  });

export const router = t.router;
export const middleware = t.middleware;
export const createCallerFactory = t.createCallerFactory;

/** No token needed. */
export const publicProcedure = t.procedure;

function bearerToken(headers: Headers): string {
  const header = headers.get("authorization");
  if (!header) throw new UnauthorizedError("Missing Authorization header");
  const match = /^Bearer ([A-Za-z0-9._~+/-]+=*)$/.exec(header);
  if (!match) throw new UnauthorizedError("Authorization header must be 'Bearer <token>'");
  return match[1]!;
}

/** Any valid token, admin or tenant. */
export const authedProcedure = t.procedure.use(async ({ ctx, next }) => {
  const principal = await ctx.deps.tokens.verify(bearerToken(ctx.headers), ctx.deps.now().getTime());
  if (principal.tenantId) ctx.request.tenantId = principal.tenantId;
  return next({ ctx: { principal } });
});

/** An operator token (`role: "admin"`). */
export const adminProcedure = authedProcedure.use(({ ctx, next }) => {
  if (ctx.principal.role !== "admin") throw new ForbiddenError("This endpoint needs an admin token");
  return next();
});

const TENANT_ID = /^ten_[0-9A-HJKMNP-TV-Z]{26}$/;

/**
 * A call on one tenant's data, in one environment. Resolves both (contract §2):
 * a tenant token acts on its own tenant (`x-tenant-id`, when sent, must match it: else 403
 * `tenant_mismatch`); an admin token must name the tenant with `x-tenant-id` (else 400) and acts in its
 * `env` claim or the `x-environment` header. A disabled tenant is 403.
 */
export const tenantProcedure = authedProcedure.use(async ({ ctx, meta, next }) => {
  const header = ctx.headers.get("x-tenant-id");
  const { principal } = ctx;
  let tenantId: string;
  let environment: Environment = principal.environment;
  if (principal.role === "admin") {
    if (!header) throw new BadRequestError("x-tenant-id header is required with an admin token");
    tenantId = header;
    const requested = ctx.headers.get("x-environment");
    if (requested !== null) {
      if (requested !== "sandbox" && requested !== "live") throw new BadRequestError("x-environment must be one of the following values: sandbox, live");
      environment = requested;
    }
  } else {
    if (header === null && meta?.tenantHeader === "required") throw new BadRequestError("x-tenant-id header is required");
    if (header !== null && header !== principal.tenantId)
      throw new ForbiddenError("x-tenant-id does not match the token's tenant", "tenant_mismatch");
    tenantId = principal.tenantId!;
  }
  ctx.request.tenantId = tenantId;
  const tenant: TenantSummary | null = TENANT_ID.test(tenantId) ? await ctx.deps.tenants.find(tenantId) : null;
  if (!tenant) {
    if (principal.role === "admin") throw new NotFoundError("Tenant not found");
    throw new UnauthorizedError("The token's tenant does not exist");
  }
  if (tenant.disabled) throw new ForbiddenError("Tenant is disabled");
  return next({ ctx: { tenant, environment } });
});
