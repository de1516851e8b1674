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
import { type Insertable, sql } from "kysely";
import { precompile } from "../../db/precompiled.ts";
import type { CustomData, Environment, NextAction, Payment, PaymentCustomer, PaymentsTable, Provider } from "../../db/schema.ts";
import { ProviderError } from "../../errors.ts";
import { CollectionError, type CollectionStarted, type ProviderAccountRef } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { recordProviderTransaction, settleFailedCollection } from "../direct-payments/collect-by-push.ts";
import type { PaymentAttemptView } from "./payment-view.ts";
import { applyDirectPaymentUpdate } from "../direct-payments/apply-update.ts";
import { newId } from "../ids.ts";
import { breakerFor } from "../routing/breakers.ts";
import { countFailedAttempt, type RankedRoute } from "../routing/window.ts";
import { KeyedPaymentExists, type PaymentKey, paymentByKey, paymentKeyColumns } from "./payment-key.ts";

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
  /** The merchant's own reference of the payment. */
  merchantReference?: string;
  /** The payment link it is paid through (`pl_…`). */
  paymentLinkId?: string;
  /** The tenant's routing counter the candidates were planned at: the payment is written only while it holds. */
  routingVersion: number;
  /** The request's `Idempotency-Key`: the payment's own, one payment per key ({@link KeyedPaymentExists} when taken). */
  idempotency?: PaymentKey;
}

/**
 * The tenant's route lists or accounts changed after the candidates were planned (its routing counter moved):
 * nothing was written or sent; plan again with a fresh routing snapshot.
 */
export class RoutingChangedError extends Error {
  override name = "RoutingChangedError";
  constructor() {
    super("the tenant's routing changed while the payment was planned");
  }
}

/**
 * A routed payment and its first attempt, written only while the tenant's routing counter is `routing_version`,
 * and only when its `Idempotency-Key` (if any) names no payment yet (one statement; precompiled).
 */
const insertRoutedPayment = precompile<{
  id: string;
  tenant_id: string;
  environment: Environment;
  provider: Provider;
  provider_account: string;
  credential_version: number | null;
  amount: number;
  currency: Insertable<PaymentsTable>["currency"];
  description: string;
  customer: PaymentCustomer;
  payment_method: string;
  callback_url: string | null;
  operator: string;
  custom_data: CustomData | null;
  merchant_reference: string | null;
  payment_link_id: string | null;
  idempotency_key: string | null;
  idempotency_path: string | null;
  idempotency_hash: string | null;
  now: Date;
  reason: string;
  routing_version: number;
}>()((db, p) =>
  db
    .with("payment", (qc) =>
      qc
        .insertInto("payments")
        .columns([
          "id",
          "tenant_id",
          "environment",
          "provider",
          "kind",
          "provider_account",
          "credential_version",
          "amount",
          "currency",
          "description",
          "customer",
          "payment_method",
          "callback_url",
          "operator",
          "custom_data",
          "merchant_reference",
          "payment_link_id",
          "idempotency_key",
          "idempotency_path",
          "idempotency_hash",
          "created_at",
          "updated_at",
        ])
        .expression(
          db
            .selectNoFrom((eb) => [
              eb.val(p.id).as("id"),
              eb.val(p.tenant_id).as("tenant_id"),
              eb.val(p.environment).as("environment"),
              eb.val(p.provider).as("provider"),
              eb.val("direct_payment").as("kind"),
              eb.val(p.provider_account).as("provider_account"),
              eb.val(p.credential_version).as("credential_version"),
              eb.val(p.amount).as("amount"),
              eb.val(p.currency).as("currency"),
              eb.val(p.description).as("description"),
              eb.val(p.customer).as("customer"),
              eb.val(p.payment_method).as("payment_method"),
              eb.val(p.callback_url).as("callback_url"),
              eb.val(p.operator).as("operator"),
              eb.val(p.custom_data).as("custom_data"),
              eb.val(p.merchant_reference).as("merchant_reference"),
              eb.val(p.payment_link_id).as("payment_link_id"),
              eb.val(p.idempotency_key).as("idempotency_key"),
              eb.val(p.idempotency_path).as("idempotency_path"),
              eb.val(p.idempotency_hash).as("idempotency_hash"),
              eb.val(p.now).as("created_at"),
              eb.val(p.now).as("updated_at"),
            ])
            .where(sql<boolean>`coalesce((select version from routing_versions where tenant_id = ${p.tenant_id}), 0) = ${p.routing_version}`),
        )
        // The key's payment made already (by an earlier run of the same request): nothing is written.
        .onConflict((oc) =>
          oc.columns(["tenant_id", "environment", "idempotency_path", "idempotency_key"]).where("idempotency_key", "is not", null).doNothing(),
        )
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
          sql<string>`${p.provider}::text`.as("provider"),
          sql<string>`${p.provider_account}::text`.as("provider_account"),
          sql<number | null>`${p.credential_version}::integer`.as("credential_version"),
          sql<string>`'started'`.as("outcome"),
          sql<string>`${p.reason}::text`.as("reason"),
          sql<Date>`${p.now}::timestamptz`.as("created_at"),
        ]),
    )
    .returning("payment_id"),
);

/**
 * The provider's id, recorded before the phone is prompted, in one statement: the payment's (with its
 * reference and status) and the attempt's (which ends then, `started`), and what the customer does next
 * after a push (approve the prompt: {@link PUSH_NEXT_ACTION}); the payment as it is then, which is the answer
 * when the push goes through without a URL to open (precompiled).
 */
const recordStartedAttempt = precompile<{
  payment_id: string;
  attempt: number;
  provider_transaction_id: string;
  reference: string | null;
  provider_status: string;
  now: Date;
  next_action: NextAction;
}>()((db, p) =>
  db
    .with("attempt", (qc) =>
      qc
        .updateTable("payment_attempts")
        .set({ provider_transaction_id: p.provider_transaction_id, ended_at: p.now })
        .where("payment_id", "=", p.payment_id)
        .where("attempt", "=", p.attempt)
        .returning("attempt"),
    )
    .updateTable("payments")
    .set({
      provider_transaction_id: p.provider_transaction_id,
      reference: p.reference,
      provider_status: p.provider_status,
      updated_at: p.now,
      next_action: p.next_action,
    })
    .where("id", "=", p.payment_id)
    .returningAll(),
);

/** What the customer does after a push that gave no URL to open. */
const PUSH_NEXT_ACTION: NextAction = { type: "none", instructions: "The customer approves the payment on the phone's prompt" };

/**
 * The first attempt that started ends with the provider's id, and the payment gets what the customer does next;
 * the payment as it is then (precompiled): for a push that answered a URL to open, or a provider that did not
 * hand its id over before the push.
 */
const endStartedAttempt = precompile<{ payment_id: string; attempt: number; provider_transaction_id: string; ended_at: Date; next_action: NextAction }>()(
  (db, p) =>
    db
      .with("attempt", (qc) =>
        qc
          .updateTable("payment_attempts")
          .set({ outcome: "started", provider_transaction_id: p.provider_transaction_id, ended_at: p.ended_at })
          .where("payment_id", "=", p.payment_id)
          .where("attempt", "=", p.attempt)
          .returning("attempt"),
      )
      .updateTable("payments")
      .set({ next_action: p.next_action })
      .where("id", "=", p.payment_id)
      .returningAll(),
);

/** What the customer does next, from what the provider answered. */
function nextActionOf(started: CollectionStarted): NextAction {
  if (started.redirectUrl)
    return { type: "open_url", url: started.redirectUrl, instructions: "Send the customer to this URL to approve the payment in the wallet's app or page" };
  return PUSH_NEXT_ACTION;
}

/** Points the payment at the next attempt's provider: its ids from the abandoned attempt are kept in the attempt's row. */
async function moveToAttempt(deps: Deps, paymentId: string, candidate: Candidate): Promise<void> {
  await deps.db
    .updateTable("payments")
    .set({
      provider: candidate.provider.name,
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

/** The payment's next action, stored with an attempt that then did not start, is taken back. */
async function forgetNextAction(deps: Deps, paymentId: string): Promise<void> {
  await deps.db.updateTable("payments").set({ next_action: null }).where("id", "=", paymentId).where("next_action", "is not", null).execute();
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
 * @throws {ProviderError} as a direct payment's (422, 502, 504) when the last route failed or an attempt's outcome is unknown;
 *   {@link KeyedPaymentExists} when the `Idempotency-Key` names a payment already (nothing written, nothing sent);
 *   422 `idempotency_mismatch` when that payment was asked with another body.
 */
export async function collectRouted(deps: Deps, input: RoutedCollection): Promise<{ payment: Payment; attempts: PaymentAttemptView[] }> {
  const paymentId = newId("pay");
  const ended: PaymentAttemptView[] = [];
  const now = deps.now();
  const first = input.candidates[0]!;
  // The payment and its first attempt, in one statement — written only while the tenant's routing counter
  // still has the value the routes were planned with (`routing/route-cache.ts`).
  const { rows: inserted } = await insertRoutedPayment(deps.db, {
    id: paymentId,
    tenant_id: input.tenantId,
    environment: input.environment,
    provider: first.provider.name,
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
    merchant_reference: input.merchantReference ?? null,
    payment_link_id: input.paymentLinkId ?? null,
    ...paymentKeyColumns(input.idempotency),
    now,
    reason: first.reason,
    routing_version: input.routingVersion,
  });
  if (inserted.length === 0) {
    // Nothing written: the key's payment exists (answered as it stands, never pushed again), or the routing changed.
    const made = input.idempotency && (await paymentByKey(deps, input, input.idempotency));
    if (made) throw new KeyedPaymentExists(made);
    throw new RoutingChangedError();
  }
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
    // The payment as this attempt's provider id was recorded with it (what the customer does next after a push included).
    let recordedRow: Payment | undefined;
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
          // The provider's id — the payment's and the attempt's — is stored before the push, with what the
          // customer does next after a push: one statement, whose row is the answer when the push gives no URL.
          recorded: (collected) =>
            recordProviderTransaction(deps, { id: paymentId, provider: candidate.provider }, collected, async () => {
              const { rows } = await recordStartedAttempt(deps.db, {
                payment_id: paymentId,
                attempt,
                provider_transaction_id: collected.providerPaymentId,
                reference: collected.reference,
                provider_status: collected.providerStatus,
                now: deps.now(),
                next_action: PUSH_NEXT_ACTION,
              });
              recordedRow = rows[0];
            }),
        }),
      );
      const nextAction = nextActionOf(started);
      let row = nextAction === PUSH_NEXT_ACTION && recordedRow?.provider_transaction_id === started.providerPaymentId ? recordedRow : undefined;
      // A URL to open (or a provider that did not record its id first): the attempt's end and the next action, in one more statement.
      row ??= (
        await endStartedAttempt(deps.db, {
          payment_id: paymentId,
          attempt,
          provider_transaction_id: started.providerPaymentId,
          ended_at: deps.now(),
          next_action: nextAction,
        })
      ).rows[0];
      if (!row) throw new Error(`payment ${paymentId} vanished while it was being made`);
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
      // The attempt did not start: what the customer does next, stored with its provider id, is not so.
      if (recordedRow) await forgetNextAction(deps, paymentId);
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
