/**
 * Is the API key behind a token still usable? Tokens minted from a key carry its `key_id`; a revoked
 * key's tokens must stop working within 5 seconds (contract §2), so each answer is kept at most
 * {@link KEY_STATUS_CACHE_MS} per process — one small query per key per 2 seconds, not per request.
 */
import { LRUCache } from "lru-cache";
import type { Deps } from "../deps.ts";

export const KEY_STATUS_CACHE_MS = 2_000;

export interface ApiKeyStatus {
  /** True when the key exists and is not revoked. */
  isActive(keyId: string): Promise<boolean>;
  forget(keyId: string): void;
}

/** The key-status check over the database, with its short cache. */
export function createApiKeyStatus(deps: Pick<Deps, "db">): ApiKeyStatus {
  const cache = new LRUCache<string, { active: boolean }>({ max: 50_000, ttl: KEY_STATUS_CACHE_MS });
  return {
    async isActive(keyId) {
      const hit = cache.get(keyId);
      if (hit) return hit.active;
      const row = await deps.db.selectFrom("api_keys").select("revoked_at").where("id", "=", keyId).executeTakeFirst();
      const active = row !== undefined && row.revoked_at === null;
      cache.set(keyId, { active });
      return active;
    },
    forget(keyId) {
      cache.delete(keyId);
    },
  };
}
