/**
 * A gateway's routing snapshots and success rates (`deps.caches.routing`), read and filled by
 * `route-cache.ts` and `window.ts`. Its own module, of types and one constructor, so that `caches.ts` builds
 * it without importing the code that uses `Deps`.
 *
 * @module
 */
import { LRUCache } from "lru-cache";
import type { NotConfiguredError } from "../../errors.ts";
import type { ProviderAccountRef } from "../../providers/provider.ts";

export interface RouteStat {
  provider: string;
  operator: string;
  country: string;
  succeeded: number;
  failed: number;
  /**
   * succeeded / (succeeded + failed), each minute of the window weighed by its age (`ROUTING_HALF_LIFE_MINUTES`:
   * a minute that old counts half as much as the current one); null without any.
   */
  successRate: number | null;
}

/** How long a snapshot may be kept (its correctness does not depend on it: the counter check does). */
export const ROUTING_SNAPSHOT_TTL_MS = 60_000;
/** How long a wallet's success rates are reused by a process. */
export const ROUTE_STATS_CACHE_MS = 1_000;
/** Snapshots kept per process (tenant × environment). */
const ROUTING_SNAPSHOT_MAX = 10_000;

/** One tenant's routing in one environment, as read at `version` of its counter. */
export interface RoutingSnapshot {
  version: number;
  /** The tenant's route lists, by `country:operator`. */
  rules: ReadonlyMap<string, readonly string[]>;
  /** The tenant's account on each provider (or why it has none), read on first need: by provider name. */
  accounts: Map<string, Promise<ProviderAccountRef | NotConfiguredError>>;
}

/** A gateway's routing snapshots and success rates (`deps.caches.routing`). */
export interface RoutingCache {
  snapshots: LRUCache<string, Promise<RoutingSnapshot>>;
  stats: LRUCache<string, Promise<RouteStat[]>>;
}

/** Empty, for `createGatewayCaches`. */
export function createRoutingCache(): RoutingCache {
  return {
    snapshots: new LRUCache({ max: ROUTING_SNAPSHOT_MAX, ttl: ROUTING_SNAPSHOT_TTL_MS }),
    stats: new LRUCache({ max: 1_000, ttl: ROUTE_STATS_CACHE_MS }),
  };
}
