/**
 * What "the same body" means for an `Idempotency-Key` (contract §9): the SHA-256 of the request's
 * canonical JSON — object keys sorted at every depth, no whitespace — so key order and spacing do not
 * matter, and the REST surface (body plus path parameters) and `/trpc` (one input object) agree.
 */

/**
 * The canonical JSON text of a value: like `JSON.stringify`, with object keys sorted at every depth.
 * `undefined` members are left out, as `JSON.stringify` does; `undefined` itself reads as `{}` (a call
 * without input on `/trpc` is the empty body of a REST call).
 *
 * @example
 * ```ts
 * canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] }); // '{"a":[{"c":3,"d":2}],"b":1}'
 * ```
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(sortKeys(value ?? {}));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object" || value instanceof Date) return value;
  const sorted: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) sorted[key] = sortKeys((value as Record<string, unknown>)[key]);
  return sorted;
}

/**
 * The hex SHA-256 of the request's canonical JSON.
 *
 * @example
 * ```ts
 * (await requestHash({ a: 1, b: 2 })) === (await requestHash({ b: 2, a: 1 })); // true
 * ```
 */
export async function requestHash(request: unknown): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(canonicalJson(request)));
  return Buffer.from(digest).toString("hex");
}
