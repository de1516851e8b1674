/**
 * Bodies that do not change for the life of the process — the dashboard's page and assets, the OpenAPI
 * document, the docs page and Scalar's bundle — compressed once, when they are prepared (brotli quality 9
 * and gzip level 9, on zlib's thread pool: the event loop keeps serving), and answered by `Accept-Encoding`
 * (`compression.ts`) with an `ETag` and `304 Not Modified` on a matching `If-None-Match` (RFC 9110 §13.1.2).
 *
 * Each coding of a body is its own representation, so each has its own strong tag (`"<hash>"`,
 * `"<hash>-br"`, `"<hash>-gzip"`); `If-None-Match` is compared weakly, as the RFC asks, and any coding's
 * tag of the same content matches — the client holds a copy it can decode.
 *
 * @module
 */
import { promisify } from "node:util";
import { brotliCompress, constants, gzip } from "node:zlib";
import { COMPRESSION_THRESHOLD_BYTES, type ContentCoding, preferredCoding } from "./compression.ts";

const brotliAsync = promisify(brotliCompress);
const gzipAsync = promisify(gzip);

/** A body prepared once: the bytes as they are, in each coding that makes them smaller, and its tag. */
export interface StaticBody {
  identity: Uint8Array<ArrayBuffer>;
  /** Only the codings that came out smaller than the body itself. */
  encoded: Partial<Record<ContentCoding, Uint8Array<ArrayBuffer>>>;
  /** The tag of the body as it is, quoted (`"q1w2e3…"`): the content's SHA-256, 22 base64url characters. */
  etag: string;
}

const asBytes = (body: string | Uint8Array): Uint8Array<ArrayBuffer> =>
  typeof body === "string"
    ? new TextEncoder().encode(body)
    : new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer);

/**
 * Hashes a body and, when it is at least {@link COMPRESSION_THRESHOLD_BYTES}, compresses it in both codings.
 *
 * @example
 * ```ts
 * const page = await prepareStaticBody("<!doctype html>…");
 * staticResponse(request, page, { "content-type": "text/html; charset=utf-8", "cache-control": "no-cache" });
 * ```
 */
export async function prepareStaticBody(body: string | Uint8Array): Promise<StaticBody> {
  const identity = asBytes(body);
  const hash = new Bun.CryptoHasher("sha256").update(identity).digest("base64url").slice(0, 22);
  const encoded: StaticBody["encoded"] = {};
  if (identity.byteLength >= COMPRESSION_THRESHOLD_BYTES) {
    const [br, gz] = await Promise.all([
      brotliAsync(identity, { params: { [constants.BROTLI_PARAM_QUALITY]: 9, [constants.BROTLI_PARAM_SIZE_HINT]: identity.byteLength } }),
      gzipAsync(identity, { level: 9 }),
    ]);
    if (br.byteLength < identity.byteLength) encoded.br = asBytes(br);
    if (gz.byteLength < identity.byteLength) encoded.gzip = asBytes(gz);
  }
  return { identity, encoded, etag: `"${hash}"` };
}

/** The entity tags listed in an `If-None-Match`, without `W/` and quotes' content unchanged. */
function matchesAny(ifNoneMatch: string, base: string): boolean {
  const wanted = base.slice(1, -1);
  for (const item of ifNoneMatch.split(",")) {
    const tag = item.trim().replace(/^W\//, "");
    if (tag === "*") return true;
    if (!tag.startsWith('"') || !tag.endsWith('"')) continue;
    const opaque = tag.slice(1, -1);
    if (opaque === wanted || opaque === `${wanted}-br` || opaque === `${wanted}-gzip`) return true;
  }
  return false;
}

/**
 * The answer for a prepared body: 304 when `If-None-Match` names it, else the body in the coding the client
 * prefers among those prepared. `headers` are sent on both (`content-type`, `cache-control`, security
 * headers…); `etag` and, for a body with codings, `vary: Accept-Encoding` are added.
 */
export function staticResponse(request: Request, body: StaticBody, headers: Record<string, string>): Response {
  const hasCodings = body.encoded.br !== undefined || body.encoded.gzip !== undefined;
  const coding = hasCodings ? preferredCoding(request.headers.get("accept-encoding")) : undefined;
  const bytes = coding ? body.encoded[coding] : undefined;
  const all: Record<string, string> = { ...headers, etag: bytes ? `"${body.etag.slice(1, -1)}-${coding}"` : body.etag };
  if (hasCodings) all.vary = headers.vary ? `${headers.vary}, Accept-Encoding` : "Accept-Encoding";
  const ifNoneMatch = request.headers.get("if-none-match");
  if (ifNoneMatch !== null && matchesAny(ifNoneMatch, body.etag)) {
    delete all["content-type"];
    return new Response(null, { status: 304, headers: all });
  }
  if (bytes) all["content-encoding"] = coding!;
  return new Response(bytes ?? body.identity, { status: 200, headers: all });
}
