/**
 * A link's payment that succeeds: the link's count of payments raised and `payment_link.paid` recorded, in the
 * transaction that moves the payment (`payments/transition.ts` calls this), so a single-use link is used
 * from the same commit that makes its payment `succeeded`, and the event is never lost nor sent twice.
 *
 * @module
 */
import type { Kysely, Transaction } from "kysely";
import type { Database, Payment } from "../../db/schema.ts";
import { recordEvent } from "../events/record-event.ts";
import { linkStatus } from "./link-view.ts";

/** Whether moving `before` to `after` makes a link's payment succeed. */
export function paysLink(before: Payment, after: Payment): boolean {
  return after.payment_link_id !== null && after.state === "succeeded" && before.state !== "succeeded";
}

/** Raises the link's count and records `payment_link.paid` with `db` (the move's transaction); the event's deliveries to schedule after the commit. */
export async function recordLinkPaid(
  db: Transaction<Database> | Kysely<Database>,
  now: Date,
  payment: Payment,
): Promise<{ eventId: string; deliveryIds: string[] }> {
  const link = await db
    .updateTable("payment_links")
    .set((eb) => ({ paid_count: eb("paid_count", "+", 1), last_paid_at: now, updated_at: now }))
    .where("id", "=", payment.payment_link_id!)
    .returningAll()
    .executeTakeFirstOrThrow();
  return recordEvent(db, now, {
    tenantId: payment.tenant_id,
    environment: payment.environment,
    type: "payment_link.paid",
    paymentId: payment.id,
    data: {
      paymentLinkId: link.id,
      paymentId: payment.id,
      amount: Number(payment.amount),
      currency: payment.currency,
      operator: payment.operator,
      merchantReference: link.merchant_reference,
      metadata: link.metadata,
      paidCount: link.paid_count,
      linkStatus: linkStatus(link, now),
    },
  });
}
