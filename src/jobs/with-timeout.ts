/**
 * Bounding a promise in time, for calls that would otherwise wait for Redis forever.
 *
 * @module
 */

/** The `code` of the error {@link withTimeout} rejects with. */
export const REDIS_TIMEOUT = "REDIS_TIMEOUT";

/**
 * Settles like `promise`, or rejects with `<what>: no answer from Redis within <ms> ms` (code `REDIS_TIMEOUT`) once `ms`
 * have passed. The promise itself is not cancelled; its late rejection is swallowed.
 *
 * @example
 * ```ts
 * await withTimeout(queue.add(name, data), 3000, "add to webhooks");
 * ```
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  promise.catch(() => {});
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`${what}: no answer from Redis within ${ms} ms`), { code: REDIS_TIMEOUT })), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
