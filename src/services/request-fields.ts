/**
 * Request fields several endpoints share, written once: a phone in international format and its country, a
 * customer's names and email, and an absolute http(s) URL the customer is sent to. Each endpoint's schema
 * (`*-request.ts`) is built from these, so the rule and its message are the same everywhere.
 *
 * @module
 */
import { z } from "zod";

/** A phone number in international format (`+` and 8–15 digits). */
export const phoneNumberField = z
  .string()
  .regex(/^\+\d{8,15}$/, { error: "must be in international format, like +22997000000" })
  .meta({ example: "+22997000000" });

/** A lower-case ISO 3166-1 alpha-2 country code. */
export const countryField = z
  .string()
  .regex(/^[a-z]{2}$/, { error: "must be a lower-case two-letter country code, like bj" })
  .meta({ example: "bj" });

/** A customer's optional names and email, as a direct payment takes them. */
export const customerNameFields = {
  firstname: z.string().max(255).optional().meta({ example: "Awa" }),
  lastname: z.string().max(255).optional().meta({ example: "Diallo" }),
  email: z.email().max(255).optional().meta({ example: "awa.diallo@example.com" }),
};

/** An absolute http(s) URL the customer is sent to, described by `description`. */
export function customerUrlField(description: string, example: string) {
  return z
    .string()
    .max(2048)
    .refine((value) => URL.canParse(value) && /^https?:$/.test(new URL(value).protocol), { message: `must be an absolute http(s) URL` })
    .meta({ description, example });
}
