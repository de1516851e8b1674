/**
 * Reads the tenant behind a request. Every authenticated tenant-scoped call needs it (is it disabled?), so
 * answers are kept for a second per process — never longer: a disabled tenant is refused within
 * {@link TENANT_CACHE_MS} on every instance.
 */
import type { Kysely } from "kysely";
import { ExpiringMap } from "../expiring-map.ts";
import type { Database } from "../../db/schema.ts";
import type { RateLimit } from "../rate-limit/token-bucket.ts";

export const TENANT_CACHE_MS = 1_000;

export interface TenantSummary {
  id: string;
  name: string;
  disabled: boolean;
  liveEnabled: boolean;
  rateLimit: RateLimit | null;
}

export interface TenantFinder {
  /** The tenant with this id, or null when there is none. */
  find(id: string): Promise<TenantSummary | null>;
  /** The cached answer (null: no such tenant), or undefined when there is none (then call `find`). */
  cached?(id: string): TenantSummary | null | undefined;
  /** Forgets a tenant at once (after this process changed it). */
  forget(id: string): void;
}

/**
 * A finder over the database with a short per-process cache. Concurrent misses of one tenant share one
 * query (when an entry expires under load, every request in flight would otherwise read the row).
 */
export function createTenantFinder(deps: { db: Kysely<Database> }): TenantFinder {
  const cache = new ExpiringMap<string, { tenant: TenantSummary | null }>(10_000, TENANT_CACHE_MS);
  const inFlight = new Map<string, Promise<TenantSummary | null>>();

  async function read(id: string): Promise<TenantSummary | null> {
    const row = await deps.db.selectFrom("tenants").select(["id", "name", "disabled", "live_enabled", "rate_limit"]).where("id", "=", id).executeTakeFirst();
    return row
      ? {
          id: row.id,
          name: row.name,
          disabled: row.disabled,
          liveEnabled: row.live_enabled,
          rateLimit: (row.rate_limit as TenantSummary["rateLimit"]) ?? null,
        }
      : null;
  }

  return {
    async find(id) {
      const hit = cache.get(id);
      if (hit) return hit.tenant;
      const running = inFlight.get(id);
      if (running) return running;
      const reading: Promise<TenantSummary | null> = read(id).then((tenant) => {
        // A `forget` while the query ran means the row may have changed under it: answer, but do not keep it.
        if (inFlight.get(id) === reading) cache.set(id, { tenant });
        return tenant;
      });
      inFlight.set(id, reading);
      try {
        return await reading;
      } finally {
        if (inFlight.get(id) === reading) inFlight.delete(id);
      }
    },
    cached(id) {
      return cache.get(id)?.tenant;
    },
    forget(id) {
      cache.delete(id);
      inFlight.delete(id);
    },
  };
}
