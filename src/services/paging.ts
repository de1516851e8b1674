/**
 * Cursor paging (contract preamble): `?limit=` 1–100 (default 20) and `?cursor=` → `{ data, nextCursor }`,
 * newest first. Our ids are ULIDs, so "newest first" is "id descending" and the cursor is the last id
 * seen, base64url-encoded so callers treat it as opaque.
 */
import { z } from "zod";
import { BadRequestError } from "../errors.ts";

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** The query fields every list takes. */
export const pageQuery = {
  limit: z.number().int().min(1).max(MAX_PAGE_SIZE).optional().meta({ description: `1–${MAX_PAGE_SIZE}, default ${DEFAULT_PAGE_SIZE}` }),
  cursor: z.string().min(1).max(200).optional().meta({ description: "nextCursor of the previous page" }),
};

/** The response shape of every list. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), nextCursor: z.string().nullable() });
}

/** The cursor for a page whose last row has this id. */
export function encodeCursor(lastId: string): string {
  return Buffer.from(lastId).toString("base64url");
}

/** The id a cursor stands for; 400 when it is not one of ours. */
export function decodeCursor(cursor: string): string {
  const id = Buffer.from(cursor, "base64url").toString("utf8");
  if (!/^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$/.test(id)) throw new BadRequestError("cursor is not a cursor this API returned");
  return id;
}

/** Splits `limit + 1` fetched rows into a page and its next cursor. */
export function toPage<T extends { id: string }>(rows: T[], limit: number): { rows: T[]; nextCursor: string | null } {
  if (rows.length <= limit) return { rows, nextCursor: null };
  const page = rows.slice(0, limit);
  return { rows: page, nextCursor: encodeCursor(page[page.length - 1]!.id) };
}
