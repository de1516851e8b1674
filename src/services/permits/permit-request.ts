/**
 * The body of `POST /providerB/permits`: the one schema the router validates with (and documents as
 * `PermitRequest`) and the service's input type is inferred from; and the custom data every permit body
 * takes (a charge's too).
 *
 * @module
 */
import { z } from "zod";
import { DOCUMENTED_MAX_AMOUNT } from "../amounts.ts";
import { customerUrlField } from "../request-fields.ts";

const httpUrl = (description: string) => customerUrlField(description, "https://merchant.example/subscriptions/77");

export const customData = z
  .record(z.string().min(1).max(100), z.union([z.string().max(1000), z.number(), z.boolean()]))
  .refine((value) => Object.keys(value).length <= 50, { message: "must have at most 50 keys" })
  .optional()
  .meta({ description: "Flat key/value pairs of your choice (at most 50), sent back in every event with their types", example: { subscriptionId: "77" } });

export const permitRequest = z
  .object({
    customer: z.object({
      name: z.string().trim().min(1).max(255).meta({ example: "Awa Diallo" }),
      email: z.email().max(255).optional().meta({ example: "awa.diallo@example.com" }),
      phone: z
        .string()
        .regex(/^\+\d{8,15}$/, { message: "must be in international format, like +221770000000" })
        .meta({ example: "+221770000000" }),
    }),
    description: z
      .string()
      .trim()
      .min(1)
      .max(255)
      .meta({ description: "What the customer authorises, shown on the authorisation page", example: "Monthly box" }),
    maxAmount: z.number().int().min(1).meta({
      description: "The largest amount one charge may take, in whole FCFA; at most MAX_AMOUNT (the maximum shown is its default)",
      example: 20000,
      maximum: DOCUMENTED_MAX_AMOUNT,
    }),
    returnUrl: httpUrl("The customer is sent here after authorising"),
    cancelUrl: httpUrl("The customer is sent here after declining"),
    customData,
  })
  .meta({ id: "PermitRequest" });

/** A permit request as validated (trimmed). */
export type CreatePermitInput = z.output<typeof permitRequest>;
