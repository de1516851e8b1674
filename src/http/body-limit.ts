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

/** The request's body as bytes, at most {@link MAX_BODY_BYTES} of them; else throws {@link PayloadTooLargeError}. */
export async function readRawBody(request: Request): Promise<Uint8Array<ArrayBuffer>> {
  // A missing or unreadable Content-Length is NaN, which is not over the limit: the bytes read decide.
  if (Number(request.headers.get("content-length")) > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
  const bytes = new Uint8Array(await request.arrayBuffer());
  if (bytes.byteLength > MAX_BODY_BYTES) throw new PayloadTooLargeError(MAX_BODY_BYTES);
  return bytes;
}

/** The request's body decoded as UTF-8 (malformed sequences become U+FFFD), under the same limit. */
export async function readTextBody(request: Request): Promise<string> {
  return new TextDecoder().decode(await readRawBody(request));
}
