/**
 * What every service function receives: the dependencies built once by `createGateway`, passed explicitly
 * (no module singletons, no global clock) so a test can build them on PGlite with a few lines.
 */
import type { Kysely } from "kysely";
import type { Logger } from "pino";
import type { Config } from "../config.ts";
import type { Keyring } from "../crypto/seal.ts";
import type { Database } from "../db/schema.ts";
import type { JobQueue } from "../jobs/queue.ts";
import type { Timers } from "../timers.ts";
import type { ServiceMetrics } from "./metrics.ts";
import type { TokenVerifier } from "./auth/tokens.ts";
import type { TenantFinder } from "./tenants/find-tenant.ts";
import type { ApiKeyStatus } from "./api-keys/key-status.ts";
import type { RateLimiter } from "./rate-limit/mod.ts";
import type { GatewayServices, ProviderRegistry } from "../providers/provider.ts";
import type { GatewayCaches } from "./caches.ts";
import type { FirstSyncHold } from "./direct-payments/first-sync-hold.ts";

export interface Deps {
  config: Config;
  db: Kysely<Database>;
  queue: JobQueue;
  logger: Logger;
  tokens: TokenVerifier;
  /** Seals and opens secrets at rest. */
  keyring: Keyring;
  tenants: TenantFinder;
  apiKeyStatus: ApiKeyStatus;
  /** Per tenant and environment; shared through Redis when it is configured. */
  rateLimiter: RateLimiter;
  /** The payment providers this gateway runs with (`providers/registry.ts`), reached through the port. */
  providers: ProviderRegistry;
  /** New direct payments' first sync steps, held in this gateway until due (`direct-payments/first-sync.ts`). */
  syncHold: FirstSyncHold;
  /** The clock; tests pass their own. */
  now: () => Date;
  /**
   * What this process waits on by itself (`timers.ts`): the idempotency lock's renewal beat and the retries
   * of an answer the database was away for, the routes' circuit breakers' pause, and (as the providers'
   * `ProviderContext.timers`) provider A's waits before retrying a refused connection. The process's (`REAL_TIMERS`),
   * or a test's virtual time (`createGateway`'s `parts.timers`), which the test advances instead of waiting.
   */
  timers: Timers;
  /**
   * `"database"`: the times that order or lease work across processes (deliveries' due times and leases,
   * idempotency locks) are the database's `now()`, not {@link Deps.now} (`db/shared-clock.ts`); set by
   * `createGateway` unless it runs on a test's injected clock.
   */
  sharedClock?: "database";
  /**
   * Everything this gateway keeps in memory between calls (`services/caches.ts`): final reads, refreshes in
   * flight, opened credentials and signing secrets, verified IPN signers, URL checks and DNS answers. Built
   * by `createGateway`; a test building deps by hand passes `createGatewayCaches()` (or spreads a gateway's).
   */
  caches: GatewayCaches;
  /**
   * What the gateway does for its providers (`gateway-for-providers.ts`): a provider's calls receive these
   * deps as their narrow `ProviderContext`, and reach the gateway only through this.
   */
  gateway: GatewayServices;
  /** Counters and histograms the services feed (`http/metrics.ts`); absent in deps a test builds itself. */
  metrics?: ServiceMetrics;
}
