/**
 * Cursor paging (contract preamble): `?limit=` 1–100 (default 20) and `?cursor=` → `{ data, nextCursor }`,
 * newest first. Our ids are ULIDs, so "newest first" is "id descending" and the cursor is the last id
 * seen, base64url-encoded so callers treat it as opaque.
 */
import { z } from "zod";
import { ValidationError } from "../errors.ts";
import { isId, type IdPrefix } from "./ids.ts";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** The query fields every list takes. */
export const pageQuery = {
  limit: z
    .int({ error: (issue) => (issue.code === "invalid_type" ? "must be an integer number" : undefined) })
    .min(1)
    .max(MAX_PAGE_SIZE)
    .default(DEFAULT_PAGE_SIZE)
    .meta({ description: `Page size, 1–${MAX_PAGE_SIZE}` }),
  cursor: z.string().min(1).max(200).optional().meta({ description: "The nextCursor of the page before" }),
};

/** The response shape of every list. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), nextCursor: z.string().nullable() });
}

/** The cursor for a page whose last row has this id. */
export function encodeCursor(lastId: string): string {
  return Buffer.from(lastId).toString("base64url");
}

/** The id (of the list's kind, `prefix`) a cursor stands for; 400 when the list did not hand it out. */
export function decodeCursor(prefix: IdPrefix, cursor: string): string {
  const id = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("utf8") : "";
  if (!isId(prefix, id)) throw new ValidationError(["cursor must be a nextCursor returned by an earlier page"]);
  return id;
}

/** Splits `limit + 1` fetched rows into a page and its next cursor. */
export function toPage<T extends { id: string }>(rows: T[], limit: number): { rows: T[]; nextCursor: string | null } {
  if (rows.length <= limit) return { rows, nextCursor: null };
  const page = rows.slice(0, limit);
  return { rows: page, nextCursor: encodeCursor(page[page.length - 1]!.id) };
}
