/**
 * The OpenAPI document, generated from the router by trpc-to-openapi (the document only — the REST
 * surface is served by `rest-bridge.ts`), then corrected to describe what the gateway really answers:
 *
 * - every error response is the one `Error` schema (the contract's error body, `code` an enum of
 *   `ERROR_CODES`), and each operation lists the statuses it can answer: those of its procedure base
 *   (public, any token, admin, tenant, tenant owner), of its input, of `Idempotency-Key`, plus the ones its
 *   procedure declares in `meta.errors` (a lookup's 404, a provider's 422/424/502/504…);
 * - public operations say so (`security: []`);
 * - every operation has an `operationId`: a procedure's is its router path with `-` for `.`
 *   (`tenants.create` → `tenants-create`, trpc-to-openapi's rule), a plain route's is its own or its path
 *   without parameters (`/providerB/webhook` → `providerB-webhook`);
 * - the plain routes (health, provider webhooks) are added so `/docs` shows every path, with their common
 *   answers (`openapi-shape.ts`);
 * - every response declares its headers (`openapi-headers.ts`: `x-request-id`, the rate-limit budget,
 *   `Idempotent-Replayed`, `Retry-After`, `WWW-Authenticate`), and the tenant bases' request headers
 *   (`x-tenant-id`, `x-environment`) are parameters;
 * - every procedure's description opens with who may call it and which people's roles may (also as
 *   `x-roles`, from `routers/access.ts`), and operator-only ones carry the tag `operator only`
 *   (`openapi-tags.ts`, which also describes every tag);
 * - the `webhooks` section describes every event a tenant's endpoint receives (`openapi-webhooks.ts`);
 * - its server is the gateway's `PUBLIC_BASE_URL` (`serverOf`); URL fields are `format: uri`.
 *
 * Spectral's `spectral:oas` and Redocly's `recommended-strict` pass it with no rule off (CI), and the tests
 * check every gateway response they receive against it (test/support/openapi-validation.ts).
 */
import type { AnyTRPCRouter } from "@trpc/server";
import { generateOpenApiDocument, type OpenAPIObject } from "trpc-to-openapi";
import { z } from "zod";
import { createDocument, type ZodOpenApiPathsObject } from "zod-openapi";
import { ERROR_CODES } from "../errors.ts";
import { areaOf, PUBLIC_PROCEDURES } from "../routers/access.ts";
import { adminProcedure, authedProcedure, personProcedure, tenantOwnerProcedure, tenantProcedure, type Meta } from "../routers/trpc.ts";
import { errorBodySchema } from "../error-body.ts";
import { OPERATOR_ROLES, roleMay, SHOP_ROLES } from "../services/people/roles.ts";
import { ENVIRONMENT_HEADER_PARAMETER, HEADER_COMPONENTS, headerRef, TENANT_HEADER_PARAMETER } from "./openapi-headers.ts";
import { describeOAuthTokenEndpoints } from "./openapi-oauth.ts";
import { describePlainRoutes, describeUrlFormats, DOCUMENTED_BASE_URL, documentTags, serverOf, statusDescription } from "./openapi-shape.ts";
import { BASE_DESCRIPTIONS, OPERATOR_TAG } from "./openapi-tags.ts";
import { describeWebhooks } from "./openapi-webhooks.ts";
import { RATE_LIMIT_HEADERS } from "./ratelimit-headers.ts";

const ERROR_REF = { $ref: "#/components/schemas/Error" };

const CSV_CONTENT = {
  schema: { type: "string", description: "The same report as CSV (`Accept: text/csv`): a header row, then one row per line of the report" },
};

const CSV_LIST_CONTENT = {
  schema: {
    type: "string",
    description:
      "Every matching item as CSV (`Accept: text/csv`), streamed: a header row of the item's fields (nested ones named with dots, " +
      "lists and maps as JSON text), then one row per item, newest first; `limit` is ignored, `cursor` is where it starts",
  },
};

/** The error body as documented: the contract's, with `code` the closed list of contract §1. */
const documentedErrorBody = errorBodySchema.extend({
  statusCode: z.number().int().min(400).max(599).meta({ example: 400 }),
  code: z.enum(ERROR_CODES).meta({ description: "A stable machine-readable code (contract §1)", example: "validation_failed" }),
  transactionId: z.number().int().min(1).optional().meta({
    description: "Provider A's id of that payment, when the provider had answered its creation",
    example: 412,
  }),
});

/** How a procedure's base authorises a call, and the statuses that gives it. */
type Base = "public" | "authenticated" | "admin" | "tenant" | "tenantOwner" | "person";

const BASE_ERRORS: Record<Base, number[]> = {
  public: [],
  // A missing, invalid, expired or revoked token.
  authenticated: [401],
  // …and a tenant token on an operators' route.
  admin: [401, 403],
  // …x-tenant-id missing with an admin token or a bad x-environment (400); x-tenant-id not the token's,
  // a disabled tenant, a sandbox token on live (403); an unknown tenant (404); the tenant's budget (429).
  tenant: [400, 401, 403, 404, 429],
  // …a tenant token on another tenant's path (404), x-tenant-id not the token's (403), a bad x-environment (400).
  tenantOwner: [400, 401, 403, 404, 429],
  // No session, or an ended one (401); a change without the session's x-csrf-token (403).
  person: [401, 403],
};

/**
 * Who may call, as the document's `security` (trpc-to-openapi would list every scheme): a person's session is
 * accepted wherever a tenant's token is, never for an operator's call.
 */
const BASE_SECURITY: Partial<Record<Base, Record<string, never[]>[]>> = {
  admin: [{ bearer: [] }],
  authenticated: [{ bearer: [] }, { session: [] }],
  tenant: [{ bearer: [] }, { session: [] }],
  tenantOwner: [{ bearer: [] }, { session: [] }],
  person: [{ session: [] }],
};

/**
 * Every operation: request headers over the server's limit (431, answered before the gateway reads the
 * request: no `x-request-id`), a bug (500), the database or Redis down (503).
 */
export const ALWAYS = [431, 500, 503];

/** The last middleware each base adds: a procedure built on that base runs it (identity, not name). */
const BASE_MARKERS: [Base, unknown][] = [
  ["admin", adminProcedure._def.middlewares.at(-1)],
  ["tenant", tenantProcedure._def.middlewares.at(-1)],
  ["tenantOwner", tenantOwnerProcedure._def.middlewares.at(-1)],
  ["authenticated", authedProcedure._def.middlewares.at(-1)],
  ["person", personProcedure._def.middlewares.at(-1)],
];

interface ProcedureFacts {
  base: Base;
  declared: readonly number[];
  /** The REST route also answers `text/csv`: a report (`meta.csv`) or a whole list (`meta.csvList`). */
  csv: "report" | "list" | null;
  /** The answer sets or clears the session cookie. */
  sessionCookie: boolean;
  /** Counted against the caller's address (`meta.limitedPerAddress`): its answers carry the budget's headers. */
  limitedPerAddress: boolean;
  /** The people's roles that may call it (`routers/access.ts`); null for a public procedure. */
  roles: string[] | null;
}

/** Each procedure's base and declared statuses, by its operationId (`tenants.create` → `tenants-create`). */
function procedureFacts(router: AnyTRPCRouter): Map<string, ProcedureFacts> {
  const facts = new Map<string, ProcedureFacts>();
  const procedures = router._def.procedures as Record<string, { _def: { middlewares: unknown[]; meta?: Meta; type: "query" | "mutation" | "subscription" } }>;
  for (const [path, procedure] of Object.entries(procedures)) {
    const middlewares = procedure._def.middlewares;
    const base = BASE_MARKERS.find(([, marker]) => middlewares.includes(marker))?.[0] ?? "public";
    const meta = procedure._def.meta;
    const csv = meta?.csv !== undefined ? "report" : meta?.csvList !== undefined ? "list" : null;
    facts.set(path.replaceAll(".", "-"), {
      base,
      declared: meta?.errors ?? [],
      csv,
      sessionCookie: meta?.sessionCookie === true,
      limitedPerAddress: meta?.limitedPerAddress === true,
      roles: rolesOf(path, procedure._def.type),
    });
  }
  return facts;
}

interface ResponseObject {
  description?: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema?: unknown }>;
}

interface OperationObject {
  operationId?: string;
  tags?: string[];
  description?: string;
  security?: unknown[];
  parameters?: { name?: string; in?: string; schema?: Record<string, unknown> }[];
  requestBody?: unknown;
  responses?: Record<string, ResponseObject>;
}

function errorResponse(status: number): ResponseObject {
  const response: ResponseObject = { description: statusDescription(status), content: { "application/json": { schema: ERROR_REF } } };
  if (status === 429 || status === 503) response.headers = { "retry-after": headerRef("retry-after") };
  if (status === 401) response.headers = { "www-authenticate": headerRef("www-authenticate") };
  return response;
}

/**
 * The headers every response of a procedure's operation may carry: its request id; the rate-limit budget on
 * a tenant base (counted for a tenant's token); `idempotent-replayed` when it takes `Idempotency-Key`.
 */
function describeResponseHeaders(operation: OperationObject, procedure: ProcedureFacts): void {
  const idempotent = operation.parameters?.some((parameter) => parameter.in === "header" && parameter.name?.toLowerCase() === "idempotency-key");
  for (const [status, response] of Object.entries(operation.responses ?? {})) {
    if (status === "431") continue;
    const headers: Record<string, unknown> = { "x-request-id": headerRef("x-request-id") };
    if (procedure.base === "tenant" || procedure.base === "tenantOwner" || procedure.limitedPerAddress)
      for (const name of RATE_LIMIT_HEADERS) headers[name] = headerRef(name);
    if (idempotent) headers["idempotent-replayed"] = headerRef("idempotent-replayed");
    if (procedure.sessionCookie && status === "200") {
      headers["set-cookie"] = {
        description: "The dashboard's session: `passerelle_session=…; Path=/; Max-Age=…; HttpOnly; Secure; SameSite=Strict` (`Max-Age=0` clears it)",
        schema: { type: "string" },
      };
      headers["cache-control"] = { description: "`no-store` when the answer opens a session", schema: { type: "string" } };
    }
    response.headers = { ...headers, ...response.headers };
  }
}

/** The request headers a base reads, added to the operation's parameters unless it declares them itself. */
function describeRequestHeaders(operation: OperationObject, procedure: ProcedureFacts): void {
  const wanted =
    procedure.base === "tenant"
      ? [TENANT_HEADER_PARAMETER, ENVIRONMENT_HEADER_PARAMETER]
      : procedure.base === "tenantOwner"
        ? [ENVIRONMENT_HEADER_PARAMETER]
        : [];
  for (const parameter of wanted) {
    const declared = operation.parameters?.find((given) => given.in === "header" && given.name?.toLowerCase() === parameter.name);
    if (declared) declared.schema = { ...parameter.schema, ...declared.schema };
    else (operation.parameters ??= []).push({ ...parameter, schema: { ...parameter.schema } });
  }
}

/** The roles of people who may call the procedure at `path`, as the one check of `routers/trpc.ts` has them. */
function rolesOf(path: string, type: "query" | "mutation" | "subscription"): string[] | null {
  if (PUBLIC_PROCEDURES.includes(path)) return null;
  const area = areaOf(path);
  return [...SHOP_ROLES, ...OPERATOR_ROLES].filter((role) => area !== undefined && roleMay(role, area, type));
}

/**
 * Tags operator-only operations and opens every procedure's description with who may call it, and which of the
 * people's roles (docs/team.md), also given as `x-roles`.
 */
function describeCaller(operation: OperationObject, procedure: ProcedureFacts): void {
  if (procedure.base === "admin" && !operation.tags?.includes(OPERATOR_TAG)) operation.tags = [...(operation.tags ?? []), OPERATOR_TAG];
  let who: string = BASE_DESCRIPTIONS[procedure.base];
  if (procedure.roles) {
    who += ` People's roles that may: ${procedure.roles.length > 0 ? procedure.roles.join(", ") : "none"}.`;
    (operation as OperationObject & { "x-roles"?: string[] })["x-roles"] = procedure.roles;
  }
  operation.description = operation.description ? `${who}\n\n${operation.description}` : who;
}

/** The statuses an operation of a procedure can answer, from what it is and what it declares. */
function errorStatuses(operation: OperationObject, facts: ProcedureFacts): number[] {
  // 400 on every procedure, one without parameters too: every base refuses a query string that holds a NUL
  // character or an unpaired surrogate (`GET /auth/whoami?x=%00`) before it reads anything (routers/trpc.ts).
  const statuses = new Set([...BASE_ERRORS[facts.base], ...facts.declared, ...ALWAYS, 400]);
  if (operation.requestBody) for (const status of [413, 415]) statuses.add(status);
  // Idempotency-Key: 409 while the first request runs, 422 when reused with another body.
  if (operation.parameters?.some((parameter) => parameter.in === "header" && parameter.name?.toLowerCase() === "idempotency-key"))
    for (const status of [409, 422]) statuses.add(status);
  return [...statuses].sort((a, b) => a - b);
}

/**
 * `z.number().int()` documents JavaScript's safe-integer range as `minimum`/`maximum`: no caller's bound,
 * and the reference tool offers the minimum (-9007199254740991) as the example. Real bounds stay.
 */
function dropSafeIntegerBounds(node: unknown): void {
  if (Array.isArray(node)) {
    for (const item of node) dropSafeIntegerBounds(item);
    return;
  }
  if (!node || typeof node !== "object") return;
  const schema = node as Record<string, unknown>;
  if (schema.minimum === Number.MIN_SAFE_INTEGER) delete schema.minimum;
  if (schema.maximum === Number.MAX_SAFE_INTEGER) delete schema.maximum;
  for (const value of Object.values(schema)) dropSafeIntegerBounds(value);
}

/**
 * Generates the document for `router` plus the given plain-route paths; `baseUrl` is the gateway's public
 * address (`PUBLIC_BASE_URL`; by default its documented default), the document's one server.
 */
export function buildOpenApiDocument(
  router: AnyTRPCRouter,
  plainPaths: ZodOpenApiPathsObject,
  version: string,
  baseUrl: string = DOCUMENTED_BASE_URL,
): OpenAPIObject {
  const document = generateOpenApiDocument(router, {
    title: "Passerelle",
    description:
      "A multi-tenant payment gateway proxy for West-African mobile money and cards. " +
      "Every error has the shape of the `Error` schema; every response carries `x-request-id`. " +
      "Events reach the tenant's endpoints as Standard Webhooks (the `webhooks` section; docs/verifying-webhooks.md).",
    version,
    baseUrl,
    // Each operator runs its own gateway: the contact is that operator, at the gateway's own address. The
    // software is not published under a public licence: an SPDX `LicenseRef-` says so.
    contact: { name: "The operator of this gateway", url: baseUrl },
    license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    securitySchemes: {
      bearer: { type: "http", scheme: "bearer", bearerFormat: "JWT" },
      session: {
        type: "apiKey",
        in: "cookie",
        name: "passerelle_session",
        description:
          "A person's dashboard session (`POST /people/sign-in`): `HttpOnly; Secure; SameSite=Strict`. A call that changes something also sends the session's CSRF token as `x-csrf-token`.",
      },
    },
    paths: plainPaths,
  });
  // The error body schema, rendered by zod-openapi the same way as the rest of the document.
  const errorComponent = createDocument({
    openapi: "3.1.0",
    info: { title: "", version: "" },
    components: { schemas: { Error: documentedErrorBody } },
  }).components?.schemas?.Error;
  document.components ??= {};
  // trpc-to-openapi's own error shapes (`error.BAD_REQUEST`…) describe nothing the gateway answers.
  const schemas = Object.entries(document.components.schemas ?? {}).filter(([name]) => !name.startsWith("error."));
  document.components.schemas = { ...Object.fromEntries(schemas), Error: errorComponent as NonNullable<typeof errorComponent> };

  const facts = procedureFacts(router);
  for (const [path, item] of Object.entries(document.paths ?? {})) {
    for (const operation of Object.values(item as Record<string, OperationObject>)) {
      if (!operation?.responses) continue;
      operation.operationId ??= path
        .split("/")
        .filter((segment) => segment && !segment.startsWith("{"))
        .join("-");
      const procedure = path in plainPaths ? undefined : facts.get(operation.operationId);
      if (!procedure || procedure.base === "public") operation.security ??= [];
      else if (BASE_SECURITY[procedure.base]) operation.security = BASE_SECURITY[procedure.base];
      // Plain routes describe their own responses; the procedures' are trpc-to-openapi's and get corrected.
      if (!procedure) continue;
      const responses = operation.responses;
      for (const status of Object.keys(responses)) if (Number(status) >= 400) delete responses[status];
      for (const status of errorStatuses(operation, procedure)) responses[String(status)] = errorResponse(status);
      const ok = responses["200"];
      if (ok && procedure.csv) ok.content = { ...ok.content, "text/csv": procedure.csv === "report" ? CSV_CONTENT : CSV_LIST_CONTENT };
      describeResponseHeaders(operation, procedure);
      describeRequestHeaders(operation, procedure);
      describeCaller(operation, procedure);
    }
  }
  document.components.headers = structuredClone(HEADER_COMPONENTS) as unknown as NonNullable<typeof document.components.headers>;
  describeOAuthTokenEndpoints(document, router);
  describePlainRoutes(document, plainPaths);
  describeWebhooks(document);
  dropSafeIntegerBounds(document);
  describeUrlFormats(document);
  document.servers = [serverOf(baseUrl)];
  document.tags = documentTags(document);
  return document;
}
