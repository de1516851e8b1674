/**
 * A payment's offer of a rescue (issue 31 point 3): when a direct payment's push gets no answer within
 * `RESCUE_AFTER`, or fails for a reason the customer can fix, the payment offers a rescue — the event
 * `payment.rescue_available` with a rescue URL (`/pay/rs_…`), the same pay page, for that payment, where the
 * customer may try again or choose another wallet.
 *
 * - A failure offers it in the transaction that fails the payment (`payments/transition.ts` calls
 *   {@link recordRescueOffer}, as `apply-update.ts` decides), so the event is never lost nor doubled.
 * - A push left unanswered is found by the sweeper ({@link offerStalledRescues}): the database says which
 *   payments are stalled, so a restart, a lost job or a dead process changes nothing — it is found at the next
 *   sweep (every `SWEEP_EVERY_MS`).
 *
 * One row per payment (`payment_rescues`): its id, the URL's secret, stays the same across offers; each offer is
 * made after one attempt (`offered_for_attempt`), and a try is taken only while that attempt is still the
 * payment's last (`try-rescue.ts`).
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { sql, type Kysely, type Transaction } from "kysely";
import type { Database, Payment, PaymentRescue } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import { recordEvent } from "../events/record-event.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";

/** A rescue takes tries for this long after the payment was made (the sync window: after it nothing follows the payment). */
export const RESCUE_WINDOW_MS = 24 * 60 * 60_000;

/** The reason of an offer made because the push went unanswered. */
export const NO_ANSWER = "no_answer";

/**
 * Failures the customer can fix with another try or another wallet: no balance, the prompt timed out or was
 * declined, the wallet refused. Not the gateway's or a provider's own trouble (unreachable, an error, a
 * circuit open, never received): another try would meet the same.
 */
const FIXABLE_FAILURE = /insufficient|balance|fund|time_?out|timed_?out|expired|declin|reject|refus|cancel/i;

/** Whether a payment that failed with `failureCode` may be rescued by its customer. */
export function isFixableFailure(failureCode: string | null): boolean {
  return failureCode !== null && FIXABLE_FAILURE.test(failureCode);
}

/** Whether `payment` is a direct payment made through `POST /payments` (or a link), the kind a rescue applies to. */
export function isRescuable(payment: Payment): boolean {
  return payment.kind === "direct_payment" && payment.operator !== null;
}

/** `rs_` and 26 random Crockford base32 characters (130 bits): the secret of a rescue URL. */
export function newRescueId(): string {
  const alphabet = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
  const bytes = randomBytes(26);
  let id = "rs_";
  for (const byte of bytes) id += alphabet[byte & 31];
  return id;
}

/** Whether `value` is shaped like a rescue id. */
export function isRescueId(value: string): boolean {
  return /^rs_[0-9A-HJKMNP-TV-Z]{26}$/.test(value);
}

/** The rescue URL of a rescue id. */
export function rescueUrl(publicBaseUrl: string, rescueId: string): string {
  return `${publicBaseUrl}/pay/${rescueId}`;
}

/** When a payment's rescue stops taking tries. */
export function rescueExpiresAt(payment: Pick<Payment, "created_at">): Date {
  return new Date(payment.created_at.getTime() + RESCUE_WINDOW_MS);
}

/**
 * Offers a rescue of `payment` (its row as it is now, in `tx`, which holds its lock or moved it) after its last
 * attempt: the rescue row made or re-offered, and `payment.rescue_available` recorded — unless an offer was made
 * after that attempt already (then nothing is written). Answers the event's deliveries, to schedule after the commit.
 */
export async function recordRescueOffer(
  tx: Transaction<Database> | Kysely<Database>,
  now: Date,
  payment: Payment,
  offer: { reason: string; publicBaseUrl: string },
): Promise<{ rescue: PaymentRescue; deliveryIds: string[] } | undefined> {
  const last = await tx
    .selectFrom("payment_attempts")
    .select(["attempt", "provider", "operator"])
    .where("payment_id", "=", payment.id)
    .orderBy("attempt", "desc")
    .limit(1)
    .executeTakeFirst();
  const attempt = last?.attempt ?? 1;
  const rescue = await tx
    .insertInto("payment_rescues")
    .values({
      id: newRescueId(),
      payment_id: payment.id,
      tenant_id: payment.tenant_id,
      environment: payment.environment,
      reason: offer.reason,
      offered_for_attempt: attempt,
      created_at: now,
      offered_at: now,
    })
    .onConflict((oc) =>
      oc
        .column("payment_id")
        .doUpdateSet({
          reason: offer.reason,
          offered_for_attempt: attempt,
          offered_at: now,
          offers: sql<number>`payment_rescues.offers + 1`,
        })
        .where("payment_rescues.offered_for_attempt", "<", attempt),
    )
    .returningAll()
    .executeTakeFirst();
  if (!rescue) return undefined;
  const recorded = await recordEvent(tx, now, {
    tenantId: payment.tenant_id,
    environment: payment.environment,
    type: "payment.rescue_available",
    paymentId: payment.id,
    data: {
      paymentId: payment.id,
      rescueUrl: rescueUrl(offer.publicBaseUrl, rescue.id),
      reason: offer.reason,
      attempt,
      provider: last?.provider ?? payment.provider,
      operator: last?.operator ?? payment.operator,
      state: payment.state === "failed" ? "failed" : "pending",
      amount: Number(payment.amount),
      currency: payment.currency,
      paymentLinkId: payment.payment_link_id,
      merchantReference: payment.merchant_reference,
      expiresAt: rescueExpiresAt(payment).toISOString(),
    },
  });
  return { rescue, deliveryIds: recorded.deliveryIds };
}

/**
 * The sweeper's clause: pending direct payments whose last attempt — a push or a rescue try — went unanswered for
 * `RESCUE_AFTER`, with no offer made after it, offer a rescue now. Each in its own transaction, under the payment's
 * lock, checked again there (a late answer may have settled it meanwhile). Bounded per sweep.
 *
 * @example
 * ```ts
 * const { offered } = await offerStalledRescues(deps);
 * ```
 */
export async function offerStalledRescues(
  deps: Pick<Deps, "db" | "queue" | "logger" | "now" | "config">,
  options: { batchSize?: number } = {},
): Promise<{ offered: number }> {
  const now = deps.now();
  const stalledBefore = new Date(now.getTime() - deps.config.rescueAfterMs);
  const rows = await deps.db
    .selectFrom("payments")
    .innerJoin("payment_attempts as last", (join) =>
      join.onRef("last.payment_id", "=", "payments.id").on("last.attempt", "=", (eb) =>
        eb
          .selectFrom("payment_attempts as a")
          .select((s) => s.fn.max("a.attempt").as("m"))
          .whereRef("a.payment_id", "=", "payments.id"),
      ),
    )
    .leftJoin("payment_rescues", "payment_rescues.payment_id", "payments.id")
    .select(["payments.id", "last.attempt"])
    .where("payments.state", "=", "pending")
    .where("payments.kind", "=", "direct_payment")
    .where("payments.operator", "is not", null)
    // A push: the customer approves a prompt (not a wallet's page the customer may still be on).
    .where(sql<boolean>`coalesce(payments.next_action->>'type', 'none') = 'none'`)
    .where("payments.created_at", ">", new Date(now.getTime() - RESCUE_WINDOW_MS))
    .where("last.created_at", "<=", stalledBefore)
    .where((eb) => eb.or([eb("payment_rescues.id", "is", null), eb("payment_rescues.offered_for_attempt", "<", eb.ref("last.attempt"))]))
    .orderBy("payments.created_at")
    .limit(options.batchSize ?? 200)
    .execute();
  let offered = 0;
  for (const row of rows) {
    const deliveryIds = await deps.db.transaction().execute(async (tx) => {
      const payment = await tx.selectFrom("payments").selectAll().where("id", "=", row.id).forUpdate().executeTakeFirst();
      if (payment?.state !== "pending") return undefined;
      const made = await recordRescueOffer(tx, now, payment, { reason: NO_ANSWER, publicBaseUrl: deps.config.publicBaseUrl });
      return made?.deliveryIds;
    });
    if (deliveryIds === undefined) continue;
    offered++;
    if (deliveryIds.length > 0) await scheduleDeliveries(deps, deliveryIds);
  }
  if (offered > 0) deps.logger.info({ offered }, "stalled pushes offered a rescue");
  return { offered };
}
