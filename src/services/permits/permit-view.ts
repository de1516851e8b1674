/**
 * A permit and a permit charge as the API shows them: one zod schema each (response validation, types and
 * the OpenAPI document) and the mapping from their rows. Events about them carry {@link permitEventData}.
 */
import { z } from "zod";
import type { JsonValue, Permit, PermitChargeRow, PermitChargeStatus, PermitStatus } from "../../db/schema.ts";

export const PERMIT_STATUS_VALUES = ["pending", "active", "declined", "revoked", "expired"] as const satisfies readonly PermitStatus[];
export const CHARGE_STATUS_VALUES = ["pending", "succeeded", "failed"] as const satisfies readonly PermitChargeStatus[];

const timestamp = z.string().meta({ format: "date-time" });
const customDataSchema = z.record(z.string(), z.union([z.string(), z.number(), z.boolean()]));

export const permitSchema = z
  .object({
    permitId: z.string().meta({ description: "Our permit id (prm_…)", example: "prm_01JD3Z6Q5W8B8Y4G1M7T2N9XKC" }),
    status: z.enum(PERMIT_STATUS_VALUES).meta({ description: "pending → active → revoked | expired; pending → declined" }),
    token: z.string().meta({ description: "Provider B's permit token" }),
    authorizationUrl: z.string().meta({ description: "The page where the customer authorises the permit" }),
    customer: z.object({ name: z.string().optional(), email: z.string().optional(), phone: z.string().optional() }),
    description: z.string(),
    maxAmount: z.number().int().meta({ description: "The largest amount one charge may take" }),
    currency: z.enum(["XOF", "GNF"]),
    customData: customDataSchema.nullable(),
    returnUrl: z.string(),
    cancelUrl: z.string(),
    paymentMethod: z.string().nullable().meta({ description: "The channel provider B reports once authorised" }),
    environment: z.enum(["sandbox", "live"]),
    createdAt: timestamp,
    updatedAt: timestamp,
    activatedAt: timestamp.nullable(),
    endedAt: timestamp.nullable().meta({ description: "When it became declined, revoked or expired" }),
  })
  .meta({ id: "Permit" });
export type PermitView = z.infer<typeof permitSchema>;

export const chargeSchema = z
  .object({
    chargeId: z.string().meta({ description: "Our charge id (chg_…)", example: "chg_01JD3Z6Q5W8B8Y4G1M7T2N9XKC" }),
    permitId: z.string(),
    paymentId: z.string().meta({ description: "The charge's payment (kind permit_charge), as GET /payments shows it" }),
    status: z.enum(CHARGE_STATUS_VALUES).meta({ description: "pending until provider B settles it; never charged twice" }),
    amount: z.number().int(),
    currency: z.enum(["XOF", "GNF"]),
    description: z.string(),
    customData: customDataSchema.nullable(),
    invoiceToken: z.string().nullable().meta({ description: "Provider B's invoice of the charge; null until provider B answered" }),
    failReason: z.string().nullable(),
    scheduleId: z.string().nullable().meta({ description: "The renewal schedule that made it; null for a charge made by API" }),
    period: z.string().nullable().meta({ description: "A renewal's due day in its schedule's time zone, YYYY-MM-DD" }),
    attempt: z.number().int().meta({ description: "A renewal's dunning attempt (0 at the due date)" }),
    createdAt: timestamp,
    updatedAt: timestamp,
    settledAt: timestamp.nullable(),
  })
  .meta({ id: "PermitCharge" });
export type ChargeView = z.infer<typeof chargeSchema>;

export function permitView(row: Permit): PermitView {
  return {
    permitId: row.id,
    status: row.status,
    token: row.token,
    authorizationUrl: row.authorization_url,
    customer: {
      ...(row.customer.name ? { name: row.customer.name } : {}),
      ...(row.customer.email ? { email: row.customer.email } : {}),
      ...(row.customer.phone ? { phone: row.customer.phone } : {}),
    },
    description: row.description,
    maxAmount: Number(row.max_amount),
    currency: row.currency,
    customData: row.custom_data,
    returnUrl: row.return_url,
    cancelUrl: row.cancel_url,
    paymentMethod: row.payment_method,
    environment: row.environment,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    activatedAt: row.activated_at?.toISOString() ?? null,
    endedAt: row.ended_at?.toISOString() ?? null,
  };
}

/** The API view of a charge (`GET …/charges`), for a permit in `currency`. */
export function chargeView(row: PermitChargeRow, currency: Permit["currency"] = "XOF"): ChargeView {
  return {
    chargeId: row.id,
    permitId: row.permit_id,
    paymentId: row.payment_id,
    status: row.status,
    amount: Number(row.amount),
    currency,
    description: row.description,
    customData: row.custom_data,
    invoiceToken: row.invoice_token,
    failReason: row.fail_reason,
    scheduleId: row.schedule_id,
    period: row.period,
    attempt: row.attempt,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    settledAt: row.settled_at?.toISOString() ?? null,
  };
}

/**
 * The `data` of every permit event (contract §5): `permitId`, `chargeId`, `paymentId`, `amount`, `currency`,
 * `status`, `failReason` and the permit's `customData` (with its original types); null where an event is
 * about the permit alone. A charge event adds the charge's own description, customData and renewal fields.
 */
export function permitEventData(permit: Permit, charge?: PermitChargeRow): Record<string, JsonValue> {
  const base: Record<string, JsonValue> = {
    permitId: permit.id,
    chargeId: charge?.id ?? null,
    paymentId: charge?.payment_id ?? null,
    amount: charge ? Number(charge.amount) : null,
    currency: permit.currency,
    status: charge ? charge.status : permit.status,
    failReason: charge?.fail_reason ?? null,
    customData: (permit.custom_data ?? {}) as Record<string, JsonValue>,
    permitStatus: permit.status,
    maxAmount: Number(permit.max_amount),
    customer: permit.customer as Record<string, JsonValue>,
  };
  if (!charge) return base;
  return {
    ...base,
    description: charge.description,
    invoiceToken: charge.invoice_token,
    chargeCustomData: (charge.custom_data ?? {}) as Record<string, JsonValue>,
    scheduleId: charge.schedule_id,
    period: charge.period,
    attempt: charge.attempt,
  };
}
