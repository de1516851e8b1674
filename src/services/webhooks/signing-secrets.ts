/**
 * Opening the signing secrets of a delivery, with a bounded cache of opened values.
 *
 * A sealed value (`v<N>:<base64(iv|ciphertext|tag)>`) never changes once written — a rotation writes a
 * new row with a fresh IV — so the plaintext of one (sealed value, tenant, field) is the same forever:
 * the cache cannot go stale. Which secrets sign is still decided by the database on every attempt (the
 * lease statement selects the unexpired ones), so a rotation or an expiry takes effect at once, on
 * every instance. The key of an entry is the whole sealed value with the tenant and the field that are
 * bound into it, so a ciphertext copied to another tenant or field is opened (and refused) afresh.
 *
 * Bounded to {@link OPENED_SECRETS_MAX} entries per keyring (oldest dropped first); entries live as long
 * as the process and its keyring (a key removed from `ENCRYPTION_KEYS` takes a restart, as it does for
 * the keyring). What it saves: one AES-GCM open (Web Crypto, a round trip to Bun's crypto thread) per
 * secret per attempt.
 */
import type { Keyring, SealContext } from "../../crypto/seal.ts";

/** Opened secrets kept per keyring: a few per endpoint, for the busiest endpoints. */
export const OPENED_SECRETS_MAX = 2000;

const caches = new WeakMap<Keyring, Map<string, Promise<string>>>();

/**
 * The plaintexts of `sealed`, in order. Rejects with the keyring's `SealError` when one cannot be opened
 * (nothing is cached then).
 *
 * @example
 * ```ts
 * const secrets = await openSigningSecrets(deps.keyring, row.endpoint_secrets, { tenantId, field: ENDPOINT_SECRET_FIELD });
 * // ["whsec_…", "whsec_…"]
 * ```
 */
export function openSigningSecrets(keyring: Keyring, sealed: readonly string[], context: SealContext): Promise<string[]> {
  let cache = caches.get(keyring);
  if (!cache) caches.set(keyring, (cache = new Map()));
  return Promise.all(sealed.map((value) => openOne(keyring, cache, value, context)));
}

function openOne(keyring: Keyring, cache: Map<string, Promise<string>>, sealed: string, context: SealContext): Promise<string> {
  const key = `${context.tenantId}\u0000${context.field}\u0000${sealed}`;
  const hit = cache.get(key);
  if (hit) return hit;
  const opened = keyring.open(sealed, context);
  if (cache.size >= OPENED_SECRETS_MAX) cache.delete(cache.keys().next().value!);
  cache.set(key, opened);
  opened.catch(() => {
    if (cache.get(key) === opened) cache.delete(key);
  });
  return opened;
}
