/**
 * What a rescue URL (`/pay/rs_…`) reaches: one rescue, its payment and the link it was paid through (if any) —
 * and nothing else of the tenant. The body of a try.
 *
 * @module
 */
import { z } from "zod";
import type { Payment, PaymentLink, PaymentRescue } from "../../db/schema.ts";
import { NotFoundError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { countriesOf } from "../payment-links/pay.ts";
import { countryField, phoneNumberField } from "../request-fields.ts";
import { isRescueId } from "./offer.ts";

/** The body of a try: the wallet and number (and the code, for a wallet whose flow is otp); the amount is the payment's. */
export const rescueTryRequest = z.object({
  operator: z
    .string()
    .regex(/^[a-z][a-z0-9-]{1,31}$/, { error: "must be a lower-case operator name, like mtn" })
    .meta({ description: "The wallet's operator", example: "moov" }),
  phone: z.object({ number: phoneNumberField, country: countryField }),
  otp: z
    .string()
    .regex(/^[0-9]{4,8}$/, { error: "must be the 4 to 8 digits the customer got from the operator" })
    .optional(),
});

export type RescueTryRequest = z.infer<typeof rescueTryRequest>;

/** The rescue, its payment and its link; 404 for an id that names none. */
export async function rescueById(
  deps: Pick<Deps, "db">,
  rescueId: string,
): Promise<{ rescue: PaymentRescue; payment: Payment; link: PaymentLink | undefined }> {
  const rescue = isRescueId(rescueId) ? await deps.db.selectFrom("payment_rescues").selectAll().where("id", "=", rescueId).executeTakeFirst() : undefined;
  if (!rescue) throw new NotFoundError("Payment link not found");
  const payment = await deps.db
    .selectFrom("payments")
    .selectAll()
    .where("id", "=", rescue.payment_id)
    .where("tenant_id", "=", rescue.tenant_id)
    .executeTakeFirstOrThrow();
  const link =
    payment.payment_link_id === null
      ? undefined
      : await deps.db
          .selectFrom("payment_links")
          .selectAll()
          .where("id", "=", payment.payment_link_id)
          .where("tenant_id", "=", rescue.tenant_id)
          .executeTakeFirst();
  return { rescue, payment, link };
}

/** The countries a try may be made from: its link's, or every one of the payment's currency. */
export function rescueCountries(deps: Pick<Deps, "providers">, payment: Payment, link: PaymentLink | undefined): string[] {
  return countriesOf(deps, link ?? { countries: null, currency: payment.currency });
}
