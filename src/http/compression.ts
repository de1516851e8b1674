/**
 * Response compression by `Accept-Encoding` (RFC 9110 §12.5.3): brotli or gzip, whichever the client
 * weighs higher (brotli on a tie), never a coding it refused with `q=0`. Only bodies of at least
 * {@link COMPRESSION_THRESHOLD_BYTES} are compressed: the hot small answers (a status read, whoami) cost
 * one length check and carry no `Vary`. A response that could have been compressed carries
 * `Vary: Accept-Encoding`, compressed or not, so a shared cache keeps the encodings apart.
 *
 * Dynamic bodies (the REST surface's JSON above the threshold: lists, reports) are compressed per
 * response at a fast setting (gzip level 6 with Bun's `Bun.gzipSync`, brotli quality 4); static bodies are
 * compressed once, at their best setting, by `static-body.ts`.
 *
 * @module
 */
import { brotliCompressSync, constants } from "node:zlib";

/** Bodies below this many bytes are sent as they are. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/** The content codings the gateway sends. */
export type ContentCoding = "br" | "gzip";

/** Brotli's quality for bodies compressed per response: near gzip's speed, smaller output. */
const DYNAMIC_BROTLI_QUALITY = 4;

/**
 * The coding to send for a request's `Accept-Encoding`, or undefined for the body as it is (no header,
 * nothing acceptable, `identity` only). `*` stands for any coding not named; `x-gzip` is gzip.
 *
 * @example
 * ```ts
 * preferredCoding("gzip, deflate, br"); // "br"
 * preferredCoding("br;q=0.5, gzip"); // "gzip"
 * preferredCoding("*;q=0, identity"); // undefined
 * ```
 */
export function preferredCoding(acceptEncoding: string | null): ContentCoding | undefined {
  if (!acceptEncoding) return undefined;
  let br: number | undefined;
  let gzip: number | undefined;
  let any: number | undefined;
  for (const item of acceptEncoding.split(",")) {
    const [rawName = "", ...parameters] = item.split(";");
    const name = rawName.trim().toLowerCase();
    let q = 1;
    for (const parameter of parameters) {
      const [key, value] = parameter.split("=");
      if (key?.trim().toLowerCase() === "q") {
        const weight = Number(value?.trim());
        q = Number.isFinite(weight) && weight >= 0 && weight <= 1 ? weight : 0;
      }
    }
    if (name === "br") br = q;
    else if (name === "gzip" || name === "x-gzip") gzip = q;
    else if (name === "*") any = q;
  }
  const brWeight = br ?? any ?? 0;
  const gzipWeight = gzip ?? any ?? 0;
  if (brWeight <= 0 && gzipWeight <= 0) return undefined;
  return brWeight >= gzipWeight ? "br" : "gzip";
}

/** The body in one coding, at the per-response setting. */
export function compressDynamic(body: string, coding: ContentCoding): Uint8Array<ArrayBuffer> {
  if (coding === "gzip") return Bun.gzipSync(body, { level: 6 }) as Uint8Array<ArrayBuffer>;
  const compressed = brotliCompressSync(body, {
    params: { [constants.BROTLI_PARAM_QUALITY]: DYNAMIC_BROTLI_QUALITY, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
  });
  return new Uint8Array(compressed.buffer as ArrayBuffer, compressed.byteOffset, compressed.byteLength);
}

/** Adds `Accept-Encoding` to a headers record's `vary`, keeping what is there. */
export function varyOnEncoding(headers: Record<string, string>): void {
  const vary = headers.vary;
  headers.vary = vary ? `${vary}, Accept-Encoding` : "Accept-Encoding";
}

/**
 * A body for `request`, compressed when it is at least {@link COMPRESSION_THRESHOLD_BYTES} and the client
 * accepts a coding; sets `content-encoding` and `vary` in `headers` accordingly.
 *
 * @example
 * ```ts
 * const headers: Record<string, string> = { "content-type": "application/json" };
 * const body = negotiatedBody(request, JSON.stringify(list), headers);
 * return new Response(body, { headers });
 * ```
 */
export function negotiatedBody(request: Request, text: string, headers: Record<string, string>): string | Uint8Array<ArrayBuffer> {
  // A string's length is at most its UTF-8 size: a shorter one is under the threshold in bytes too, when it is ASCII.
  if (text.length < COMPRESSION_THRESHOLD_BYTES && Buffer.byteLength(text) < COMPRESSION_THRESHOLD_BYTES) return text;
  varyOnEncoding(headers);
  const coding = preferredCoding(request.headers.get("accept-encoding"));
  if (!coding) return text;
  headers["content-encoding"] = coding;
  return compressDynamic(text, coding);
}
