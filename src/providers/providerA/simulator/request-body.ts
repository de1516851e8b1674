/**
 * Reading request bodies the way the provider does: JSON (an empty body counts as `{}`, since the token
 * call has none), checked against one zod schema, refused in the provider's error shape.
 */
import type { z } from "zod";
import { fieldErrors, ProviderAError } from "./wire.ts";

/** The request's JSON body; `{}` when empty; a 400 in the provider's shape when it is not JSON. */
export async function readJson(request: Request): Promise<unknown> {
  const text = await request.text();
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new ProviderAError(400, "The request body is not valid JSON");
  }
}

/** `body` checked against `schema`; a 422 `{ message, errors }` listing every bad field otherwise. */
export function parseWith<T extends z.ZodType>(schema: T, body: unknown, message: string): z.infer<T> {
  if (body === null || typeof body !== "object" || Array.isArray(body)) throw new ProviderAError(400, "The request body must be a JSON object");
  const parsed = schema.safeParse(body);
  if (!parsed.success) throw new ProviderAError(422, message, fieldErrors(parsed.error));
  return parsed.data;
}

/** Whether a browser form sent this request (the console's buttons), rather than an API client. */
export function isFormPost(request: Request): boolean {
  const type = request.headers.get("content-type") ?? "";
  return type.startsWith("application/x-www-form-urlencoded") || type.startsWith("multipart/form-data");
}
