/**
 * The body of `POST /providerA/direct-payment` (spec 2.1): the one schema the router validates with (and
 * documents as `DirectPaymentRequest`) and the service's input type is inferred from.
 *
 * @module
 */
import { z } from "zod";
import { DOCUMENTED_MAX_AMOUNT } from "../amounts.ts";
import { countryField, customerNameFields, phoneNumberField } from "../request-fields.ts";
import { DIRECT_PAYMENT_COUNTRIES, PAYMENT_METHODS } from "./payment-methods.ts";

export const directPaymentRequest = z
  .object({
    description: z.string().trim().min(1).max(255).meta({ description: "Free text label of the payment", example: "Order 1042" }),
    amount: z.number().int().min(1).meta({
      description: "Whole units: FCFA (XOF), or GNF for gn; at most MAX_AMOUNT (the maximum shown is its default)",
      example: 500,
      maximum: DOCUMENTED_MAX_AMOUNT,
    }),
    payment_method: z.enum(PAYMENT_METHODS).meta({ description: "The operator; it must serve the phone's country" }),
    phone_number: z.object({
      number: phoneNumberField,
      // Documented as the enum it is (create-direct-payment.ts refuses the others with the spec's enum message).
      country: countryField.meta({ enum: [...DIRECT_PAYMENT_COUNTRIES], example: "bj" }),
    }),
    ...customerNameFields,
    callback_url: z.string().max(2048).optional().meta({
      example: "https://merchant.example/passerelle/callback",
      description: "Where we send this payment's events (signed with the tenant's callback secret); never sent to provider A",
    }),
  })
  .meta({ id: "DirectPaymentRequest" });

/** Spec 2.1, as validated by {@link directPaymentRequest}. */
export type DirectPaymentInput = z.infer<typeof directPaymentRequest>;
