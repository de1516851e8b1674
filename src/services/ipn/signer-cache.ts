/**
 * The accounts whose IPN hashes were verified, by the hash's digest (`deps.caches.ipnSigners`, the IPN fast
 * path of `receive-ipn.ts`). Its own module, so that `caches.ts` builds it without importing that code.
 *
 * @module
 */
import { LRUCache } from "lru-cache";

const SIGNER_CACHE_MAX = 10_000;

/** The verified signers by hash digest: `deps.caches.ipnSigners`. */
export type IpnSignerCache = LRUCache<string, string[]>;

/** A gateway's cache of verified signers, empty (built by `createGatewayCaches`). */
export function createIpnSignerCache(): IpnSignerCache {
  return new LRUCache({ max: SIGNER_CACHE_MAX });
}
