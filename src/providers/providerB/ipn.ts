/**
 * Provider B's IPN on the wire: reading its body (three forms), finding its token, and checking its hash.
 *
 * Provider B's servers are PHP and post `http_build_query(["data" => …])`, so the body is form-encoded with
 * bracket keys (`data[invoice][token]=…`). Integrators also report `data=<json>` and plain JSON bodies;
 * all three are read into the same nested object. Authenticity: `data.hash` is the lower-case hex SHA-512
 * of the account's master key — a constant per account, so it only tells us which account the IPN claims
 * to come from; the status is always re-confirmed with the confirm call before anything changes.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import qs from "qs";

/** The content types the IPN route takes (contract §1: 415 otherwise). */
export const IPN_CONTENT_TYPES = ["application/x-www-form-urlencoded", "application/json"] as const;

/** An IPN's `data`, as nested plain values (form values are all strings). */
export type IpnData = Record<string, unknown>;

/** Why a body could not be read. */
export class IpnBodyError extends Error {
  override name = "IpnBodyError";
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function dataOf(envelope: unknown): IpnData {
  if (!isObject(envelope)) throw new IpnBodyError("The IPN body must be an object");
  const data = envelope.data;
  // `data=<json>`: the whole payload as one JSON field.
  if (typeof data === "string") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(data);
    } catch {
      throw new IpnBodyError("The IPN's data field is not JSON");
    }
    if (!isObject(parsed)) throw new IpnBodyError("The IPN's data field must be a JSON object");
    return parsed;
  }
  if (isObject(data)) return data;
  // A plain JSON body without the `data` envelope.
  return envelope;
}

/**
 * Reads an IPN body of either content type into its `data` object.
 *
 * @example
 * ```ts
 * parseIpnBody("application/x-www-form-urlencoded", "data%5Binvoice%5D%5Btoken%5D=test_abc&data%5Bhash%5D=…");
 * // { invoice: { token: "test_abc" }, hash: "…" }
 * parseIpnBody("application/x-www-form-urlencoded", `data=${encodeURIComponent(JSON.stringify(data))}`);
 * parseIpnBody("application/json", JSON.stringify({ data }));
 * ```
 */
export function parseIpnBody(contentType: "application/x-www-form-urlencoded" | "application/json", body: string): IpnData {
  if (contentType === "application/json") {
    let json: unknown;
    try {
      json = JSON.parse(body);
    } catch {
      throw new IpnBodyError("The IPN body is not valid JSON");
    }
    return dataOf(json);
  }
  return dataOf(parseBracketForm(body));
}

/**
 * How `qs` reads any form body: PHP bracket keys into null-prototype objects, `__proto__` keys dropped,
 * at most 500 fields, 6 bracket levels (deeper ones kept as one literal key) and arrays of 50.
 */
const QS_OPTIONS = { depth: 6, parameterLimit: 500, arrayLimit: 50, allowPrototypes: false, plainObjects: true } as const;

/**
 * Reads a bracket form exactly as `qs.parse(body, QS_OPTIONS)` does, in a fraction of its time for the
 * shape provider B posts — every field a distinct path of named keys, `data[invoice][token]=…` — and
 * through `qs` itself for anything else (a repeated field, `[]` or numeric keys that make arrays, a key
 * both a value and an object, `__proto__`, unbalanced or deeper brackets, more than 500 fields), so that
 * what a hostile or unusual body is read into does not change.
 */
export function parseBracketForm(body: string): Record<string, unknown> {
  return readPlainBracketForm(body) ?? (qs.parse(body, QS_OPTIONS) as Record<string, unknown>);
}

/** The body with `%5B` and `%5D` (either case) read as brackets, as `qs` reads them before it splits the fields. */
function bracketsDecoded(body: string): string {
  // PHP writes them upper-case; string replacement is several times faster than a case-insensitive RegExp here.
  if (body.indexOf("%5b") === -1 && body.indexOf("%5d") === -1) return body.replaceAll("%5B", "[").replaceAll("%5D", "]");
  return body.replace(/%5B/gi, "[").replace(/%5D/gi, "]");
}

/** `qs`'s decoding of a key or value: `+` is a space, and a malformed escape leaves the text as it is. */
function decodeFormText(text: string): string {
  if (text.indexOf("%") === -1) return text.indexOf("+") === -1 ? text : text.replace(/\+/g, " ");
  const spaced = text.replace(/\+/g, " ");
  try {
    return decodeURIComponent(spaced);
  } catch {
    return spaced;
  }
}

/** A bracket segment `qs` would make an array index of (`[0]`, `[12]`; not `[01]` or `[-1]`). */
function isArrayIndex(segment: string): boolean {
  const index = Number.parseInt(segment, 10);
  return !Number.isNaN(index) && index >= 0 && String(index) === segment;
}

/** The path of a key of named segments (`data[invoice][token]` → data, invoice, token); undefined for any other key. */
function plainPath(key: string): string[] | undefined {
  const open = key.indexOf("[");
  if (open === -1) return key === "__proto__" ? undefined : [key];
  if (open === 0 || !key.endsWith("]")) return undefined;
  const path = [key.slice(0, open)];
  let at = open;
  while (at < key.length) {
    // Here key[at] is "[": a segment runs to the next "]", and the next segment must start right after it.
    const close = key.indexOf("]", at + 1);
    const segment = key.slice(at + 1, close);
    if (segment === "" || segment.indexOf("[") !== -1 || segment === "__proto__" || isArrayIndex(segment)) return undefined;
    path.push(segment);
    at = close + 1;
    if (at < key.length && key.charCodeAt(at) !== 0x5b) return undefined;
  }
  if (path[0] === "__proto__" || path.length > QS_OPTIONS.depth + 1) return undefined;
  return path;
}

/**
 * The fast reading of {@link parseBracketForm} (exported for its tests): undefined as soon as the body is
 * not of the plain shape, for `qs` to read it. Splits
 * and decodes as `qs` does (`%5B` / `%5D` read as brackets before anything else; a field's value starts
 * after its first `]=`, else its first `=`; a field without `=` is an empty value; an empty key is skipped).
 */
export function readPlainBracketForm(body: string): Record<string, unknown> | undefined {
  const root: Record<string, unknown> = Object.create(null);
  if (body === "") return root;
  const text = body.indexOf("%") === -1 ? body : bracketsDecoded(body);
  const fields = text.split("&", QS_OPTIONS.parameterLimit + 1);
  if (fields.length > QS_OPTIONS.parameterLimit) return undefined;
  for (const field of fields) {
    const bracketEquals = field.indexOf("]=");
    const split = bracketEquals === -1 ? field.indexOf("=") : bracketEquals + 1;
    const key = decodeFormText(split === -1 ? field : field.slice(0, split));
    if (key === "") continue;
    const path = plainPath(key);
    if (!path) return undefined;
    let container = root;
    const last = path.length - 1;
    for (let level = 0; level < last; level++) {
      const name = path[level]!;
      const inner = container[name];
      if (inner === undefined) {
        const created: Record<string, unknown> = Object.create(null);
        container[name] = created;
        container = created;
      } else if (typeof inner === "object") container = inner as Record<string, unknown>;
      else return undefined; // a value here already: qs makes an array of the two
    }
    const name = path[last]!;
    if (container[name] !== undefined) return undefined; // repeated, or an object here already: qs makes an array
    container[name] = split === -1 ? "" : decodeFormText(field.slice(split + 1));
  }
  return root;
}

/** Which object an IPN is about: a checkout invoice or a permit, by its token; null for a tokenless probe. */
export function ipnSubject(data: IpnData): { kind: "checkout" | "permit"; token: string } | null {
  const invoice = data.invoice;
  if (isObject(invoice) && typeof invoice.token === "string" && invoice.token.trim() !== "") return { kind: "checkout", token: invoice.token.trim() };
  const permit = data.permit;
  if (isObject(permit) && typeof permit.token === "string" && permit.token.trim() !== "") return { kind: "permit", token: permit.token.trim() };
  return null;
}

/** The lower-case hex SHA-512 of a master key: what provider B sends as `data[hash]`. */
export function ipnHashOf(masterKey: string): string {
  return createHash("sha512").update(masterKey, "utf8").digest("hex");
}

/**
 * Does the IPN's hash match this master key? Compared in constant time; a missing or malformed hash is
 * false.
 *
 * @example
 * ```ts
 * if (!verifyIpnHash(data.hash, credentials.fields.masterKey)) throw new UnauthorizedError("…");
 * ```
 */
export function verifyIpnHash(hash: unknown, masterKey: string): boolean {
  if (typeof hash !== "string") return false;
  const expected = Buffer.from(ipnHashOf(masterKey), "utf8");
  const given = Buffer.from(hash.trim().toLowerCase(), "utf8");
  if (given.length !== expected.length) return false;
  return timingSafeEqual(given, expected);
}

/**
 * {@link verifyIpnHash} against an expected hash computed once (`ipnHashOf(masterKey)` as UTF-8 bytes):
 * the IPN path keeps it per credential version instead of hashing the master key for each IPN.
 */
export function verifyIpnHashWith(hash: unknown, expected: Buffer): boolean {
  if (typeof hash !== "string") return false;
  const given = Buffer.from(hash.trim().toLowerCase(), "utf8");
  if (given.length !== expected.length) return false;
  return timingSafeEqual(given, expected);
}

/**
 * A digest of the IPN's hash, kept with an orphan IPN instead of the hash itself, so that the orphan can
 * be checked against the master key of the checkout that appears later.
 */
export function hashDigest(hash: unknown): string | null {
  if (typeof hash !== "string" || hash.trim() === "") return null;
  return createHash("sha256").update(hash.trim().toLowerCase(), "utf8").digest("hex");
}

/** Does a stored digest match this master key (constant time)? */
export function verifyHashDigest(digest: string | null, masterKey: string): boolean {
  if (!digest) return false;
  const expected = Buffer.from(hashDigest(ipnHashOf(masterKey))!, "utf8");
  const given = Buffer.from(digest, "utf8");
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** The IPN's data without its hash: what we store. */
export function withoutHash(data: IpnData): IpnData {
  const { hash: _hash, ...rest } = data;
  return rest;
}
