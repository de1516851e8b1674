/**
 * The body of `POST /providerB/checkout`: the one schema the router validates with (and documents as
 * `CheckoutRequest`) and the service's input type is inferred from.
 *
 * @module
 */
import { z } from "zod";
import { DOCUMENTED_MAX_AMOUNT } from "../amounts.ts";
import { customerUrlField } from "../request-fields.ts";

const httpUrl = (description: string) => customerUrlField(description, "https://merchant.example/orders/1042");

export const checkoutRequest = z
  .object({
    amount: z.number().int().min(1).meta({
      description: "Amount to collect, in whole FCFA; at most MAX_AMOUNT (the maximum shown is its default)",
      example: 5000,
      maximum: DOCUMENTED_MAX_AMOUNT,
    }),
    description: z.string().trim().min(1).max(255).meta({ description: "Label of the invoice", example: "Order 1042" }),
    returnUrl: httpUrl("The customer is sent here after payment"),
    cancelUrl: httpUrl("The customer is sent here on cancel"),
    customer: z.object({
      name: z.string().trim().min(1).max(255).meta({ example: "Awa Diallo" }),
      email: z.email().max(255).optional().meta({ example: "awa.diallo@example.com" }),
      phone: z
        .string()
        .regex(/^\+\d{8,15}$/, { message: "must be in international format, like +221770000000" })
        .optional()
        .meta({ example: "+221770000000" }),
    }),
    merchantReference: z.string().trim().min(1).max(255).optional().meta({
      description: "Your own reference of the payment (your order number): shown back, searchable with GET /payments?merchantReference=",
      example: "order-1042",
    }),
    customData: z
      .record(z.string().min(1).max(100), z.union([z.string().max(1000), z.number(), z.boolean()]))
      .refine((value) => Object.keys(value).length <= 50, { message: "must have at most 50 keys" })
      .optional()
      .meta({ description: "Flat key/value pairs of your choice (at most 50), sent back in every event with their types", example: { orderId: "1042" } }),
    channels: z
      .array(z.string().min(1).max(100))
      .max(30)
      .optional()
      .meta({ description: "Provider B channel slugs to offer", example: ["orange-money-senegal"] }),
  })
  .meta({ id: "CheckoutRequest" });

/** A checkout request as validated (trimmed). */
export type CheckoutInput = z.output<typeof checkoutRequest>;
