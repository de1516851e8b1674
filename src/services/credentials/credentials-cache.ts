/**
 * A gateway's cache of opened credential sets (`deps.caches.credentials`), read and filled by
 * `provider-credentials.ts`. Its own module, of no service, so that `caches.ts` builds it without importing
 * the code that uses `Deps`.
 *
 * @module
 */
import { LRUCache } from "lru-cache";

export interface OpenedCredentials {
  /** The set's row id (a payment's `provider_account` when made on a tenant's own account). */
  id: string;
  version: number;
  /** Frozen: shared by every caller while cached. */
  fields: Readonly<Record<string, string>>;
}

/** Entries per process (tenant × provider × environment × version). */
const CREDENTIALS_CACHE_MAX = 5_000;

/** Opened sets by tenant, provider, environment and version ("active" for the active set): `deps.caches.credentials`. */
export type CredentialsCache = LRUCache<string, { opened: Promise<OpenedCredentials | null> }>;

/** A gateway's cache of opened sets, empty (built by `createGatewayCaches`). */
export function createCredentialsCache(): CredentialsCache {
  return new LRUCache({ max: CREDENTIALS_CACHE_MAX });
}
