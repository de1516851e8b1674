/**
 * Provider B's wire format (PayDunya-compatible, providers.md): what we send to create a checkout
 * invoice, and the answers and IPN bodies we read — one zod schema each. Only the fields we use are
 * declared; the provider adds others freely, so every object is loose.
 */
import { z } from "zod";

/** `response_code` of a successful answer. */
export const SUCCESS_CODE = "00";

/** The provider's `mode` for each of our environments. */
export const MODE_OF = { sandbox: "test", live: "live" } as const;

/** `POST /checkout-invoice/create` — items and taxes are objects keyed `item_N` / `tax_N`, never arrays. */
export interface CheckoutInvoiceCreateRequest {
  invoice: {
    total_amount: number;
    description: string;
    customer?: { name: string; email?: string; phone?: string };
    items: Record<string, { name: string; quantity: number; unit_price: number; total_price: number }>;
    channels?: string[];
  };
  store: { name: string };
  custom_data: Record<string, string | number | boolean>;
  /** A direct payment's invoice (SoftPay) has no page to come back to: only its `callback_url`. */
  actions: { cancel_url?: string; return_url?: string; callback_url: string };
}

/** Every answer carries these two, whatever its HTTP status (refusals are 4xx with the same body). */
export const providerAnswer = z.looseObject({
  response_code: z.union([z.string(), z.number()]).transform(String),
  response_text: z.unknown().optional(),
});

/** An answer that says `success` instead of `response_code` (the disburse API's `check-balance`). */
export const successFlag = z.looseObject({ success: z.boolean(), description: z.unknown().optional() });

export const checkoutInvoiceCreated = z.looseObject({
  response_code: z.literal(SUCCESS_CODE),
  response_text: z.string().min(1),
  token: z.string().min(1),
});
export type CheckoutInvoiceCreated = z.infer<typeof checkoutInvoiceCreated>;

/** A text the provider may leave out or send as null: null either way. */
export const nullableText = z
  .string()
  .nullish()
  .transform((value) => value ?? null);

/** The provider sends amounts back as strings ("5000") or numbers. */
export const wireAmount = z.union([
  z.number(),
  z
    .string()
    .trim()
    .regex(/^\d+(\.\d+)?$/)
    .transform(Number),
]);

/** Checkout statuses of provider B. */
export const CHECKOUT_STATUSES = ["pending", "completed", "cancelled", "failed"] as const;
export type CheckoutStatus = (typeof CHECKOUT_STATUSES)[number];

/** `GET /checkout-invoice/confirm/{token}` — also the shape of an IPN's `data`. */
export const checkoutConfirmation = z.looseObject({
  response_code: z.literal(SUCCESS_CODE),
  invoice: z.looseObject({ token: z.string().min(1), total_amount: wireAmount }),
  mode: z.enum(["test", "live"]),
  status: z.enum(CHECKOUT_STATUSES),
  fail_reason: nullableText,
  customer: z
    .looseObject({ name: nullableText, phone: nullableText, email: nullableText, payment_method: nullableText })
    .nullish()
    .transform((value) => value ?? null),
  receipt_url: nullableText,
  receipt_identifier: nullableText,
  provider_reference: nullableText,
  custom_data: z.unknown().optional(),
});
export type CheckoutConfirmation = z.infer<typeof checkoutConfirmation>;
