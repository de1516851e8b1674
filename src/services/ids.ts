/**
 * Identifiers we mint: a prefix and a ULID (26 characters, Crockford base32, sortable by creation time).
 */
import { monotonicFactory } from "ulid";

// Monotonic within this process: ids minted in the same millisecond still sort in the order they were
// made, which "newest first" lists and keyset paging rely on.
const ulid = monotonicFactory();

export type IdPrefix =
  | "ten"
  | "key"
  | "pay"
  | "evt"
  | "whe"
  | "whs"
  | "dlv"
  | "prm"
  | "sch"
  | "chg"
  | "pcr"
  | "tsc"
  | "po"
  | "rf"
  | "per"
  | "inv"
  | "eml"
  | "ses"
  | "aud";

/** A new id with the given prefix, e.g. `ten_01J…`. */
export function newId(prefix: IdPrefix): string {
  return `${prefix}_${ulid()}`;
}

/** Does `value` look like an id of ours with this prefix? */
export function isId(prefix: IdPrefix, value: string): boolean {
  return value.length === prefix.length + 27 && value.startsWith(`${prefix}_`) && /^[0-9A-HJKMNP-TV-Z]{26}$/.test(value.slice(prefix.length + 1));
}
