/**
 * A payment link as the API shows it: the request schema of `POST /payment-links`, the views (a list's item,
 * and the detail with its QR code, its share texts and its payments), and the mapping from a row. One schema
 * per payload, reused by the router, the types and the OpenAPI document.
 *
 * @module
 */
import { z } from "zod";
import type { PaymentLink } from "../../db/schema.ts";
import { DOCUMENTED_MAX_AMOUNT } from "../amounts.ts";
import { CURRENCIES, paymentSchema } from "../payments/payment-view.ts";
import { countryField, customerUrlField } from "../request-fields.ts";

const timestamp = z.string().meta({ format: "date-time" });
const wholeAmount = (description: string) => z.number().int().min(1).meta({ description, example: 2500, maximum: DOCUMENTED_MAX_AMOUNT });
const operatorField = z.string().regex(/^[a-z][a-z0-9-]{1,31}$/, { error: "must be a lower-case operator name, like mtn" });

/** The body of `POST /payment-links`. */
export const paymentLinkRequest = z
  .object({
    amount: z
      .union([
        wholeAmount("A fixed amount, in whole units"),
        z
          .object({ min: wholeAmount("The least the customer may pay"), max: wholeAmount("The most the customer may pay") })
          .meta({ description: "Bounds the customer chooses the amount between" }),
      ])
      .meta({ description: "A fixed amount (2500), or { min, max } for the customer to choose", example: 2500 }),
    currency: z.enum(CURRENCIES).optional().meta({ description: "Optional: GNF for a link taking only Guinea, XOF otherwise" }),
    description: z.string().trim().min(1).max(255).meta({ description: "What is paid, shown on the pay page and in the share texts", example: "Commande 42" }),
    reusable: z
      .boolean()
      .default(false)
      .meta({ description: "false (default): the first payment that succeeds uses the link up; true: it takes payments until deactivated or expired" }),
    expiresAt: z.iso
      .datetime({ offset: true })
      .optional()
      .meta({ description: "When the link stops taking payments (RFC 3339); none: never", example: "2026-12-31T23:59:59Z" }),
    wallets: z
      .array(operatorField)
      .min(1)
      .max(20)
      .optional()
      .meta({ description: "The operators it takes (mtn, orange, wave…); none: every one the tenant can take", example: ["mtn", "moov"] }),
    countries: z
      .array(countryField)
      .min(1)
      .max(8)
      .optional()
      .meta({ description: "The customers' countries it takes; none: every one of its currency", example: ["bj"] }),
    metadata: z
      .record(z.string().max(64), z.union([z.string().max(500), z.number(), z.boolean()]))
      .refine((value) => Object.keys(value).length <= 20, { message: "must have at most 20 keys" })
      .optional()
      .meta({ description: "Up to 20 keys of your own, copied to each of its payments' customData" }),
    merchantReference: z
      .string()
      .trim()
      .min(1)
      .max(255)
      .optional()
      .meta({ description: "Your own reference, copied to each of its payments", example: "order-1042" }),
    returnUrl: customerUrlField("Where the pay page sends the customer once paid (or refused)", "https://shop.example/merci").optional(),
  })
  .meta({ id: "PaymentLinkRequest" });

export type PaymentLinkRequest = z.infer<typeof paymentLinkRequest>;

export const PAYMENT_LINK_STATUSES = ["active", "expired", "deactivated", "used"] as const;
export type PaymentLinkStatus = (typeof PAYMENT_LINK_STATUSES)[number];

const shareTexts = z.object({ fr: z.string(), en: z.string() });

export const paymentLinkSchema = z
  .object({
    id: z.string().meta({ description: "The link's public id", example: "pl_01KBB4W5Z0M3Q9XC" }),
    url: z.string().meta({ description: "The pay page a customer opens", example: "https://pay.example/pay/pl_01KBB4W5Z0M3Q9XC" }),
    status: z.enum(PAYMENT_LINK_STATUSES).meta({ description: "active; expired (past expiresAt); deactivated (PATCH); used (single-use, paid)" }),
    amount: z.number().int().nullable().meta({ description: "The fixed amount, or null when the customer chooses between amountMin and amountMax" }),
    amountMin: z.number().int().nullable(),
    amountMax: z.number().int().nullable(),
    currency: z.enum(CURRENCIES),
    description: z.string(),
    reusable: z.boolean(),
    expiresAt: timestamp.nullable(),
    wallets: z.array(z.string()).nullable().meta({ description: "The operators it takes; null: every one the tenant can take" }),
    countries: z.array(z.string()).nullable().meta({ description: "The countries it takes; null: every one of its currency" }),
    metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).nullable(),
    merchantReference: z.string().nullable(),
    returnUrl: z.string().nullable(),
    paidCount: z.number().int().meta({ description: "Its payments that succeeded" }),
    lastPaidAt: timestamp.nullable(),
    environment: z.enum(["sandbox", "live"]),
    createdAt: timestamp,
    updatedAt: timestamp,
    deactivatedAt: timestamp.nullable(),
  })
  .meta({ id: "PaymentLink" });

export type PaymentLinkView = z.infer<typeof paymentLinkSchema>;

export const paymentLinkDetailSchema = paymentLinkSchema
  .extend({
    qr: z
      .object({
        svg: z.string().meta({ description: "The QR code of the URL, an SVG document" }),
        png: z.string().meta({ description: "The same as a PNG, a data: URL (base64)" }),
      })
      .meta({ description: "The link's URL as a QR code, to print or show" }),
    share: z
      .object({
        sms: shareTexts.meta({ description: "A text message to send, in French and English, with the URL" }),
        whatsapp: z.object({
          fr: z.object({ text: z.string(), url: z.string().meta({ description: "wa.me share URL: WhatsApp opens with the text ready to send" }) }),
          en: z.object({ text: z.string(), url: z.string() }),
        }),
      })
      .meta({ description: "Ready-to-send texts" }),
    payments: z.array(paymentSchema).meta({ description: "Its payments, newest first (the latest 100)" }),
  })
  .meta({ id: "PaymentLinkDetail" });

export type PaymentLinkDetailView = z.infer<typeof paymentLinkDetailSchema>;

/** The link's state now: deactivated, used up, expired, or active. */
export function linkStatus(row: PaymentLink, now: Date): PaymentLinkStatus {
  if (!row.active) return "deactivated";
  if (!row.reusable && row.paid_count > 0) return "used";
  if (row.expires_at !== null && row.expires_at.getTime() <= now.getTime()) return "expired";
  return "active";
}

/** The pay page of a link. */
export function linkUrl(publicBaseUrl: string, id: string): string {
  return `${publicBaseUrl}/pay/${id}`;
}

/** A `payment_links` row as the API shows it. */
export function toPaymentLinkView(row: PaymentLink, context: { publicBaseUrl: string; now: Date }): PaymentLinkView {
  return {
    id: row.id,
    url: linkUrl(context.publicBaseUrl, row.id),
    status: linkStatus(row, context.now),
    amount: row.amount === null ? null : Number(row.amount),
    amountMin: row.amount_min === null ? null : Number(row.amount_min),
    amountMax: row.amount_max === null ? null : Number(row.amount_max),
    currency: row.currency,
    description: row.description,
    reusable: row.reusable,
    expiresAt: row.expires_at?.toISOString() ?? null,
    wallets: row.wallets,
    countries: row.countries,
    metadata: row.metadata,
    merchantReference: row.merchant_reference,
    returnUrl: row.return_url,
    paidCount: row.paid_count,
    lastPaidAt: row.last_paid_at?.toISOString() ?? null,
    environment: row.environment,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    deactivatedAt: row.deactivated_at?.toISOString() ?? null,
  };
}
