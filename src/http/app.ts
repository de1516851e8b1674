/**
 * The Elysia application: `/trpc`, the REST routes generated from the router, health, the OpenAPI
 * document and `/docs`, with the cross-cutting work written once — request id, error shape, the request
 * log line and the HTTP metrics live in the `fetch` wrapper around the app.
 */
import type { AnyTRPCRouter } from "@trpc/server";
import { fetchRequestHandler } from "@trpc/server/adapters/fetch";
import { Elysia } from "elysia";
import type { OpenAPIObject } from "trpc-to-openapi";
import { AppError, HeadersTooLargeError, PayloadTooLargeError, ValidationError } from "../errors.ts";
import type { Context, RequestInfo } from "../routers/trpc.ts";
import type { Deps } from "../services/deps.ts";
import type * as SimulatorsModule from "../providers/simulators.ts";
import { readRawBody } from "./body-limit.ts";
import { docsPage, scalarBundle } from "./docs.ts";
import { prepareStaticBody, type StaticBody, staticResponse } from "./static-body.ts";
import { createCors } from "./cors.ts";
import { DASHBOARD_ROUTES, dashboardAsset, dashboardPage } from "./dashboard-routes.ts";
import { PAY_PAGE_ROUTES, payPage, payPageAsset } from "./pay-page-routes.ts";
import { mapError, trpcErrorShape, UNKNOWN_REQUEST_ID } from "../map-error.ts";
import { createRouteLabeller, type GatewayMetrics } from "./metrics.ts";
import { RAW_BODY_ROUTES } from "./raw-body-routes.ts";
import { requestIdFor } from "./request-id.ts";
import { ReceivedRequestInfo } from "./request-info.ts";
import { type AddressSource, rememberClientAddress } from "./client-address.ts";
import { rootResponse } from "./root-route.ts";
import { redactPath } from "../logger.ts";
import { errorResponse, jsonResponse } from "./responses.ts";
import { headBytes, MAX_HEADER_BYTES } from "./header-limit.ts";
import { createPathParamCheck } from "./path-params.ts";
import { mountRestRoutes } from "./rest-bridge.ts";
import { createRouteTable } from "./route-table.ts";

export interface HttpAppOptions {
  deps: Deps;
  router: AnyTRPCRouter;
  /** The OpenAPI document, asked for when `/openapi.json` is first requested. */
  openapi: () => Promise<OpenAPIObject>;
  metrics: GatewayMetrics;
  /** Checks behind `/health/ready`; each throws when its dependency is down. */
  readiness: Record<string, () => Promise<void>>;
  /** `false` sends REST calls through Elysia's router too (tests compare both ways). Default: looked up first. */
  fastRestRoutes?: boolean;
  /** `false` calls the hot reads (`meta.directRead`) through tRPC's middleware chain too (tests compare both ways). Default: directly. */
  directReads?: boolean;
  /**
   * The simulators' module, required when `deps.config.simulators` is on (they are mounted under
   * `/sandbox/…`); the caller loads it only then, so a production process never loads their code.
   */
  simulators?: typeof SimulatorsModule;
}

export interface HttpApp {
  app: Elysia;
  /** The gateway's request handler: Elysia wrapped with request id, log line and metrics. */
  fetch: (request: Request) => Promise<Response>;
  /**
   * The same, given the server that received the request (the listener's: it tells the client's address, `client-address.ts`);
   * a hot read whose every check is cached is answered without a promise.
   */
  serve: (request: Request, server: AddressSource) => Response | Promise<Response>;
  routes: { method: string; path: string }[];
  /** Stops what the app runs beside requests (the mounted simulators' timers and retries). */
  close(): void;
}

const READY_TIMEOUT_MS = 2_000;

/** The GET routes Elysia answers itself (neither REST procedures nor raw-body provider routes). */
const PLAIN_GET_PATHS = ["/", "/health/live", "/health/ready", "/openapi.json", "/docs", "/docs/scalar.js"];

async function checkWithin(check: () => Promise<void>, ms: number): Promise<"ok" | "down"> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    await Promise.race([
      check(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("timeout")), ms);
      }),
    ]);
    return "ok";
  } catch {
    return "down";
  } finally {
    clearTimeout(timer);
  }
}

/** Builds the HTTP application over the gateway's dependencies. */
export function createHttpApp(options: HttpAppOptions): HttpApp {
  const { deps, router } = options;
  const info = new WeakMap<Request, RequestInfo>();
  const infoOf = (request: Request): RequestInfo => {
    let found = info.get(request);
    if (!found) {
      found = new ReceivedRequestInfo(requestIdFor(request), request);
      info.set(request, found);
    }
    return found;
  };
  const createContext = (request: Request, requestInfo?: RequestInfo): Context => ({ deps, headers: request.headers, request: requestInfo ?? infoOf(request) });
  const onUnexpectedError = (error: unknown, request: RequestInfo) => deps.logger.error({ err: error, requestId: request.requestId }, "unexpected error");

  // The document, the docs page and Scalar's bundle never change in a process: each is compressed once
  // (static-body.ts), on first request, and answered with an ETag.
  let openapiBody: Promise<StaticBody> | undefined;
  const openapiJson = (): Promise<StaticBody> =>
    (openapiBody ??= options
      .openapi()
      .then((document) => prepareStaticBody(JSON.stringify(document)))
      .catch((error: unknown) => {
        openapiBody = undefined; // a later request tries again
        throw error;
      }));
  const docsHtml = prepareStaticBody(docsPage());

  const app = new Elysia({ normalize: false })
    .onError(({ code, error, request }) => {
      const requestId = infoOf(request).requestId;
      if (code === "NOT_FOUND") return errorResponse(mapError(new AppError(404, "not_found", "Route not found"), requestId));
      if (code === "PARSE") return errorResponse(mapError(new AppError(400, "validation_failed", "Malformed request body"), requestId));
      const mapped = mapError(error, requestId);
      if (mapped.unexpected) onUnexpectedError(error, infoOf(request));
      return errorResponse(mapped);
    })
    .get("/", ({ request }) => rootResponse(request))
    .get("/health/live", () => jsonResponse(200, { status: "ok" }))
    .get("/health/ready", async () => {
      const entries = await Promise.all(
        Object.entries(options.readiness).map(async ([name, check]) => [name, await checkWithin(check, READY_TIMEOUT_MS)] as const),
      );
      const checks = Object.fromEntries(entries);
      const ready = entries.every(([, state]) => state === "ok");
      return jsonResponse(ready ? 200 : 503, { status: ready ? "ok" : "unavailable", checks });
    })
    .get("/openapi.json", async ({ request }) =>
      staticResponse(request, await openapiJson(), { "content-type": "application/json", "cache-control": "no-cache" }),
    )
    .get("/docs", async ({ request }) => staticResponse(request, await docsHtml, { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" }))
    .get("/docs/scalar.js", async ({ request }) =>
      staticResponse(request, await scalarBundle(), { "content-type": "text/javascript", "cache-control": "public, max-age=86400" }),
    )
    .get("/dashboard", ({ request }) => dashboardPage(request))
    .get("/dashboard/assets/:name", ({ request, params }) => dashboardAsset(request, params.name))
    .get("/pay/:link_id", ({ request }) => payPage(request))
    .get("/pay-assets/:name", ({ request, params }) => payPageAsset(request, params.name))
    .all(
      "/trpc/*",
      async ({ request }) => {
        let req = request;
        if (request.method === "POST") {
          // tRPC reads the body itself; hold it to the same 64 KiB limit as REST, declared or streamed.
          let bytes: Uint8Array<ArrayBuffer>;
          try {
            bytes = await readRawBody(request);
          } catch (error) {
            if (!(error instanceof PayloadTooLargeError)) throw error;
            const mapped = mapError(error, infoOf(request).requestId);
            return jsonResponse(413, { error: trpcErrorShape(mapped) }); // tRPC's envelope, as its own errors have it
          }
          req = new Request(request.url, { method: "POST", headers: request.headers, body: bytes, signal: request.signal });
        }
        const response = await fetchRequestHandler({
          endpoint: "/trpc",
          req,
          router,
          allowBatching: false,
          createContext: () => createContext(request),
          onError: ({ error, ctx }) => {
            const requestInfo = ctx?.request ?? infoOf(request);
            const mapped = mapError(error, requestInfo.requestId);
            if (mapped.unexpected) onUnexpectedError(error.cause ?? error, requestInfo);
            // The error's own headers (Retry-After on a 429 or a 503), which tRPC's envelope has no place for.
            if (Object.keys(mapped.headers).length > 0) requestInfo.responseHeaders = { ...requestInfo.responseHeaders, ...mapped.headers };
          },
        });
        if (response.ok) return response;
        // tRPC may fail before it builds a context (e.g. a batch call): put the request id in the body then. Those
        // early refusals come without a Content-Type (a string body would be labelled text/plain): every tRPC error is JSON.
        const text = await response.text();
        const answer = new Response(text.replaceAll(UNKNOWN_REQUEST_ID, infoOf(request).requestId), response);
        answer.headers.set("content-type", "application/json");
        return answer;
      },
      { parse: "none" },
    );

  const simulatorModule = deps.config.simulators ? options.simulators : undefined;
  if (deps.config.simulators && !simulatorModule) throw new Error("createHttpApp: SIMULATORS is on, pass the simulators' module (options.simulators)");
  const simulators = simulatorModule
    ? (["providerA", "providerB"] as const).map((name) => {
        const simulator = simulatorModule.createSimulatorApp(name, {
          basePath: simulatorModule.simulatorMountPath(name),
          approveDelayMs: deps.config.simulatorApproveDelayMs,
        });
        app.mount(simulatorModule.simulatorMountPath(name), simulator.fetch);
        return simulator;
      })
    : [];

  const inboundRoutes = [...RAW_BODY_ROUTES, ...deps.providers.inbound];
  for (const route of inboundRoutes) {
    app.route(
      route.method,
      route.path.replace(/\{(\w+)\}/g, ":$1"),
      async ({ request, params }: { request: Request; params: Record<string, string> }) => {
        try {
          return await route.handle(deps, request, params ?? {});
        } catch (error) {
          const mapped = mapError(error, infoOf(request).requestId);
          if (mapped.unexpected) onUnexpectedError(error, infoOf(request));
          return errorResponse(mapped);
        }
      },
      { parse: "none" },
    );
  }

  // The REST routes are also looked up ahead of Elysia (route-table.ts); every other route is reserved
  // there, so a path another route answers still goes through Elysia.
  const table = createRouteTable();
  for (const path of PLAIN_GET_PATHS) table.add("GET", path, null);
  for (const route of [...DASHBOARD_ROUTES, ...PAY_PAGE_ROUTES]) table.add(route.method, route.path, null);
  for (const route of inboundRoutes) table.add(route.method, route.path, null);
  table.reservePrefix("/trpc/");
  if (simulatorModule) for (const name of ["providerA", "providerB"] as const) table.reservePrefix(simulatorModule.simulatorMountPath(name));
  const routes = mountRestRoutes(
    app as unknown as Elysia,
    router,
    { createContext, onUnexpectedError, directReads: options.directReads !== false },
    options.fastRestRoutes === false ? undefined : table,
  );
  const allRoutes = [
    ...routes,
    ...PLAIN_GET_PATHS.map((path) => ({ method: "GET", path })),
    ...DASHBOARD_ROUTES,
    ...PAY_PAGE_ROUTES,
    ...inboundRoutes,
    { method: "GET", path: "/trpc/*" },
    { method: "POST", path: "/trpc/*" },
  ];
  const cors = createCors(deps.config.corsOrigins, allRoutes);
  // The metrics' `route` label of a request the REST lookup did not answer (tRPC, webhooks, health, docs, 404s).
  const routeOf = createRouteLabeller(allRoutes);
  const unreadablePathParams = createPathParamCheck(allRoutes);

  /** 431 before any route runs: in `/trpc`'s envelope on `/trpc/…` (as its 413 is), the contract's body elsewhere. */
  const headersTooLarge = (request: Request, requestId: string): Response => {
    const mapped = mapError(new HeadersTooLargeError(MAX_HEADER_BYTES), requestId);
    if (new URL(request.url).pathname.startsWith("/trpc/")) return jsonResponse(mapped.status, { error: trpcErrorShape(mapped) });
    return errorResponse(mapped);
  };

  /** What every answer gets on its way out: the request id and a procedure's headers (unless stamped), CORS, metrics, the log line. */
  const finish = (
    request: Request,
    requestInfo: RequestInfo,
    response: Response,
    stamped: boolean,
    preflight: Response | undefined,
    route: string,
    started: number,
  ): Response => {
    if (!stamped) {
      response.headers.set("x-request-id", requestInfo.requestId);
      if (requestInfo.responseHeaders) for (const [name, value] of Object.entries(requestInfo.responseHeaders)) response.headers.set(name, value);
    }
    if (!preflight) cors.decorate(request, response);
    const seconds = (performance.now() - started) / 1000;
    options.metrics.recordRequest(request.method, route, response.status, seconds);
    // Built only when it is written: at `warn` (production's usual level) the line costs nothing.
    if (deps.logger.isLevelEnabled("info"))
      deps.logger.info(
        {
          requestId: requestInfo.requestId,
          tenantId: requestInfo.tenantId,
          method: request.method,
          route: redactPath(new URL(request.url).pathname),
          status: response.status,
          durationMs: Math.round(seconds * 1e4) / 10,
        },
        "request",
      );
    return response;
  };

  const unexpected = (error: unknown, requestInfo: RequestInfo): Response => {
    onUnexpectedError(error, requestInfo);
    return errorResponse(mapError(error, requestInfo.requestId));
  };

  // A REST call the lookup took is answered without a promise when its handler answers without one (a hot read
  // whose every check and read is cached: `direct-call.ts`); Bun then sends the response at once.
  const serve = (request: Request, server: AddressSource | undefined): Response | Promise<Response> => {
    const started = performance.now();
    // Over the head limit, no route runs (not even the REST lookup): the answer is the 431.
    const tooLarge = headBytes(request) > MAX_HEADER_BYTES;
    const rest = tooLarge ? undefined : table.match(request.method, request.url);
    if (!rest) return serveOthers(request, server, tooLarge, started);
    // A REST call looked up here gets its RequestInfo directly (nothing else sees the request) and
    // answers with the request id and response headers already on the response.
    const requestInfo = new ReceivedRequestInfo(requestIdFor(request), request, server);
    let answer: Response | Promise<Response>;
    try {
      answer = rest.handler({ request, params: rest.params, info: requestInfo });
    } catch (error) {
      return finish(request, requestInfo, unexpected(error, requestInfo), false, undefined, rest.route, started);
    }
    if (answer instanceof Promise)
      return answer.then(
        (response) => finish(request, requestInfo, response, true, undefined, rest.route, started),
        (error: unknown) => finish(request, requestInfo, unexpected(error, requestInfo), false, undefined, rest.route, started),
      );
    return finish(request, requestInfo, answer, true, undefined, rest.route, started);
  };

  /** Every request the REST lookup did not take: the 431, an unreadable path parameter, a preflight, and Elysia's routes. */
  const serveOthers = async (request: Request, server: AddressSource | undefined, tooLarge: boolean, started: number): Promise<Response> => {
    // The server is kept beside the request only for what Elysia answers (its hooks find the RequestInfo by request).
    if (server) rememberClientAddress(request, server);
    const requestInfo = infoOf(request);
    let response: Response;
    let preflight: Response | undefined;
    try {
      // A path the lookup took is plain (no `%`): only the others can hold an unreadable parameter. A preflight is
      // answered as usual: the request it asks about gets the 400.
      const unreadable = tooLarge || request.method === "OPTIONS" ? undefined : unreadablePathParams(request.method, request.url);
      if (tooLarge) {
        response = headersTooLarge(request, requestInfo.requestId);
      } else if (unreadable) {
        response = errorResponse(mapError(new ValidationError(unreadable), requestInfo.requestId));
      } else if (request.method === "OPTIONS") {
        // Answered here for every path: a preflight (cors.ts), or a 404 in the contract's shape for a path no route has.
        preflight = cors.preflight(request);
        response = preflight ?? errorResponse(mapError(new AppError(404, "not_found", "Route not found"), requestInfo.requestId));
      } else response = await app.handle(request);
    } catch (error) {
      response = unexpected(error, requestInfo);
    }
    return finish(request, requestInfo, response, false, preflight, routeOf(request), started);
  };

  return {
    app: app as unknown as Elysia,
    fetch: async (request) => serve(request, undefined),
    serve,
    routes,
    close: () => {
      for (const simulator of simulators) simulator.close();
    },
  };
}
