/**
 * A `POST /payments` collection with failover (issue 16): the payment is recorded once, then tried on its
 * routes in order (`routing/`), each try an attempt of the same payment (`payment_attempts`). The next route
 * is tried only when the provider provably did not act on this one:
 *
 * | this attempt                                             | then                                             |
 * |----------------------------------------------------------|--------------------------------------------------|
 * | the provider took it                                     | answered `pending`, with what the customer does next |
 * | refused before any push (a 4xx, a refusal code)          | the next route, in the same request              |
 * | the connection was refused (nothing sent)                | the next route                                   |
 * | its circuit is open (not called)                         | the next route                                   |
 * | no answer after sending (5xx, timeout), or the last route | as a direct payment (`collect-by-push.ts`): left pending for the sync schedule, or failed |
 *
 * Never after an unknown outcome: a payment that may have reached a phone is never sent to another provider.
 *
 * @module
 */
import { isBrokenCircuitError } from "cockatiel";
import { sql } from "kysely";
import type { CustomData, Environment, NextAction, Payment, Provider } from "../../db/schema.ts";
import { ProviderError } from "../../errors.ts";
import { CollectionError, type CollectionStarted, type ProviderAccountRef } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { recordProviderTransaction, settleFailedCollection } from "../direct-payments/collect-by-push.ts";
import type { PaymentAttemptView } from "./payment-view.ts";
import { applyDirectPaymentUpdate } from "../direct-payments/apply-update.ts";
import { newId } from "../ids.ts";
import { breakerFor } from "../routing/breakers.ts";
import { countFailedAttempt, type RankedRoute } from "../routing/window.ts";

/** A route with the account the tenant has there. */
export interface Candidate extends RankedRoute {
  account: ProviderAccountRef;
}

export interface RoutedCollection {
  tenantId: string;
  environment: Environment;
  operator: string;
  candidates: readonly Candidate[];
  amount: number;
  description: string;
  phone: { number: string; country: string };
  customer: { firstname?: string; lastname?: string; email?: string };
  otp?: string;
  callbackUrl: string | undefined;
  metadata?: CustomData;
}

/** What the customer does next, from what the provider answered. */
function nextActionOf(started: CollectionStarted): NextAction {
  if (started.redirectUrl)
    return { type: "open_url", url: started.redirectUrl, instructions: "Send the customer to this URL to approve the payment in the wallet's app or page" };
  return { type: "none", instructions: "The customer approves the payment on the phone's prompt" };
}

/** Points the payment at the next attempt's provider: its ids from the abandoned attempt are kept in the attempt's row. */
async function moveToAttempt(deps: Deps, paymentId: string, candidate: Candidate): Promise<void> {
  await deps.db
    .updateTable("payments")
    .set({
      provider: candidate.provider.name as Provider,
      provider_account: candidate.account.accountId,
      credential_version: candidate.account.credentialVersion,
      payment_method: candidate.method.method,
      provider_transaction_id: null,
      reference: null,
      provider_status: null,
      updated_at: deps.now(),
    })
    .where("id", "=", paymentId)
    .where("state", "=", "pending")
    .execute();
}

async function endAttempt(
  deps: Deps,
  paymentId: string,
  attempt: number,
  outcome: "started" | "refused" | "unreachable" | "circuit_open" | "unknown" | "failed",
  error: string,
  providerTransactionId: string | null,
): Promise<void> {
  await deps.db
    .updateTable("payment_attempts")
    .set({ outcome, error, provider_transaction_id: providerTransactionId, ended_at: deps.now() })
    .where("payment_id", "=", paymentId)
    .where("attempt", "=", attempt)
    .execute();
}

/**
 * Records the payment and tries its routes in order; answers it as it is once a provider took it (with what
 * the customer does next) and its attempts.
 *
 * @throws {ProviderError} as a direct payment's (422, 502, 504) when the last route failed or an attempt's outcome is unknown.
 */
export async function collectRouted(deps: Deps, input: RoutedCollection): Promise<{ payment: Payment; attempts: PaymentAttemptView[] }> {
  const paymentId = newId("pay");
  const ended: PaymentAttemptView[] = [];
  const now = deps.now();
  const first = input.candidates[0]!;
  // The payment and its first attempt, in one statement.
  await deps.db
    .with("payment", (db) =>
      db
        .insertInto("payments")
        .values({
          id: paymentId,
          tenant_id: input.tenantId,
          environment: input.environment,
          provider: first.provider.name as Provider,
          kind: "direct_payment",
          provider_account: first.account.accountId,
          credential_version: first.account.credentialVersion,
          amount: input.amount,
          currency: first.method.currency,
          description: input.description,
          customer: { ...input.customer, phone: input.phone.number, country: input.phone.country },
          payment_method: first.method.method,
          callback_url: input.callbackUrl ?? null,
          operator: input.operator,
          custom_data: input.metadata ?? null,
          created_at: now,
          updated_at: now,
        })
        .returning("id"),
    )
    .insertInto("payment_attempts")
    .columns(["payment_id", "attempt", "provider", "provider_account", "credential_version", "outcome", "reason", "created_at"])
    .expression((eb) =>
      eb
        .selectFrom("payment")
        .select([
          "payment.id",
          sql<number>`1`.as("attempt"),
          sql<string>`${first.provider.name}::text`.as("provider"),
          sql<string>`${first.account.accountId}::text`.as("provider_account"),
          sql<number | null>`${first.account.credentialVersion}::integer`.as("credential_version"),
          sql<string>`'started'`.as("outcome"),
          sql<string>`${first.reason}::text`.as("reason"),
          sql<Date>`${now}::timestamptz`.as("created_at"),
        ]),
    )
    .execute();
  deps.syncHold.hold(deps, { id: paymentId, provider: first.provider.name, createdAt: now });

  for (const [index, candidate] of input.candidates.entries()) {
    const attempt = index + 1;
    const isLast = index === input.candidates.length - 1;
    const startedAt = index === 0 ? now : deps.now();
    if (index > 0) {
      await moveToAttempt(deps, paymentId, candidate);
      await deps.db
        .insertInto("payment_attempts")
        .values({
          payment_id: paymentId,
          attempt,
          provider: candidate.provider.name,
          provider_account: candidate.account.accountId,
          credential_version: candidate.account.credentialVersion,
          outcome: "started",
          reason: candidate.reason,
          created_at: startedAt,
        })
        .execute();
    }
    const route = { environment: input.environment, provider: candidate.provider.name, operator: input.operator, country: input.phone.country };
    try {
      const started = await breakerFor(deps, route).execute(() =>
        candidate.provider.startCollection(deps, {
          kind: "ussd_push",
          paymentId,
          tenantId: input.tenantId,
          environment: input.environment,
          account: candidate.account,
          amount: input.amount,
          currency: candidate.method.currency,
          description: input.description,
          method: candidate.method.method,
          operator: input.operator,
          ...(input.otp !== undefined && { otp: input.otp }),
          phone: input.phone,
          customer: input.customer,
          // The payment's id at the provider is stored before the push; the attempt's, when the attempt ends.
          recorded: (collected) => recordProviderTransaction(deps, { id: paymentId, provider: candidate.provider }, collected),
        }),
      );
      const nextAction = nextActionOf(started);
      // The attempt's end and what the customer does next, in one statement; the payment as it is then.
      const endedAt = deps.now();
      const row = await deps.db
        .with("attempt", (db) =>
          db
            .updateTable("payment_attempts")
            .set({ outcome: "started", provider_transaction_id: started.providerPaymentId, ended_at: endedAt })
            .where("payment_id", "=", paymentId)
            .where("attempt", "=", attempt)
            .returning("attempt"),
        )
        .updateTable("payments")
        .set({ next_action: nextAction })
        .where("id", "=", paymentId)
        .returningAll()
        .executeTakeFirstOrThrow();
      ended.push({
        attempt,
        provider: candidate.provider.name,
        outcome: "started",
        reason: candidate.reason,
        providerTransactionId: started.providerPaymentId,
        error: null,
        createdAt: startedAt.toISOString(),
      });
      return { payment: row, attempts: ended };
    } catch (error) {
      if (isBrokenCircuitError(error)) {
        const message = `${candidate.provider.label}'s circuit for ${input.operator} in ${input.phone.country} is open: not called`;
        await endAttempt(deps, paymentId, attempt, "circuit_open", message, null);
        ended.push({
          attempt,
          provider: candidate.provider.name,
          outcome: "circuit_open",
          reason: candidate.reason,
          providerTransactionId: null,
          error: message,
          createdAt: startedAt.toISOString(),
        });
        if (!isLast) continue;
        await applyDirectPaymentUpdate(deps, paymentId, { kind: "failed", failureCode: "circuit_open" });
        throw new ProviderError(502, "Every route for this operator is unavailable (their circuits are open); nothing was sent to the phone");
      }
      // The payment failed while its provider id was stored (an id the provider handed out twice): the attempt ends with it.
      if (error instanceof ProviderError) await endAttempt(deps, paymentId, attempt, "failed", error.message, null);
      if (!(error instanceof CollectionError)) throw error;
      const failure = error.failure;
      const provablyNotActed = !error.mayHaveActed && (failure.kind === "refused" || failure.kind === "unreachable");
      const outcome = error.mayHaveActed ? "unknown" : failure.kind === "refused" ? "refused" : failure.kind === "unreachable" ? "unreachable" : "failed";
      const providerTransactionId = error.started?.providerPaymentId ?? null;
      await endAttempt(deps, paymentId, attempt, outcome, failure.message, providerTransactionId);
      ended.push({
        attempt,
        provider: candidate.provider.name,
        outcome,
        reason: candidate.reason,
        providerTransactionId,
        error: failure.message,
        createdAt: startedAt.toISOString(),
      });
      if (provablyNotActed) {
        await countFailedAttempt(deps, route);
        if (!isLast) {
          deps.logger.info({ paymentId, provider: candidate.provider.name, kind: failure.kind }, "failover: the provider did not act, trying the next route");
          continue;
        }
      }
      throw await settleFailedCollection(deps, paymentId, candidate.provider, error);
    }
  }
  throw new Error("a routed payment needs at least one route");
}
