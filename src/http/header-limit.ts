/**
 * The request head limit: a request line and header fields over 16 KiB together are 431
 * `headers_too_large` in the contract's shape. Bun's HTTP parser has a limit of its own (16 KiB by default),
 * past which it answers a bare 431 with no body before any JavaScript runs; the gateway's listener raises
 * that one ({@link PARSER_MAX_HEADER_BYTES}, `listener.ts`), so every head between the two limits reaches
 * the gateway's `fetch`, which answers it with this check.
 *
 * @module
 */

/** The gateway's limit on a request's head: the request line and every header field, as sent. */
export const MAX_HEADER_BYTES = 16 * 1024;

/**
 * Bun's parser limit in a serving gateway: heads up to this size reach JavaScript (and get the contract's
 * 431); a larger one is still refused by Bun itself, with its bare 431. Four times ours: a parser buffer a
 * client can make the server hold stays bounded (a body is held to 64 KiB too).
 */
export const PARSER_MAX_HEADER_BYTES = 64 * 1024;

/**
 * The size of a request's head as HTTP/1.1 sent it: `METHOD target HTTP/1.1\r\n`, then `name: value\r\n`
 * per field (the target is the URL without its origin, which Bun builds from the `Host` field).
 *
 * @example
 * ```ts
 * headBytes(new Request("http://localhost/a", { headers: { "x-a": "b" } })) > MAX_HEADER_BYTES; // false
 * ```
 */
export function headBytes(request: Request): number {
  const url = request.url;
  const target = url.length - Math.max(0, url.indexOf("/", url.indexOf("://") + 3));
  let bytes = request.method.length + target + 12;
  // forEach, not the iterator: no [name, value] pair per field (half the cost on every request).
  request.headers.forEach((value, name) => {
    bytes += name.length + value.length + 4;
  });
  return bytes;
}
