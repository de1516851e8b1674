/**
 * A rescue try (issue 31 point 3): the customer, on the rescue URL, tries the payment again — the same wallet or
 * another — as a new **attempt of the same payment** under the failover rules (`payments/routed-collection.ts`):
 *
 * - one offer takes one try: the try is recorded under the payment's lock only while the attempt the offer was made
 *   after is still the payment's last, so duplicates and concurrent tries make one attempt (the others: 409);
 * - the payment keeps pointing at the stalled attempt until the try's provider answers with its id; only then is
 *   it switched to the try — and only while nothing settled it meanwhile. A late approval of the first push
 *   still wins: before the switch, its notification finds the payment itself; after it, the intake follows the
 *   abandoned attempt (`payments/abandoned-attempts.ts`) and gives the payment back to it. The try is then
 *   abandoned; paid too, it is a reconciliation difference to refund — never a second `payment.completed`;
 * - a try its provider provably did not act on (refused, unreachable, circuit open) goes to the next route, as
 *   failover does; the last one refused opens the offer again for another try.
 *
 * @module
 */
import { isBrokenCircuitError } from "cockatiel";
import type { Payment, PaymentCustomer } from "../../db/schema.ts";
import { ConflictError, NotConfiguredError, ProviderError, ValidationError } from "../../errors.ts";
import { CollectionError, type CollectionStarted } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { planPayment } from "../payments/create-payment.ts";
import type { Candidate } from "../payments/routed-collection.ts";
import { routingSnapshot } from "../routing/route-cache.ts";
import { breakerFor } from "../routing/breakers.ts";
import { countFailedAttempt } from "../routing/window.ts";
import { rescueExpiresAt } from "./offer.ts";
import { type RescueTryRequest, rescueById, rescueCountries } from "./rescue-scope.ts";

/** What the try's provider answered, once it took the push. */
interface TryStarted {
  attempt: number;
  candidate: Candidate;
  started: CollectionStarted;
}

/**
 * Records the try (its attempt) under the payment's lock, when the offer still takes one.
 *
 * @throws {ConflictError} (409) when a try is under way already, or the payment is paid, cancelled or past its rescue window.
 */
async function recordTry(
  deps: Deps,
  rescueId: string,
  paymentId: string,
  candidate: Candidate,
  wallet: { operator: string; customer: PaymentCustomer },
): Promise<{ payment: Payment; attempt: number }> {
  return deps.db.transaction().execute(async (tx) => {
    // The payment's row first, then its rescue's: the order a failure that offers a rescue takes them in (no deadlock).
    const payment = await tx.selectFrom("payments").selectAll().where("id", "=", paymentId).forUpdate().executeTakeFirstOrThrow();
    const rescue = await tx.selectFrom("payment_rescues").selectAll().where("id", "=", rescueId).forUpdate().executeTakeFirstOrThrow();
    refuseSettled(deps, payment);
    const last = await tx
      .selectFrom("payment_attempts")
      .select((eb) => eb.fn.max("attempt").as("attempt"))
      .where("payment_id", "=", payment.id)
      .executeTakeFirst();
    const lastAttempt = Number(last?.attempt ?? 1);
    if (rescue.offered_for_attempt !== lastAttempt)
      throw new ConflictError("A try of this payment is already under way: approve it on your phone, or wait for it to end");
    const now = deps.now();
    // The wallet each earlier attempt was made with, kept before the payment may be switched to another.
    await tx
      .updateTable("payment_attempts")
      .set({ operator: payment.operator, payment_method: payment.payment_method, customer: payment.customer })
      .where("payment_id", "=", payment.id)
      .where("operator", "is", null)
      .execute();
    const attempt = lastAttempt + 1;
    await tx
      .insertInto("payment_attempts")
      .values({
        payment_id: payment.id,
        attempt,
        provider: candidate.provider.name,
        provider_account: candidate.account.accountId,
        credential_version: candidate.account.credentialVersion,
        outcome: "started",
        reason: `rescue try (${rescue.reason}): ${candidate.reason}`,
        created_at: now,
        rescue: true,
        operator: wallet.operator,
        payment_method: candidate.method.method,
        customer: wallet.customer,
      })
      .execute();
    await tx
      .updateTable("payment_rescues")
      .set((eb) => ({ tries: eb("tries", "+", 1) }))
      .where("id", "=", rescueId)
      .execute();
    return { payment, attempt };
  });
}

/** A paid, cancelled or expired payment takes no try. */
function refuseSettled(deps: Pick<Deps, "now">, payment: Payment): void {
  if (payment.state === "succeeded" || payment.state === "refunded") throw new ConflictError("This payment has already been paid");
  if (payment.state === "cancelled") throw new ConflictError("This payment was cancelled by the merchant");
  if (rescueExpiresAt(payment).getTime() <= deps.now().getTime()) throw new ConflictError("This payment can no longer be tried again");
}

/**
 * The try's provider answered with its id: the attempt gets it, and the payment is switched to the try — only
 * while it still points at what it pointed at when the try was recorded and is not paid (a late approval of the
 * first push settled it meanwhile: the try stays on its attempt, abandoned).
 */
async function switchToTry(
  deps: Deps,
  before: Payment,
  attempt: number,
  candidate: Candidate,
  wallet: { operator: string; customer: PaymentCustomer },
  collected: { providerPaymentId: string; reference: string | null; providerStatus: string },
): Promise<void> {
  const now = deps.now();
  await deps.db
    .updateTable("payment_attempts")
    .set({ provider_transaction_id: collected.providerPaymentId })
    .where("payment_id", "=", before.id)
    .where("attempt", "=", attempt)
    .execute();
  await deps.db
    .updateTable("payments")
    .set({
      provider: candidate.provider.name,
      provider_account: candidate.account.accountId,
      credential_version: candidate.account.credentialVersion,
      payment_method: candidate.method.method,
      operator: wallet.operator,
      customer: wallet.customer,
      provider_transaction_id: collected.providerPaymentId,
      reference: collected.reference,
      provider_status: collected.providerStatus,
      outcome_unknown: false,
      next_action: null,
      updated_at: now,
    })
    .where("id", "=", before.id)
    .where("state", "in", ["pending", "failed"])
    .where("provider", "=", before.provider)
    .where("provider_account", "=", before.provider_account)
    .where("provider_transaction_id", "is not distinct from", before.provider_transaction_id)
    .execute();
}

async function endTry(
  deps: Deps,
  paymentId: string,
  attempt: number,
  outcome: "started" | "refused" | "unreachable" | "circuit_open" | "unknown" | "failed",
  error: string | null,
) {
  await deps.db
    .updateTable("payment_attempts")
    .set({ outcome, error, ended_at: deps.now() })
    .where("payment_id", "=", paymentId)
    .where("attempt", "=", attempt)
    .execute();
}

/** How a try's call ended when its provider did not take it (the failover rules' outcomes). */
function tryFailure(
  candidate: Candidate,
  input: RescueTryRequest,
  error: unknown,
): { outcome: "refused" | "unreachable" | "circuit_open" | "unknown" | "failed"; message: string } {
  if (isBrokenCircuitError(error))
    return { outcome: "circuit_open", message: `${candidate.provider.label}'s circuit for ${input.operator} in ${input.phone.country} is open: not called` };
  if (!(error instanceof CollectionError)) throw error;
  const { failure } = error;
  if (error.mayHaveActed) return { outcome: "unknown", message: failure.message };
  if (failure.kind === "refused" || failure.kind === "unreachable") return { outcome: failure.kind, message: failure.message };
  return { outcome: "failed", message: failure.message };
}

/** The last route refused the try too: the offer opens again after it, for another wallet. */
async function reopenOffer(deps: Deps, rescueId: string, attempt: number): Promise<void> {
  await deps.db
    .updateTable("payment_rescues")
    .set({ offered_for_attempt: attempt })
    .where("id", "=", rescueId)
    .where("offered_for_attempt", "<", attempt)
    .execute();
}

/**
 * Tries the payment of rescue `rescueId` again with the customer's wallet and number; answers the payment
 * (switched to the try when its provider took it).
 *
 * @example
 * ```ts
 * const payment = await tryRescue(deps, "rs_…", { operator: "moov", phone: { number: "+22995000000", country: "bj" } });
 * ```
 * @throws {NotFoundError} for no such rescue; {@link ConflictError} (409) when a try is under way, or the payment is
 *   paid, cancelled or too old; {@link ValidationError} for a wallet or country it does not take; `ProviderError`
 *   as `POST /payments` answers one.
 */
export async function tryRescue(deps: Deps, rescueId: string, input: RescueTryRequest): Promise<{ payment: Payment; attempt: number }> {
  const { payment, link } = await rescueById(deps, rescueId);
  const tenant = await deps.db.selectFrom("tenants").select("disabled").where("id", "=", payment.tenant_id).executeTakeFirstOrThrow();
  if (tenant.disabled) throw new ConflictError("This shop takes no payments any more");
  refuseSettled(deps, payment);
  const messages: string[] = [];
  if (!rescueCountries(deps, payment, link).includes(input.phone.country)) messages.push(`phone.country ${input.phone.country} is not taken for this payment`);
  if (link?.wallets && !link.wallets.includes(input.operator)) messages.push(`operator ${input.operator} is not taken for this payment`);
  if (messages.length > 0) throw new ValidationError(messages);
  const scope = { tenantId: payment.tenant_id, environment: payment.environment };
  // No guarded insert checks the routing counter here: the snapshot is checked current first.
  const snapshot = await routingSnapshot(deps, scope, { current: true });
  const planned = await planPayment(deps, scope, snapshot, {
    amount: Number(payment.amount),
    currency: payment.currency,
    description: payment.description,
    operator: input.operator,
    customer: { phone: input.phone },
    ...(input.otp !== undefined && { otp: input.otp }),
  });
  if (planned.messages.length > 0) throw new ValidationError(planned.messages);
  if (planned.candidates.length === 0) throw planned.notConfigured ?? new NotConfiguredError(`No provider serves ${input.operator} for this tenant`);
  const previous = payment.customer ?? {};
  const wallet = { operator: input.operator, customer: { ...previous, phone: input.phone.number, country: input.phone.country } };
  let started: TryStarted | undefined;
  let recorded: { payment: Payment; attempt: number } | undefined;
  for (const [index, candidate] of planned.candidates.entries()) {
    const isLast = index === planned.candidates.length - 1;
    // The first attempt of the try is taken under the offer's rule; the next ones are failover within it.
    const current: { payment: Payment; attempt: number } = recorded
      ? { payment: recorded.payment, attempt: await nextAttempt(deps, recorded.payment, recorded.attempt, candidate, wallet) }
      : await recordTry(deps, rescueId, payment.id, candidate, wallet);
    recorded = current;
    const route = { environment: payment.environment, provider: candidate.provider.name, operator: input.operator, country: input.phone.country };
    try {
      const answer = await breakerFor(deps, route).execute(() =>
        candidate.provider.startCollection(deps, {
          kind: "ussd_push",
          paymentId: payment.id,
          tenantId: payment.tenant_id,
          environment: payment.environment,
          account: candidate.account,
          amount: Number(payment.amount),
          currency: candidate.method.currency,
          description: payment.description,
          method: candidate.method.method,
          operator: input.operator,
          ...(input.otp !== undefined && { otp: input.otp }),
          // The payment may have been pushed at this provider before: this try is a push of its own there.
          pushKey: `${payment.id}.${current.attempt}`,
          phone: input.phone,
          // The names and e-mail the payment was made with (a provider may need them); the number is the try's.
          customer: {
            ...(previous.firstname !== undefined && { firstname: previous.firstname }),
            ...(previous.lastname !== undefined && { lastname: previous.lastname }),
            ...(previous.email !== undefined && { email: previous.email }),
          },
          recorded: (collected) => switchToTry(deps, current.payment, current.attempt, candidate, wallet, collected),
        }),
      );
      started = { attempt: current.attempt, candidate, started: answer };
      break;
    } catch (error) {
      const failure = tryFailure(candidate, input, error);
      await endTry(deps, payment.id, current.attempt, failure.outcome, failure.message);
      // The try may have reached the phone: it is followed as a stalled push (offered again after RESCUE_AFTER).
      if (failure.outcome === "unknown")
        throw new ProviderError(502, `${candidate.provider.label} did not answer the try: approve it on your phone if it comes, or try again later`);
      const notActed = failure.outcome !== "failed";
      if (notActed && failure.outcome !== "circuit_open") await countFailedAttempt(deps, route);
      if (notActed && !isLast) continue;
      await reopenOffer(deps, rescueId, current.attempt);
      throw new ProviderError(422, `${candidate.provider.label} refused the try: ${failure.message}`);
    }
  }
  if (!started) throw new Error("a rescue try needs at least one route");
  await endTry(deps, payment.id, started.attempt, "started", null);
  const nextAction = started.started.redirectUrl
    ? {
        type: "open_url" as const,
        url: started.started.redirectUrl,
        instructions: "Send the customer to this URL to approve the payment in the wallet's app or page",
      }
    : { type: "none" as const, instructions: "The customer approves the payment on the phone's prompt" };
  // What the customer does next, when the payment is the try's (not settled by the first push meanwhile).
  await deps.db
    .updateTable("payments")
    .set({ next_action: nextAction })
    .where("id", "=", payment.id)
    .where("provider_transaction_id", "=", started.started.providerPaymentId)
    .where("provider", "=", started.candidate.provider.name)
    .execute();
  const after = await deps.db.selectFrom("payments").selectAll().where("id", "=", payment.id).executeTakeFirstOrThrow();
  return { payment: after, attempt: started.attempt };
}

/** Failover within a try: the next route's attempt (the try's rule was checked when its first attempt was recorded). */
async function nextAttempt(
  deps: Deps,
  payment: Payment,
  previous: number,
  candidate: Candidate,
  wallet: { operator: string; customer: PaymentCustomer },
): Promise<number> {
  const attempt = previous + 1;
  await deps.db
    .insertInto("payment_attempts")
    .values({
      payment_id: payment.id,
      attempt,
      provider: candidate.provider.name,
      provider_account: candidate.account.accountId,
      credential_version: candidate.account.credentialVersion,
      outcome: "started",
      reason: `rescue try, next route: ${candidate.reason}`,
      created_at: deps.now(),
      rescue: true,
      operator: wallet.operator,
      payment_method: candidate.method.method,
      customer: wallet.customer,
    })
    .execute();
  return attempt;
}
