/**
 * Passerelle as a library: build a gateway from a {@link Config}, serve its `fetch` from any Bun program,
 * or let it listen and run its workers itself. The CLI (`src/main.ts`) is a thin shell over this.
 *
 * @example
 * ```ts
 * import { createGateway, loadConfig } from "passerelle";
 * const gateway = await createGateway(loadConfig(process.env));
 * await gateway.start();            // HTTP, metrics listener and workers
 * // or: Bun.serve({ fetch: gateway.fetch })
 * ```
 */
import { join } from "node:path";
import type { Logger } from "pino";
import type { OpenAPIObject } from "trpc-to-openapi";
import packageJson from "../package.json" with { type: "json" };
import type { Config } from "./config.ts";
import { createKeyring } from "./crypto/seal.ts";
import { openDatabase, type DatabaseHandle } from "./db/connect.ts";
import { migrateToLatest } from "./db/migrate.ts";
import { createHttpApp } from "./http/app.ts";
import { listenerOptions } from "./http/listener.ts";
import { gatewayForProviders } from "./services/gateway-for-providers.ts";
import { createFirstSyncHold, releaseHeldFirstSyncs } from "./services/direct-payments/first-sync.ts";
import { createMetrics, metricsFetch, registerQueueGauges } from "./http/metrics.ts";
import { registerStuckPaymentsGauge } from "./services/payments/stuck-payments.ts";
import { registerAuditGauges } from "./services/audit/audit.ts";
import { registerPrunedRowsCounter } from "./services/retention/mod.ts";
import { registerPaymentsByStateGauge } from "./services/payments/payments-by-state.ts";
import { plainRoutePathsFor } from "./http/plain-routes.ts";
import { createJobQueue, createRedisOutageTracker } from "./jobs/mod.ts";
import type { JobQueue } from "./jobs/queue.ts";
import { REAL_TIMERS, type Timers } from "./timers.ts";
import { registerWorkers, type WorkerOptions } from "./workers/mod.ts";
import { createLogger, logOutage } from "./logger.ts";
import { appRouter, type AppRouter, createAppRouter } from "./routers/app.ts";
import { createTokenVerifier } from "./services/auth/tokens.ts";
import type { Deps } from "./services/deps.ts";
import { createGatewayCaches } from "./services/caches.ts";
import { createTenantFinder } from "./services/tenants/find-tenant.ts";
import { createApiKeyStatus } from "./services/api-keys/key-status.ts";
import { createRateLimiter } from "./services/rate-limit/mod.ts";
import type { PaymentProvider } from "./providers/provider.ts";
import { createProviderRegistry, DEFAULT_PROVIDERS } from "./providers/registry.ts";
import { createRedisClient } from "./jobs/redis-client.ts";
import { createOffsetClock } from "./offset-clock.ts";

export { ConfigError, loadConfig, type Config } from "./config.ts";
export { mintToken, type Principal } from "./services/auth/tokens.ts";
export { rotateSealedSecrets, type RotationReport } from "./services/keys/rotate-sealed.ts";
export type { AppRouter } from "./routers/app.ts";
export type { ErrorBody } from "./error-body.ts";
export type * from "./providers/provider.ts";
export { ProviderCallError, CollectionError, PayoutError, SendingStopped } from "./providers/provider.ts";
export { DEFAULT_PROVIDERS } from "./providers/registry.ts";
export { followPayment } from "./services/direct-payments/follow-payment.ts";
export { followPayout } from "./services/payouts/follow-payout.ts";
export { audit, runAudit, violationLine, type Violation, type Invariant } from "./services/audit/audit.ts";
export { PRUNED_TABLES, pruneOldRows, type PruneReport, totalPruned } from "./services/retention/mod.ts";

/** Parts a caller may supply instead of letting the gateway build them (tests, embedding programs). */
export interface GatewayParts {
  database?: DatabaseHandle;
  queue?: JobQueue;
  logger?: Logger;
  now?: () => Date;
  /**
   * The clock and timers of what the gateway waits on (`Deps.timers`; the in-process queue it builds, its held
   * first sync steps, the rate limiter's lease, its providers' waits such as provider A's before retrying a refused
   * connection): a test's virtual time, which `now` then defaults to. Default the process's.
   */
  timers?: Timers;
  /** The payment providers to run with (default {@link DEFAULT_PROVIDERS}); a test adds its own. */
  providers?: readonly PaymentProvider[];
  /** Worker settings (concurrency, sweep interval); production uses the defaults. */
  workers?: WorkerOptions;
}

export interface StartOptions {
  /** Serve HTTP (and the metrics listener). Default true. */
  http?: boolean;
  /** Run the background workers in this process. Default true. */
  workers?: boolean;
}

export interface Gateway {
  /** The HTTP handler: hand it to `Bun.serve`, or call it directly. */
  fetch: (request: Request) => Promise<Response>;
  router: AppRouter;
  deps: Deps;
  /** The OpenAPI document of every route, generated on first use (as `/openapi.json` serves it). */
  openapi(): Promise<OpenAPIObject>;
  /** Starts the listeners and workers; resolves with the addresses actually bound. */
  start(options?: StartOptions): Promise<{ url?: string; metricsUrl?: string }>;
  /** Stops listeners and workers, and closes what the gateway opened itself. */
  stop(): Promise<void>;
}

/**
 * Builds the OpenAPI document without a running gateway (the freshness check, `passerelle openapi`), with
 * `baseUrl` as its server (a serving gateway passes its `PUBLIC_BASE_URL`; default, its documented default). Its
 * generator (trpc-to-openapi, zod-openapi) is loaded here, on first use: a serving process that is never
 * asked for `/openapi.json` or `/docs` does not load it, nor keep the document (~13 MB of RSS together).
 */
export async function generateOpenApi(baseUrl?: string, providers: readonly PaymentProvider[] = DEFAULT_PROVIDERS): Promise<OpenAPIObject> {
  const { buildOpenApiDocument } = await import("./http/openapi.ts");
  const router = providers === DEFAULT_PROVIDERS ? appRouter : createAppRouter(providers);
  return buildOpenApiDocument(router, plainRoutePathsFor(providers), packageJson.version, baseUrl);
}

/**
 * Builds a gateway: opens the database (PostgreSQL when `DATABASE_URL` is set, PGlite otherwise) and runs
 * its migrations, chooses the job driver (BullMQ when `REDIS_URL` is set, in-process otherwise), and wires
 * the HTTP application. Nothing listens until {@link Gateway.start}.
 */
export async function createGateway(config: Config, parts: GatewayParts = {}): Promise<Gateway> {
  const logger = parts.logger ?? createLogger(config);
  const ownsDatabase = !parts.database;
  const database =
    parts.database ??
    (await openDatabase(
      config.databaseUrl
        ? { driver: "postgres", url: config.databaseUrl, ...config.database, onAvailabilityChange: logOutage(logger, "database") }
        : {
            driver: "pglite",
            dataDir: join(config.dataDir, "pglite"),
            // A new data directory starts from the migrated snapshot: ~0.6 s and ~230 MB instead of initdb's ~2.6 s and ~670 MB.
            snapshot: async () => {
              const { loadOrBuildPgliteSnapshot, SNAPSHOT_CACHE_DIR } = await import("./db/pglite-snapshot.ts");
              return loadOrBuildPgliteSnapshot(SNAPSHOT_CACHE_DIR);
            },
          },
    ));
  const ownsQueue = !parts.queue;
  try {
    await migrateToLatest(database.db);
  } catch (error) {
    if (ownsDatabase) await database.close();
    throw error;
  }
  // Every Redis client of the process reports to one tracker: an outage is logged once when it starts and once when it ends.
  const redisOutage = createRedisOutageTracker(logOutage(logger, "redis"));
  const timers = parts.timers;
  const queue = parts.queue ?? createJobQueue({ redisUrl: config.redisUrl, prefix: config.queuePrefix, logger, redisOutage, ...(timers ? { timers } : {}) });
  // The rate limiter's own Redis client: one retry per command, so a Redis outage fails open quickly
  // instead of holding requests (BullMQ's connections retry forever, which is right for workers only).
  const redis = config.redisUrl ? createRedisClient(config.redisUrl, { maxRetriesPerRequest: 1 }) : undefined;
  redis?.on("error", (error: Error) => redisOutage.connectionError(error) || logger.warn({ reason: error.message }, "rate-limit Redis error"));
  redis?.on("ready", () => redisOutage.ready());
  const rateLimiter = createRateLimiter({ redis, prefix: `${config.queuePrefix}:rate-limit`, logger, timers: timers ?? REAL_TIMERS });

  const metrics = createMetrics();
  // The fault campaign's clock jumps (`TEST_CLOCK_OFFSET_FILE`); the machine's clock otherwise.
  const offsetClock = !parts.now && config.testClockOffsetFile ? createOffsetClock(config.testClockOffsetFile) : undefined;
  // The routes and the document are the default providers' unless the gateway runs others (their credentials, their inbound routes).
  const providers = parts.providers ?? DEFAULT_PROVIDERS;
  const router = providers === DEFAULT_PROVIDERS ? appRouter : createAppRouter(providers);
  const deps: Deps = {
    config,
    db: database.db,
    queue,
    logger,
    tokens: createTokenVerifier(config.jwt),
    keyring: await createKeyring(config.encryptionKeys),
    tenants: createTenantFinder({ db: database.db }),
    apiKeyStatus: createApiKeyStatus({ db: database.db }),
    rateLimiter,
    providers: createProviderRegistry(providers),
    syncHold: createFirstSyncHold(timers),
    now: parts.now ?? (timers ? () => new Date(timers.now()) : (offsetClock?.now ?? (() => new Date()))),
    timers: timers ?? REAL_TIMERS,
    // On the machine's clock (or the campaign's offset clock) the times shared across processes are the database's;
    // a test's injected clock (virtual time, a fixed now) stands for it, as every process of the test shares it.
    ...(parts.now || timers ? {} : { sharedClock: "database" as const }),
    metrics,
    caches: createGatewayCaches(),
    gateway: gatewayForProviders(() => deps),
  };
  const recordAudit = registerAuditGauges(metrics.registry);
  const recordPrune = registerPrunedRowsCounter(metrics.registry);
  const workers = registerWorkers(deps, {
    sweepEveryMs: deps.config.sweepEveryMs,
    renewalSweepEveryMs: deps.config.renewalSweepEveryMs,
    onAudit: recordAudit,
    onPrune: recordPrune,
    ...parts.workers,
  });
  registerStuckPaymentsGauge(metrics.registry, deps);
  registerPaymentsByStateGauge(metrics.registry, deps);
  registerQueueGauges(metrics.registry, queue, logger);
  let document: Promise<OpenAPIObject> | undefined;
  const openapi = (): Promise<OpenAPIObject> =>
    (document ??= generateOpenApi(config.publicBaseUrl, providers).catch((error: unknown) => {
      document = undefined; // a later request tries again
      throw error;
    }));
  // Loaded only when they are mounted (development): production never loads the simulators' code.
  const simulators = config.simulators ? await import("./providers/simulators.ts") : undefined;
  const http = createHttpApp({
    deps,
    router,
    openapi,
    metrics,
    // A gateway on its own storage (a `serve` process) keeps their memory under DATA_DIR, so a restart finds it.
    simulators:
      simulators && ownsDatabase
        ? simulators.simulatorsKeepingState(join(config.dataDir, "simulators"), {
            busy: (path) => logger.warn({ path }, "another process keeps this simulator's state file: this one's simulator runs in memory"),
            writeFailed: (path, error) => logger.warn({ path, reason: error.message }, "could not write a simulator's state file"),
          })
        : simulators,
    readiness: { database: () => database.ping(), queue: () => queue.ping() },
  });
  // Simulators mounted: the service's provider A account (configured, or derived from JWT_SECRET) is made known to them (contract §10).
  if (simulators) {
    const { createSimulatorServiceAccounts } = await import("./providers/providerA/simulator/service-accounts.ts");
    await createSimulatorServiceAccounts(config, http.fetch, logger);
  }

  let server: ReturnType<typeof Bun.serve> | undefined;
  let metricsServer: ReturnType<typeof Bun.serve> | undefined;

  return {
    fetch: http.fetch,
    router,
    deps,
    openapi,
    async start(options = {}) {
      const addresses: { url?: string; metricsUrl?: string } = {};
      if (options.http ?? true) {
        server = Bun.serve({ port: config.port, hostname: config.host, ...listenerOptions(http.serve, logger, config.trustedProxies) });
        metricsServer = Bun.serve({ port: config.metrics.port, hostname: config.metrics.host, fetch: metricsFetch(metrics) });
        addresses.url = server.url.toString().replace(/\/$/, "");
        addresses.metricsUrl = metricsServer.url.toString().replace(/\/$/, "");
      }
      if (options.workers ?? true) {
        await workers.start();
        await queue.start();
        // A worker alone (`passerelle worker`) serves its metrics too: its jobs, deliveries and provider calls are
        // counted there. Two processes on one host need two METRICS_PORTs; a worker whose port is taken says so and runs on.
        if (!metricsServer) {
          try {
            metricsServer = Bun.serve({ port: config.metrics.port, hostname: config.metrics.host, fetch: metricsFetch(metrics) });
            addresses.metricsUrl = metricsServer.url.toString().replace(/\/$/, "");
          } catch (error) {
            logger.warn({ err: error, port: config.metrics.port }, "this worker serves no metrics: METRICS_PORT is in use (give each process its own)");
          }
        }
      }
      return addresses;
    },
    async stop() {
      await server?.stop();
      http.close();
      await metricsServer?.stop(true);
      // First sync runs held in memory (direct payments of the last seconds) go to the queue, keeping their time.
      await releaseHeldFirstSyncs(deps);
      workers.stop();
      if (ownsQueue) await queue.close();
      await rateLimiter.close();
      if (redis) await redis.quit().catch(() => redis.disconnect());
      if (ownsDatabase) await database.close();
      offsetClock?.stop();
      logger.flush?.();
    },
  };
}
