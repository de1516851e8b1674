/**
 * Is the API key behind a token still usable? Tokens minted from a key carry its `key_id`; a revoked
 * key's tokens must stop working within 5 seconds (contract §2), so each answer is kept at most
 * {@link KEY_STATUS_CACHE_MS} per process — one small query per key per second, not per request.
 */
import type { Kysely } from "kysely";
import { LRUCache } from "lru-cache";
import { ExpiringMap } from "../expiring-map.ts";
import type { Environment } from "../../config.ts";
import type { Database } from "../../db/schema.ts";

export const KEY_STATUS_CACHE_MS = 1_000;

/** How long a process remembers which key a secret sent as a bearer is (see `bearer-keys.ts`). */
export const KEY_OF_SECRET_CACHE_MS = 10 * 60_000;

/** What never changes about a key: whose it is and where it acts. */
export interface KeyIdentity {
  id: string;
  tenantId: string;
  environment: Environment;
}

export interface ApiKeyStatus {
  /** True when the key exists and is not revoked. */
  isActive(keyId: string): Promise<boolean>;
  /** The cached answer, or undefined when there is none (then call `isActive`): no promise on the hot path. */
  cached?(keyId: string): boolean | undefined;
  forget(keyId: string): void;
  /** The key a secret was found to be, when this process looked it up recently (its status is `isActive`'s). */
  keyOfSecret(secret: string): KeyIdentity | undefined;
  rememberSecret(secret: string, key: KeyIdentity): void;
}

/**
 * The key-status check over the database, with its short cache. Concurrent misses of one key share one
 * query (when an entry expires under load, every request in flight would otherwise read the row); a
 * `forget` while that query runs drops its answer from the cache (it may predate the change).
 */
export function createApiKeyStatus(deps: { db: Kysely<Database> }): ApiKeyStatus {
  // Staleness is checked against the clock on each get (`expiring-map.ts`).
  const cache = new ExpiringMap<string, { active: boolean }>(50_000, KEY_STATUS_CACHE_MS);
  const inFlight = new Map<string, Promise<boolean>>();
  // Which key a secret is cannot change (keys are revoked, never edited): only the status above expires quickly.
  const keysOfSecrets = new LRUCache<string, KeyIdentity>({ max: 10_000, ttl: KEY_OF_SECRET_CACHE_MS });

  async function read(keyId: string): Promise<boolean> {
    const row = await deps.db.selectFrom("api_keys").select("revoked_at").where("id", "=", keyId).executeTakeFirst();
    return row !== undefined && row.revoked_at === null;
  }

  return {
    async isActive(keyId) {
      const hit = cache.get(keyId);
      if (hit) return hit.active;
      const running = inFlight.get(keyId);
      if (running) return running;
      const reading: Promise<boolean> = read(keyId).then((active) => {
        if (inFlight.get(keyId) === reading) cache.set(keyId, { active });
        return active;
      });
      inFlight.set(keyId, reading);
      try {
        return await reading;
      } finally {
        if (inFlight.get(keyId) === reading) inFlight.delete(keyId);
      }
    },
    cached(keyId) {
      return cache.get(keyId)?.active;
    },
    forget(keyId) {
      cache.delete(keyId);
      inFlight.delete(keyId);
    },
    keyOfSecret(secret) {
      return keysOfSecrets.get(secret);
    },
    rememberSecret(secret, key) {
      keysOfSecrets.set(secret, key);
    },
  };
}
