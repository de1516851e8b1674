/**
 * The request body limit of contract §1, written once: a body over 64 KiB is 413 `payload_too_large`,
 * whether its `Content-Length` says so (refused before a byte is read) or it turns out larger when read
 * (a chunked upload, or a `Content-Length` that lied). Every route that reads a body reads it here: the
 * REST bridge, `/trpc` and the raw-body provider routes.
 *
 * @example
 * ```ts
 * const bytes = await readRawBody(request); // throws PayloadTooLargeError past MAX_BODY_BYTES
 * ```
 */
import { PayloadTooLargeError } from "../errors.ts";

/** Contract §1: bodies over 64 KiB are 413. */
export const MAX_BODY_BYTES = 64 * 1024;

/**
 * The request's body as bytes, at most {@link MAX_BODY_BYTES} of them; else throws {@link PayloadTooLargeError}.
 * A body of unknown length (chunked) is read no further than the limit: the serving listener lets any size
 * through to here (`listener.ts`), so nothing else bounds what would be held in memory.
 */
export async function readRawBody(request: Request): Promise<Uint8Array<ArrayBuffer>> {
  const declared = request.headers.get("content-length");
  // An unreadable Content-Length is NaN, which is not over the limit: the bytes read decide.
  if (Number(declared) > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
  if (declared === null && request.body) return readCapped(request.body);
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.byteLength > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
  return bytes;
}

/** Reads a stream up to the limit; past it, stops reading (the rest is never held) and throws. */
async function readCapped(body: ReadableStream<Uint8Array>): Promise<Uint8Array<ArrayBuffer>> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let length = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    length += value.byteLength;
    if (length > MAX_BODY_BYTES) {
      await reader.cancel().catch(() => {});
      throw new PayloadTooLargeError(MAX_BODY_BYTES);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** The request's body decoded as UTF-8 (malformed sequences become U+FFFD), under the same limit. */
export async function readTextBody(request: Request): Promise<string> {
  return new TextDecoder().decode(await readRawBody(request));
}
