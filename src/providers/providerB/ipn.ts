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
  // PHP bracket keys; `allowPrototypes: false` keeps `__proto__` keys out, depth and counts are bounded.
  const form = qs.parse(body, { depth: 6, parameterLimit: 500, arrayLimit: 50, allowPrototypes: false, plainObjects: true });
  return dataOf(form);
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
