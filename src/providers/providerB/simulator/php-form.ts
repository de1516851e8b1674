/**
 * The body encoding of provider B's IPN: its servers are PHP and post `http_build_query(["data" => …])`,
 * so nested values become bracket keys (`data[invoice][token]=…`).
 */

/**
 * Encodes a nested value as PHP's `http_build_query` does: objects and arrays as `key[sub]`, `null` left
 * out, booleans as `1` / `0`, brackets percent-encoded and spaces as `+` (RFC 1738).
 *
 * @example
 * encodePhpForm({ data: { invoice: { token: "test_abc" }, status: "completed" } });
 * // "data%5Binvoice%5D%5Btoken%5D=test_abc&data%5Bstatus%5D=completed"
 */
export function encodePhpForm(value: Record<string, unknown>): string {
  const params = new URLSearchParams();
  const add = (key: string, inner: unknown): void => {
    if (inner === null || inner === undefined) return;
    if (typeof inner === "object") {
      for (const [name, nested] of Object.entries(inner)) add(`${key}[${name}]`, nested);
      return;
    }
    params.append(key, typeof inner === "boolean" ? (inner ? "1" : "0") : String(inner));
  };
  for (const [key, inner] of Object.entries(value)) add(key, inner);
  return params.toString();
}
