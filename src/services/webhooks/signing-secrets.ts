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
 * The cache is the gateway's (`deps.caches.signingSecrets`, built with it and its keyring), bounded to
 * {@link OPENED_SECRETS_MAX} entries (oldest dropped first); entries live as long as the gateway (a key
 * removed from `ENCRYPTION_KEYS` takes a restart, as it does for the keyring). What it saves: one AES-GCM
 * open (Web Crypto, a round trip to Bun's crypto thread) per secret per attempt.
 */
import type { Keyring, SealContext } from "../../crypto/seal.ts";
import type { Deps } from "../deps.ts";

/** Opened secrets kept per gateway: a few per endpoint, for the busiest endpoints. */
export const OPENED_SECRETS_MAX = 2000;

/** Opened values by tenant, field and sealed value (insertion order: the oldest is dropped first). */
export type OpenedSecrets = Map<string, Promise<string>>;

/**
 * The plaintexts of `sealed`, in order. Rejects with the keyring's `SealError` when one cannot be opened
 * (nothing is cached then).
 *
 * @example
 * ```ts
 * const secrets = await openSigningSecrets(deps, row.endpoint_secrets, { tenantId, field: ENDPOINT_SECRET_FIELD });
 * // ["whsec_…", "whsec_…"]
 * ```
 */
export function openSigningSecrets(deps: Pick<Deps, "keyring" | "caches">, sealed: readonly string[], context: SealContext): Promise<string[]> {
  return Promise.all(sealed.map((value) => openOne(deps.keyring, deps.caches.signingSecrets, value, context)));
}

function openOne(keyring: Keyring, cache: OpenedSecrets, sealed: string, context: SealContext): Promise<string> {
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
