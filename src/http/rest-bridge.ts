/**
 * The REST surface: one Elysia route per procedure that has `meta.openapi`, generated at start-up, each
 * calling its procedure through tRPC so the procedure's middlewares (auth, tenancy) and its input and
 * output validation run exactly as on `/trpc`. trpc-to-openapi only writes the document; its request
 * handler is not used (it is slow, and it switches zod coercion on in the shared schemas).
 *
 * What the bridge owns: the content types a route takes (415), the body size limit (413, read through
 * `body-limit.ts`), JSON and form parsing (400), path parameters and query-string coercion — computed from
 * the schema once, without mutating it — answering every thrown error as `map-error.ts` maps it, and
 * compressing a successful answer of 1 KiB or more by `Accept-Encoding` (`compression.ts`).
 */
import type { AnyTRPCProcedure, AnyTRPCRouter } from "@trpc/server";
import type { Elysia } from "elysia";
import { BadRequestError, UnsupportedMediaTypeError } from "../errors.ts";
import type { Context, Meta, RequestInfo } from "../routers/trpc.ts";
import { MAX_PAGE_SIZE } from "../services/paging.ts";
import type { CsvList } from "../services/reports/csv-list.ts";
import { readRawBody } from "./body-limit.ts";
import { negotiatedBody, preferredCoding, varyOnEncoding } from "./compression.ts";
import { mapError } from "../map-error.ts";
import { stampedJsonResponse, stampedJsonText } from "./responses.ts";
import { directCaller, type DirectAnswer, type DirectCall } from "../routers/direct-call.ts";
import type { RouteTable } from "./route-table.ts";

type Coerce = (values: string[]) => unknown;

interface ZodLike {
  _zod: { def: { type: string; innerType?: ZodLike; in?: ZodLike; element?: ZodLike; shape?: Record<string, ZodLike> } };
  shape?: Record<string, ZodLike>;
}

/** The schema under optional/nullable/default wrappers. */
function unwrap(schema: ZodLike): ZodLike {
  let current = schema;
  for (let i = 0; i < 16; i++) {
    const def = current._zod.def;
    if (def.innerType && ["optional", "nullable", "default", "prefault", "readonly", "catch", "nonoptional"].includes(def.type)) current = def.innerType;
    else if (def.type === "pipe" && def.in) current = def.in;
    else break;
  }
  return current;
}

/** How to turn a query string or path value into what the field's schema expects. */
function coercerFor(schema: ZodLike): Coerce {
  const inner = unwrap(schema);
  const type = inner._zod.def.type;
  const scalar = (value: string): unknown => {
    if (type === "number" || type === "int") {
      const n = Number(value);
      return value.trim() !== "" && Number.isFinite(n) ? n : value;
    }
    if (type === "boolean") return value === "true" ? true : value === "false" ? false : value;
    return value;
  };
  if (type === "array") {
    const element = inner._zod.def.element ? coercerFor(inner._zod.def.element) : (v: string[]) => v[0];
    return (values) => values.flatMap((v) => v.split(",")).map((v) => element([v]));
  }
  return (values) => scalar(values[values.length - 1]!);
}

interface RouteSpec {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** The OpenAPI path (`/providerA/transaction/{transaction_id}/status`). */
  path: string;
  procedurePath: string;
  procedure: AnyTRPCProcedure;
  contentTypes: string[];
  coercers: Map<string, Coerce>;
  /** The OAuth2 token endpoint: errors as RFC 6749 §5.2 has them. */
  oauthErrors: boolean;
  /** Renders the output as CSV for a request that accepts `text/csv` (errors stay JSON). */
  csv: ((output: unknown) => string) | undefined;
  /** A list streamed as CSV, page by page, for a request that accepts `text/csv`. */
  csvList: CsvList | undefined;
  /** A hot read (`meta.directRead`): the procedure called without tRPC's middleware chain (`direct-call.ts`). */
  direct: DirectCall | undefined;
}

function routeSpecs(router: AnyTRPCRouter, directReads: boolean): RouteSpec[] {
  const specs: RouteSpec[] = [];
  const procedures = router._def.procedures as Record<string, AnyTRPCProcedure>;
  for (const [procedurePath, procedure] of Object.entries(procedures)) {
    const meta = procedure._def.meta as Meta | undefined;
    const openapi = meta?.openapi;
    if (!openapi || openapi.enabled === false) continue;
    const input = (procedure._def as unknown as { inputs: ZodLike[] }).inputs[0];
    const shape = input ? (unwrap(input)._zod.def.shape ?? {}) : {};
    const coercers = new Map<string, Coerce>();
    for (const [key, field] of Object.entries(shape)) coercers.set(key, coercerFor(field));
    specs.push({
      method: openapi.method,
      path: openapi.path,
      procedurePath,
      procedure,
      contentTypes: openapi.contentTypes ?? ["application/json"],
      coercers,
      oauthErrors: meta.oauthErrors === true,
      csv: meta.csv,
      csvList: meta.csvList,
      direct: directReads && meta.directRead && !meta.csv && !meta.csvList ? directCaller(procedure, procedurePath) : undefined,
    });
  }
  return specs;
}

/** Does the request prefer CSV (`Accept: text/csv`, listed before any JSON type)? */
function wantsCsv(request: Request): boolean {
  const accept = (request.headers.get("accept") ?? "").toLowerCase();
  const csv = accept.indexOf("text/csv");
  const json = accept.indexOf("application/json");
  return csv !== -1 && (json === -1 || csv < json);
}

function csvResponse(
  request: Request,
  body: string | ReadableStream<Uint8Array>,
  requestId: string,
  responseHeaders: Record<string, string> | undefined,
): Response {
  const headers: Record<string, string> = { "content-type": "text/csv; charset=utf-8", "x-request-id": requestId };
  if (responseHeaders) for (const name in responseHeaders) headers[name.toLowerCase()] = responseHeaders[name]!;
  if (typeof body === "string") return new Response(negotiatedBody(request, body, headers), { status: 200, headers });
  // A streamed list: gzip as it goes (the web platform's CompressionStream) when the client takes it.
  varyOnEncoding(headers);
  // CompressionStream has no brotli: ask whether gzip is acceptable with brotli left out of the client's list.
  const withoutBrotli = (request.headers.get("accept-encoding") ?? "").replace(/\bbr\b[^,]*/gi, "");
  if (preferredCoding(withoutBrotli) !== "gzip") return new Response(body, { status: 200, headers });
  headers["content-encoding"] = "gzip";
  // (bun-types and the DOM library disagree on CompressionStream's chunk type; it takes and gives bytes.)
  return new Response(body.pipeThrough(new CompressionStream("gzip") as unknown as ReadableWritablePair<Uint8Array, Uint8Array>), { status: 200, headers });
}

interface ListPage {
  data: unknown[];
  nextCursor: string | null;
}

/**
 * A list as CSV: the first page is read before answering (so a refusal is still a JSON error with its
 * status), then each next page only when the client has taken the one before (`pull`): one page in memory
 * at a time, whatever the export's length. A page that fails midway ends the stream with an error (the
 * client sees a truncated transfer, never a short file that looks complete); the caller logs it.
 */
async function csvListStream(
  csv: CsvList,
  readPage: (cursor: string | undefined) => Promise<ListPage>,
  cursor: string | undefined,
  onError: (error: unknown) => void,
) {
  const encoder = new TextEncoder();
  const first = await readPage(cursor);
  let next = first.nextCursor;
  let pending: string | null = csv.header + csv.rows(first.data);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        if (pending !== null) {
          controller.enqueue(encoder.encode(pending));
          pending = null;
        } else if (next !== null) {
          const page = await readPage(next);
          next = page.nextCursor;
          if (page.data.length > 0) controller.enqueue(encoder.encode(csv.rows(page.data)));
        }
        if (pending === null && next === null) controller.close();
      } catch (error) {
        onError(error);
        controller.error(error);
      }
    },
  });
}

async function readBody(request: Request, contentTypes: string[]): Promise<Record<string, unknown>> {
  const bytes = await readRawBody(request);
  if (bytes.byteLength === 0) return {};
  const mediaType = (request.headers.get("content-type") ?? "").split(";")[0]!.trim().toLowerCase();
  if (!contentTypes.includes(mediaType)) throw new UnsupportedMediaTypeError(contentTypes);
  const text = new TextDecoder().decode(bytes);
  if (mediaType === "application/x-www-form-urlencoded") return Object.fromEntries(new URLSearchParams(text));
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new BadRequestError("Malformed JSON in request body");
  }
  if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new BadRequestError("Request body must be a JSON object");
  return parsed as Record<string, unknown>;
}

/** The path parameters of a route that has none. */
const NO_PARAMS: Record<string, string> = Object.freeze({});

function queryInput(url: string, coercers: Map<string, Coerce>): Record<string, unknown> {
  const q = url.indexOf("?");
  if (q === -1) return {};
  const params = new URLSearchParams(url.slice(q + 1));
  const out: Record<string, unknown> = {};
  for (const key of new Set(params.keys())) {
    const coerce = coercers.get(key);
    out[key] = coerce ? coerce(params.getAll(key)) : params.get(key);
  }
  return out;
}

/** What each REST handler needs from the gateway. */
export interface BridgeDeps {
  /** The call's context; `info` when the caller already made the request's {@link RequestInfo}. */
  createContext(request: Request, info?: RequestInfo): Context;
  /** Logs an error that became a 500 (the body says nothing about it). */
  onUnexpectedError(error: unknown, request: RequestInfo): void;
  /** `false` calls the hot reads (`meta.directRead`) through tRPC like every other route (tests compare both ways). Default: directly. */
  directReads?: boolean;
}

/**
 * Adds one Elysia route per OpenAPI procedure of `router` to `app`, and the same handler to `table` (the
 * gateway's lookup ahead of Elysia, see `route-table.ts`). Returns the routes added, so the caller (and a
 * test) can see what the REST surface is.
 */
export function mountRestRoutes(app: Elysia, router: AnyTRPCRouter, bridge: BridgeDeps, table?: RouteTable): { method: string; path: string }[] {
  const mounted: { method: string; path: string }[] = [];
  for (const spec of routeSpecs(router, bridge.directReads !== false)) {
    const elysiaPath = spec.path.replace(/\{(\w+)\}/g, ":$1");
    const type = spec.procedure._def.type as "query" | "mutation";
    const takesBody = spec.method !== "GET" && spec.method !== "DELETE";
    const pathParams = [...spec.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
    // The response carries the request id and the procedure's response headers already (the `fetch`
    // wrapper sets them again on Elysia's path: same values).
    const withPathParams = (input: Record<string, unknown>, params: Record<string, string>): Record<string, unknown> => {
      for (const key of pathParams) {
        const value = params[key]!;
        const coerce = spec.coercers.get(key);
        input[key] = coerce ? coerce([value]) : value;
      }
      return input;
    };
    const failed = (error: unknown, ctx: Context): Response => {
      const mapped = mapError(error, ctx.request.requestId, spec.oauthErrors ? "oauth" : "contract");
      if (mapped.unexpected) bridge.onUnexpectedError(error, ctx.request);
      return stampedJsonResponse(mapped.status, mapped.body, ctx.request.requestId, ctx.request.responseHeaders, mapped.headers);
    };
    // A hot read (a GET: no body to wait for) answers without a promise when its direct call does.
    const direct = spec.direct && !takesBody ? spec.direct : undefined;
    // Its raw input when the URL has no query: a function of the path's parameters alone, made once per parameters
    // object (the lookup keeps one per path it remembers) and frozen, so the direct call may keep its parse too.
    const pathInputs = new WeakMap<Record<string, string>, Record<string, unknown>>();
    const rawInputOf = (url: string, params: Record<string, string> | undefined): Record<string, unknown> => {
      const given = params ?? NO_PARAMS; // (Elysia gives none to a route without parameters)
      if (url.includes("?")) return withPathParams(queryInput(url, spec.coercers), given);
      let input = pathInputs.get(given);
      if (!input) pathInputs.set(given, (input = Object.freeze(withPathParams({}, given))));
      return input;
    };
    const directHandler =
      direct &&
      (({ request, params, info }: { request: Request; params: Record<string, string>; info?: RequestInfo }): Response | Promise<Response> => {
        const ctx = bridge.createContext(request, info);
        const answered = (answer: DirectAnswer) => stampedJsonText(200, answer.json, ctx.request.requestId, ctx.request.responseHeaders, undefined, request);
        try {
          const answer = direct(ctx, rawInputOf(request.url, params));
          return answer instanceof Promise ? answer.then(answered, (error: unknown) => failed(error, ctx)) : answered(answer);
        } catch (error) {
          return failed(error, ctx);
        }
      });
    const generalHandler = async ({ request, params, info }: { request: Request; params: Record<string, string>; info?: RequestInfo }) => {
      const ctx = bridge.createContext(request, info);
      try {
        const input = withPathParams(takesBody ? await readBody(request, spec.contentTypes) : queryInput(request.url, spec.coercers), params);
        if (spec.direct) {
          const answer = await spec.direct(ctx, input);
          return stampedJsonText(200, answer.json, ctx.request.requestId, ctx.request.responseHeaders, undefined, request);
        }
        if (spec.csvList && wantsCsv(request)) {
          const csvList = spec.csvList;
          const readPage = (cursor: string | undefined) =>
            spec.procedure({
              ctx,
              getRawInput: async () => ({ ...input, limit: MAX_PAGE_SIZE, cursor }),
              path: spec.procedurePath,
              type,
              signal: undefined,
              batchIndex: 0,
            }) as Promise<ListPage>;
          const cursor = typeof input.cursor === "string" ? input.cursor : undefined;
          const body = await csvListStream(csvList, readPage, cursor, (error) => bridge.onUnexpectedError(error, ctx.request));
          return csvResponse(request, body, ctx.request.requestId, ctx.request.responseHeaders);
        }
        const output = await spec.procedure({
          ctx,
          getRawInput: async () => input,
          path: spec.procedurePath,
          type,
          // No `signal`: reading `request.signal` makes Bun create an AbortSignal per served request (~2 µs),
          // and no procedure on the REST surface reads it (/trpc still passes it through tRPC's adapter).
          signal: undefined,
          batchIndex: 0,
        });
        if (spec.csv && wantsCsv(request)) return csvResponse(request, spec.csv(output), ctx.request.requestId, ctx.request.responseHeaders);
        // A large answer (a list, a report) is compressed as the client accepts; errors are small and never are.
        return stampedJsonResponse(200, output, ctx.request.requestId, ctx.request.responseHeaders, undefined, request);
      } catch (error) {
        return failed(error, ctx);
      }
    };
    const handler = directHandler ?? generalHandler;
    app.route(spec.method, elysiaPath, handler, { parse: "none" });
    table?.add(spec.method, spec.path, handler);
    mounted.push({ method: spec.method, path: spec.path });
  }
  return mounted;
}
