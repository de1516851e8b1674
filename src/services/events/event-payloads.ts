/**
 * The `data` of each event type (contract §5–§6), as schemas: the OpenAPI document's `webhooks` section is
 * built from them (`http/openapi-webhooks.ts`), and the tests check every delivery they receive against it
 * (test/support/webhook-receiver.ts), so a payload that drifts from its schema fails a test.
 *
 * Who builds each: `directPaymentEventData` (direct payments), `apply-confirmation.ts` (checkouts),
 * `payment.refunded` in `apply-payout.ts`, `permitEventData` (permits and their charges; the past-due
 * schedule adds three fields), `moneyOutEventData` (payouts and refunds: their API views), `sendTestEvent`.
 *
 * @module
 */
import { z } from "zod";
import type { EventType } from "../../db/schema.ts";
import { CURRENCIES, paymentCustomerSchema } from "../payments/payment-view.ts";
import { payoutSchema, refundSchema } from "../payouts/payout-view.ts";

const jsonObject = z.record(z.string(), z.unknown());
const amount = z.number().int().meta({ description: "Whole units of the currency", example: 2500 });

/** `payment.completed`, `payment.failed`, `payment.cancelled`: the payment as it settled. */
const paymentEventData = z
  .object({
    paymentId: z.string().meta({ description: "Our payment id (pay_…)", example: "pay_01JD3Z6Q5W8B8Y4G1M7T2N9XKC" }),
    provider: z.string().meta({ example: "providerA" }),
    kind: z.enum(["direct_payment", "checkout", "permit_charge"]),
    providerTransactionId: z.string().nullable().meta({ description: "The provider's id: provider A's transaction id, provider B's invoice token" }),
    transactionId: z.number().int().nullable().optional().meta({ description: "A direct payment: provider A's integer transaction id, else null" }),
    reference: z.string().nullable(),
    status: z.string().meta({ description: "The provider's own word for the outcome (provider A: approved, declined…; provider B: completed, cancelled…)" }),
    amount,
    currency: z.enum(CURRENCIES),
    description: z.string().nullable(),
    customer: z.union([paymentCustomerSchema, jsonObject]).nullable(),
    customData: jsonObject.nullable().meta({ description: "The merchant's own data, as given at creation (a checkout's); null for a direct payment" }),
    paymentMethod: z.string().nullable(),
    receiptUrl: z.string().nullable().meta({ description: "Provider B: the receipt's URL, as confirmed" }),
    errorCode: z.string().nullable().optional().meta({ description: "A direct payment: the failure's code, else null" }),
    failReason: z.string().nullable().optional().meta({ description: "A failed checkout: provider B's error code" }),
  })
  .meta({ id: "PaymentEventData", description: "A payment that completed, failed or was cancelled" });

/** `payment.refunded`: the payment once refunded in full. */
const paymentRefundedEventData = z
  .object({
    paymentId: z.string(),
    provider: z.string(),
    kind: z.enum(["direct_payment", "checkout", "permit_charge"]),
    state: z.literal("refunded"),
    amount,
    amountRefunded: amount,
    currency: z.enum(CURRENCIES),
    description: z.string().nullable(),
    lastRefundId: z.string().meta({ description: "The refund that completed it (rf_…)" }),
  })
  .meta({ id: "PaymentRefundedEventData", description: "A payment refunded in full" });

/** Every permit event: the permit and, for a charge event, the charge. */
const permitEventData = z
  .object({
    permitId: z.string().meta({ example: "prm_01JD3Z6Q5W8B8Y4G1M7T2N9XKC" }),
    chargeId: z.string().nullable().meta({ description: "The charge the event is about; null for the permit itself" }),
    paymentId: z.string().nullable(),
    amount: amount.nullable(),
    currency: z.enum(CURRENCIES),
    status: z.string().meta({ description: "The charge's status for a charge event (pending, succeeded, failed; past_due for a schedule), else the permit's" }),
    failReason: z.string().nullable(),
    customData: jsonObject,
    permitStatus: z.enum(["pending", "active", "declined", "revoked", "expired"]),
    maxAmount: amount,
    customer: jsonObject,
    description: z.string().nullable().optional(),
    invoiceToken: z.string().nullable().optional(),
    chargeCustomData: jsonObject.optional(),
    scheduleId: z.string().nullable().optional(),
    period: z.string().nullable().optional(),
    attempt: z.number().int().nullable().optional(),
    chargeStatus: z.enum(["pending", "succeeded", "failed"]).optional().meta({ description: "permit.schedule.past_due: the period's last charge" }),
    attempts: z.number().int().optional().meta({ description: "permit.schedule.past_due: the charges tried for the period" }),
  })
  .meta({ id: "PermitEventData", description: "A permit, and for a charge event its charge" });

/** `payment_link.paid`: a payment through a link succeeded (the payment's own `payment.completed` comes with it). */
const paymentLinkPaidEventData = z
  .object({
    paymentLinkId: z.string().meta({ example: "pl_01KBB4W5Z0M3Q9XC" }),
    paymentId: z.string().meta({ example: "pay_01JD3Z6Q5W8B8Y4G1M7T2N9XKC" }),
    amount,
    currency: z.enum(CURRENCIES),
    operator: z.string().nullable().meta({ description: "The wallet it was paid from", example: "mtn" }),
    merchantReference: z.string().nullable().meta({ description: "The link's merchantReference" }),
    metadata: jsonObject.nullable().meta({ description: "The link's metadata" }),
    paidCount: z.number().int().meta({ description: "The link's payments that succeeded, this one included" }),
    linkStatus: z.enum(["active", "expired", "deactivated", "used"]).meta({ description: "The link's status after this payment: used for a single-use link" }),
  })
  .meta({ id: "PaymentLinkPaidEventData", description: "A payment through a payment link succeeded" });

/** `payment.rescue_available`: a direct payment's push stalled or failed for a reason the customer can fix (issue 31 point 3). */
const paymentRescueEventData = z
  .object({
    paymentId: z.string().meta({ example: "pay_01JD3Z6Q5W8B8Y4G1M7T2N9XKC" }),
    rescueUrl: z.string().meta({
      description: "The pay page for this payment, where the customer may try again or choose another wallet: send it to the customer",
      example: "https://pay.example/pay/rs_7KQ2M9X4T1B8C3D6F0G5H2J4KM",
    }),
    reason: z.string().meta({
      description: "no_answer (the push went unanswered for RESCUE_AFTER), or the failure the customer can fix (the provider's code)",
      example: "no_answer",
    }),
    attempt: z.number().int().meta({ description: "The payment's attempt that stalled or failed" }),
    provider: z.string(),
    operator: z.string().nullable().meta({ description: "The wallet that stalled or failed", example: "mtn" }),
    state: z.enum(["pending", "failed"]).meta({ description: "The payment's state: pending (its push may still be approved) or failed" }),
    amount,
    currency: z.enum(CURRENCIES),
    paymentLinkId: z.string().nullable(),
    merchantReference: z.string().nullable(),
    expiresAt: z.string().meta({ format: "date-time", description: "After it, the rescue URL takes no try" }),
  })
  .meta({ id: "PaymentRescueEventData", description: "A payment the customer may rescue: its push stalled or failed" });

const webhookTestData = z
  .object({ endpointId: z.string(), message: z.string().meta({ example: "A test event from Passerelle" }) })
  .meta({ id: "WebhookTestData" });

/** Each event type's `data`, and what it means (every `EventType` must have one: the record's type says so). */
export const EVENT_PAYLOADS: Record<EventType, { summary: string; data: z.ZodType }> = {
  "payment.completed": { summary: "A payment succeeded", data: paymentEventData },
  "payment.failed": { summary: "A payment failed (declined, expired, refused)", data: paymentEventData },
  "payment.cancelled": { summary: "A payment was cancelled", data: paymentEventData },
  "payment.refunded": { summary: "A payment was refunded in full", data: paymentRefundedEventData },
  "permit.activated": { summary: "The customer authorised a permit", data: permitEventData },
  "permit.declined": { summary: "The customer declined a permit", data: permitEventData },
  "permit.revoked": { summary: "A permit was revoked", data: permitEventData },
  "permit.charge.succeeded": { summary: "A charge on a permit succeeded", data: permitEventData },
  "permit.charge.failed": { summary: "A charge on a permit failed", data: permitEventData },
  "permit.schedule.past_due": { summary: "A renewal schedule's period is still unpaid after its retries", data: permitEventData },
  "payout.sent": { summary: "A payout reached the wallet", data: payoutSchema },
  "payout.failed": { summary: "A payout failed; its amount is back in the balance", data: payoutSchema },
  "refund.succeeded": { summary: "A refund was paid", data: refundSchema },
  "refund.failed": { summary: "A refund failed", data: refundSchema },
  "payment_link.paid": { summary: "A payment through a payment link succeeded", data: paymentLinkPaidEventData },
  "payment.rescue_available": {
    summary: "A payment's push stalled or failed for a reason the customer can fix: its rescue URL lets the customer try again or another wallet",
    data: paymentRescueEventData,
  },
  "webhook.test": { summary: "Sent by POST /webhooks/{webhook_id}/test, to that endpoint only", data: webhookTestData },
};

/** The envelope of one event type, with its `data`. */
export function eventEnvelopeSchema(type: EventType) {
  return z
    .object({
      id: z
        .string()
        .meta({ description: "The event's id (evt_…), also the `webhook-id` header: the same on every retry", example: "evt_01JD3Z6Q5W8B8Y4G1M7T2N9XKC" }),
      type: z.literal(type),
      createdAt: z.string().meta({ format: "date-time" }),
      tenantId: z.string(),
      environment: z.enum(["sandbox", "live"]),
      data: EVENT_PAYLOADS[type].data,
    })
    .meta({ description: `The \`${type}\` envelope` });
}
