/**
 * What `POST /payments` decides its routes from, kept in each gateway process (issue 27, point 2): the
 * tenant's route lists and its account on each provider (a *routing snapshot*), and each wallet's success
 * rates over the window.
 *
 * **A snapshot is never used stale.** Every change to a tenant's route lists (`PUT /routing`) or provider
 * credentials (stored, deactivated) raises the tenant's counter in `routing_versions` in its own transaction
 * (`bumpRoutingVersion`, `routing-version.ts`). A snapshot holds the counter it was read at, and the payment's first statement
 * — the insert of the payment and its first attempt — inserts only while the counter still has that value
 * (`routed-collection.ts`). When it has moved, nothing was written: the process drops the snapshot, reads it
 * again and plans the payment again. So a change made through any process is obeyed by the next payment in
 * every process, and the check costs no round trip of its own (the insert is the payment's first statement
 * anyway). An answer no insert checks — `POST /payments/quote`, or a payment refused (400, 424) — reads the
 * counter first and uses the snapshot only if it still matches.
 *
 * Why the snapshot is right when the counter matches: its counter and route lists come from one statement
 * (one database snapshot), and its accounts are read after that statement (the process first forgets the
 * tenant's active credential sets it held, `forgetCredentials`), so everything in it is at least as new as
 * its counter; an unchanged counter at the insert means no change committed in between.
 *
 * A snapshot is also dropped after {@link ROUTING_SNAPSHOT_TTL_MS} (what the credential cache keeps an opened
 * version for: it bounds memory, not correctness), and at once in the process that made a change.
 *
 * **Success rates** (`window.ts`) are read at most once a second per process and wallet
 * ({@link ROUTE_STATS_CACHE_MS}), concurrent payments sharing one read: a rate a second old ranks routes as
 * well as a fresh one, and the circuit breakers (per process) react to failures at once.
 *
 * @module
 */
import { sql } from "kysely";
import type { Environment } from "../../db/schema.ts";
import { NotConfiguredError } from "../../errors.ts";
import type { PaymentProvider, ProviderAccountRef } from "../../providers/provider.ts";
import { forgetCredentials } from "../credentials/provider-credentials.ts";
import type { Deps } from "../deps.ts";
import { applyRule, type Route, servingRoutes } from "./routes.ts";
import { readRoutingVersion, routingSnapshotKey } from "./routing-version.ts";
import { ROUTE_STATS_CACHE_MS, type RoutingSnapshot } from "./routing-cache.ts";
import { type RouteStat, routeStats } from "./window.ts";

export { createRoutingCache, ROUTE_STATS_CACHE_MS, ROUTING_SNAPSHOT_TTL_MS, type RoutingCache, type RoutingSnapshot } from "./routing-cache.ts";

type Scope = { tenantId: string; environment: Environment };

/**
 * The tenant's routing snapshot. By default the cached one (a payment: its first statement checks the
 * counter), else one read now. `current`: a snapshot known to be current — the cached one if the tenant's
 * counter still has its value (one primary-key read), else one read now — for an answer no insert checks (a
 * quote, a refusal). `fresh`: one read now (a payment whose first statement found the counter moved).
 * Concurrent callers share one read.
 */
export async function routingSnapshot(
  deps: Pick<Deps, "db" | "caches" | "providers">,
  scope: Scope,
  options: { fresh?: boolean; current?: boolean } = {},
): Promise<RoutingSnapshot> {
  const cache = deps.caches.routing.snapshots;
  const key = routingSnapshotKey(scope);
  if (!options.fresh) {
    const hit = cache.get(key);
    if (hit && !options.current) return hit;
    if (hit) {
      const [cached, version] = await Promise.all([hit, readRoutingVersion(deps.db, scope.tenantId)]);
      if (cached.version === version) return cached;
    }
  }
  const read = readSnapshot(deps, scope);
  cache.set(key, read);
  // A failed read (the database down) is not remembered.
  read.catch(() => {
    if (cache.peek(key) === read) cache.delete(key);
  });
  return read;
}

async function readSnapshot(deps: Pick<Deps, "db" | "caches" | "providers">, scope: Scope): Promise<RoutingSnapshot> {
  const { rows } = await sql<{ version: string | number; rules: [string, string, string[]][] }>`
    select coalesce((select version from routing_versions where tenant_id = ${scope.tenantId}), 0) as version,
           coalesce((select jsonb_agg(jsonb_build_array(country, operator, providers)) from routing_rules
                     where tenant_id = ${scope.tenantId} and environment = ${scope.environment}), '[]'::jsonb) as rules`.execute(deps.db);
  const row = rows[0]!;
  // Credential sets this process opened before the counter was read may be older than it: read them again.
  for (const provider of deps.providers.all) forgetCredentials(deps, { tenantId: scope.tenantId, provider: provider.name, environment: scope.environment });
  return {
    version: Number(row.version),
    rules: new Map(row.rules.map(([country, operator, providers]) => [`${country}:${operator}`, providers])),
    accounts: new Map(),
  };
}

/** The tenant's route list for a wallet under the snapshot (as `routeList` reads it). */
export function snapshotRouteList(deps: Pick<Deps, "providers">, snapshot: RoutingSnapshot, operator: string, country: string): Route[] {
  return applyRule(servingRoutes(deps, operator, country), snapshot.rules.get(`${country}:${operator}`)).routes;
}

/** The tenant's account on `provider` under the snapshot, or the 424 it would answer; read once per snapshot. */
export function snapshotAccount(
  deps: Deps,
  scope: Scope,
  snapshot: RoutingSnapshot,
  provider: PaymentProvider,
): Promise<ProviderAccountRef | NotConfiguredError> {
  let account = snapshot.accounts.get(provider.name);
  if (!account) {
    const read = provider.accountFor(deps, scope.tenantId, scope.environment).catch((error: unknown) => {
      if (error instanceof NotConfiguredError) return error;
      if (snapshot.accounts.get(provider.name) === read) snapshot.accounts.delete(provider.name);
      throw error;
    });
    account = read;
    snapshot.accounts.set(provider.name, read);
  }
  return account;
}

/** A wallet's success rates over the window, read at most once per {@link ROUTE_STATS_CACHE_MS} by this process. */
export function windowStats(
  deps: Pick<Deps, "db" | "now" | "config" | "caches">,
  environment: Environment,
  wallet: { operator: string; country: string },
): Promise<RouteStat[]> {
  const cache = deps.caches.routing.stats;
  const key = `${environment}:${wallet.country}:${wallet.operator}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const read = routeStats(deps, environment, wallet).then((stats) => stats.routes);
  cache.set(key, read);
  read.catch(() => {
    if (cache.peek(key) === read) cache.delete(key);
  });
  return read;
}
