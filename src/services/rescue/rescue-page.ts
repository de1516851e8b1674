/**
 * The pay page on a rescue URL (`/pay/rs_…`, issue 31 point 3): the same page and calls as a payment link's, for
 * one payment — its public face (the shop's name, what is paid, the wallets a try may use, and whether a try is
 * taken now), a try, and the payment's progress. A payment is shown only through its own rescue.
 *
 * A try on a payment that had failed leaves it `failed` until a success (the order of states: nothing goes back to
 * `pending`), so the page is shown the try's progress: `pending` while it is under way. No sync schedule follows a
 * failed payment: the try's notification settles it, and the page's reads ask its provider (at most once a second).
 *
 * @module
 */
import type { Payment, PaymentRescue } from "../../db/schema.ts";
import { NotFoundError } from "../../errors.ts";
import { ProviderCallError } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { applyDirectPaymentUpdate } from "../direct-payments/apply-update.ts";
import { REFRESH_FLOOR_MS, refreshOnRead } from "../direct-payments/refresh.ts";
import { type PublicLinkView, type PublicPaymentView, publicPayment, walletsOffered } from "../payment-links/pay.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";
import { recordRescueOffer, rescueExpiresAt } from "./offer.ts";
import { type RescueTryRequest, rescueById, rescueCountries } from "./rescue-scope.ts";
import { tryRescue } from "./try-rescue.ts";

/** The payment's last attempt: its number, wallet and provider id. */
async function lastAttemptOf(deps: Pick<Deps, "db">, paymentId: string) {
  return deps.db
    .selectFrom("payment_attempts")
    .select(["attempt", "operator", "provider", "provider_transaction_id"])
    .where("payment_id", "=", paymentId)
    .orderBy("attempt", "desc")
    .limit(1)
    .executeTakeFirstOrThrow();
}

/** A try made after the offer is under way (the offer opens again when it stalls or fails). */
function tryUnderWay(rescue: PaymentRescue, lastAttempt: number): boolean {
  return rescue.offered_for_attempt < lastAttempt;
}

/** The rescue URL's public face: what the pay page shows. 404 for no such rescue. */
export async function publicRescue(deps: Deps, rescueId: string): Promise<PublicLinkView> {
  const { rescue, payment, link } = await rescueById(deps, rescueId);
  const tenant = await deps.db.selectFrom("tenants").select(["name", "disabled"]).where("id", "=", payment.tenant_id).executeTakeFirstOrThrow();
  const last = await lastAttemptOf(deps, payment.id);
  const status =
    payment.state === "succeeded" || payment.state === "refunded"
      ? "used"
      : tenant.disabled
        ? "deactivated"
        : payment.state === "cancelled" || rescueExpiresAt(payment).getTime() <= deps.now().getTime()
          ? "expired"
          : "active";
  const scope = { tenantId: payment.tenant_id, environment: payment.environment };
  const wallets = status === "active" ? await walletsOffered(deps, scope, rescueCountries(deps, payment, link), payment.currency, link?.wallets ?? null) : [];
  return {
    id: rescue.id,
    status,
    shop: tenant.name,
    description: payment.description,
    amount: Number(payment.amount),
    amountMin: null,
    amountMax: null,
    currency: payment.currency,
    returnUrl: link?.return_url ?? null,
    environment: payment.environment,
    wallets,
    rescue: { paymentId: payment.id, open: !tryUnderWay(rescue, last.attempt), operator: last.operator ?? payment.operator, reason: rescue.reason },
  };
}

/**
 * The payment as the page shows it through its rescue: a try under way on a failed payment is `pending`; once the
 * offer takes a try again (the try stalled or failed), `rescueUrl` is the rescue's own page, to try once more.
 */
async function rescueView(deps: Pick<Deps, "db">, rescueId: string, row: Payment): Promise<PublicPaymentView> {
  if (row.state !== "pending" && row.state !== "failed") return publicPayment(row);
  const rescue = await deps.db.selectFrom("payment_rescues").selectAll().where("id", "=", rescueId).executeTakeFirstOrThrow();
  const last = await lastAttemptOf(deps, row.id);
  if (!tryUnderWay(rescue, last.attempt)) return publicPayment(row, `/pay/${rescueId}`);
  const view = publicPayment(row);
  return row.state === "failed" ? { ...view, state: "pending", failureCode: null } : view;
}

/**
 * A failed payment's try, read from its provider (at most once a second per payment, across processes): a success
 * settles the payment (`payment.completed`); a failure ends the try and offers the rescue again.
 */
async function readTryOfFailedPayment(deps: Deps, rescue: PaymentRescue, row: Payment): Promise<Payment> {
  const last = await lastAttemptOf(deps, row.id);
  if (!tryUnderWay(rescue, last.attempt) || last.provider_transaction_id === null || last.provider_transaction_id !== row.provider_transaction_id) return row;
  const now = deps.now();
  const claimed = await deps.db
    .updateTable("payments")
    .set({ provider_synced_at: now })
    .where("id", "=", row.id)
    .where((eb) => eb.or([eb("provider_synced_at", "is", null), eb("provider_synced_at", "<=", new Date(now.getTime() - REFRESH_FLOOR_MS))]))
    .returningAll()
    .executeTakeFirst();
  if (!claimed) return row;
  let report: Awaited<ReturnType<ReturnType<Deps["providers"]["get"]>["readPayment"]>>;
  try {
    report = await deps.providers.get(claimed.provider).readPayment(deps, claimed);
  } catch (error) {
    if (!(error instanceof ProviderCallError)) throw error;
    return row;
  }
  if (!report) return row;
  if (report.state === "succeeded") return (await applyDirectPaymentUpdate(deps, row.id, { kind: "provider", report }, claimed)).row;
  if (report.state !== "failed" && report.state !== "cancelled") return row;
  const deliveryIds = await deps.db.transaction().execute(async (tx) => {
    const locked = await tx.selectFrom("payments").selectAll().where("id", "=", row.id).forUpdate().executeTakeFirstOrThrow();
    if (locked.state !== "failed" || locked.provider_transaction_id !== last.provider_transaction_id) return [];
    await tx
      .updateTable("payment_attempts")
      .set({ error: `the try failed at its provider: ${report.errorCode ?? report.providerStatus}`, ended_at: deps.now() })
      .where("payment_id", "=", row.id)
      .where("attempt", "=", last.attempt)
      .execute();
    const offered = await recordRescueOffer(tx, deps.now(), locked, { reason: report.errorCode ?? "failed", publicBaseUrl: deps.config.publicBaseUrl });
    return offered?.deliveryIds ?? [];
  });
  if (deliveryIds.length > 0) await scheduleDeliveries(deps, deliveryIds);
  return row;
}

/** The payment of a rescue, by the rescue's id and its own: 404 for any other payment. Read from its provider when under way. */
export async function rescuePayment(deps: Deps, rescueId: string, paymentId: string): Promise<PublicPaymentView> {
  const { rescue, payment } = await rescueById(deps, rescueId);
  if (payment.id !== paymentId) throw new NotFoundError("Payment not found");
  const fresh =
    payment.state === "pending"
      ? await refreshOnRead(deps, payment)
      : payment.state === "failed"
        ? await readTryOfFailedPayment(deps, rescue, payment)
        : payment;
  const row = fresh === payment ? payment : await deps.db.selectFrom("payments").selectAll().where("id", "=", paymentId).executeTakeFirstOrThrow();
  return rescueView(deps, rescueId, row);
}

/** A try through the rescue URL (`try-rescue.ts`), answered as the page shows the payment. */
export async function payThroughRescue(deps: Deps, rescueId: string, input: RescueTryRequest): Promise<PublicPaymentView> {
  const { payment } = await tryRescue(deps, rescueId, input);
  return rescueView(deps, rescueId, payment);
}
