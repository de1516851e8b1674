/**
 * A bounded map whose entries expire a fixed time after they were set: the per-process caches that every
 * hot read consults (a tenant, an API key's status, a final transaction). A hit is one `Map` lookup and
 * one clock read; lru-cache's recency bookkeeping cost ~0.3 µs a hit, three times per read. When the map
 * is full, the entry set longest ago goes first: with entries that live a second, recency would seldom
 * pick another. Time is `performance.now()` (monotonic), as lru-cache's `ttlResolution: 0` read it.
 *
 * @module
 */

interface Entry<V> {
  value: V;
  expiresAt: number;
}

/**
 * At most `max` entries, each answered for `ttlMs` after it was set.
 *
 * @example
 * ```ts
 * const tenants = new ExpiringMap<string, TenantSummary>(10_000, 1_000);
 * tenants.set("ten_1", tenant);
 * tenants.get("ten_1"); // the tenant, for a second
 * ```
 */
export class ExpiringMap<K, V> {
  readonly #entries = new Map<K, Entry<V>>();
  readonly #max: number;
  readonly #ttlMs: number;

  constructor(max: number, ttlMs: number) {
    if (!Number.isInteger(max) || max < 1) throw new RangeError(`invalid max ${max}`);
    if (!(ttlMs > 0)) throw new RangeError(`invalid ttlMs ${ttlMs}`);
    this.#max = max;
    this.#ttlMs = ttlMs;
  }

  /** The value, when it was set less than `ttlMs` ago. */
  get(key: K): V | undefined {
    const entry = this.#entries.get(key);
    if (entry === undefined) return undefined;
    if (performance.now() < entry.expiresAt) return entry.value;
    this.#entries.delete(key);
    return undefined;
  }

  /** Sets the value for `ttlMs` from now (dropping the oldest entry when the map is full). */
  set(key: K, value: V): void {
    const entries = this.#entries;
    if (!entries.delete(key) && entries.size >= this.#max) entries.delete(entries.keys().next().value as K);
    entries.set(key, { value, expiresAt: performance.now() + this.#ttlMs });
  }

  delete(key: K): boolean {
    return this.#entries.delete(key);
  }

  /** Entries held, expired ones not yet dropped included. */
  get size(): number {
    return this.#entries.size;
  }
}
