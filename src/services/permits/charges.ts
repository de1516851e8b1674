/**
 * Charging a permit (contract §5, issue 7 point 3b) — the interface the renewal code calls too.
 *
 * A charge is a row first: `permit_charges` and its `pending` payment (kind `permit_charge`) in one
 * transaction, committed before provider B is called, with a `providerB-sync` safety net enqueued. One
 * intended charge is one row, by a unique key in the database: a renewal's `(schedule_id, period, attempt)`,
 * a merchant's `(tenant, environment, permit, Idempotency-Key)` (migration 0032) — a retry finds the row and
 * carries it through, never makes another, whatever became of the first run (killed after provider B
 * charged, its idempotency lock taken over, a 5xx after the commit that freed the key).
 *
 * Provider B is called with the charge id as `idempotency_key` (and in `custom_data`): provider B never
 * charges one key twice and answers its first result again (providers.md, PERMIT). A row that is pending and
 * unanswered (`provider_answered_at` null: "sending") may have been charged already; sending it again under
 * its own key is how provider B is asked what became of it — its protocol has no other read of a charge
 * before its invoice token is known — so doing that after a crash, a timeout or from a second worker is
 * always safe. The first answer is recorded once: `completed` / `failed` settle the charge, its payment and
 * its event in the same transaction; `pending` stays pending and is settled later by the charge's IPN or the
 * sync job — by confirming its invoice, never by charging again.
 */
import type { Environment } from "../../config.ts";
import type { Transaction } from "kysely";
import type { CustomData, Database, PermitChargeRow } from "../../db/schema.ts";
import { AppError, ConflictError, NotConfiguredError, NotFoundError } from "../../errors.ts";
import { type AuthorisationChargeResult, ProviderCallError } from "../../providers/provider.ts";
import { checkoutProviderOf } from "../checkout/checkout-provider.ts";
import type { Deps } from "../deps.ts";
import { canonicalJson } from "../idempotency/request-hash.ts";
import { isId, newId } from "../ids.ts";
import { rematchOrphans } from "../ipn/orphans.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";
import { lockChargeToSettle, settleCharge } from "./charge-settle.ts";
import { CHARGE_SYNC } from "./charge-sync-chain.ts";
import { authorisationOf } from "./apply-permit-status.ts";

export interface CreatePermitChargeInput {
  tenantId: string;
  environment: Environment;
  permitId: string;
  amount: number;
  description: string;
  customData?: CustomData;
  /** A renewal: one charge per (schedule, period, attempt), ever. */
  renewal?: { scheduleId: string; period: string; attempt: number };
  /** A merchant's charge with an `Idempotency-Key`: one charge per (tenant, environment, permit, key), ever. */
  idempotencyKey?: string;
}

/** Thrown inside the transaction when the charge's row exists already (its unique key): rolls back the payment too. */
class ChargeExists extends Error {}

/**
 * A renewal its schedule no longer expects: the schedule was cancelled, is past due, or was moved (a `PUT`,
 * a settled attempt) to another period or attempt since the charge job was enqueued, or the period is paid
 * already. Nothing was written. 409 `conflict`; only the renewal job meets it (it then creates nothing).
 */
export class RenewalNotDueError extends ConflictError {
  override name = "RenewalNotDueError";
  constructor(reason: string) {
    super(`The renewal is no longer due: ${reason}`);
  }
}

/**
 * Inside the charge's transaction, after the permit row: locks the renewal's schedule row (the order the
 * schedule's `PUT`, `DELETE` and the permit's end take too — permit, then schedule — so they serialise with
 * this insert) and refuses unless the schedule is `active`, of this permit, at this period and attempt, and
 * the period has no succeeded charge (its charges are read with a share lock, so a concurrent settle is
 * waited for and seen).
 */
async function assertRenewalDue(tx: Transaction<Database>, permitId: string, renewal: NonNullable<CreatePermitChargeInput["renewal"]>): Promise<void> {
  const schedule = await tx
    .selectFrom("permit_schedules")
    .select(["id", "permit_id", "status", "period", "attempt"])
    .where("id", "=", renewal.scheduleId)
    .forUpdate()
    .executeTakeFirst();
  if (!schedule || schedule.permit_id !== permitId) throw new RenewalNotDueError("the schedule is not this permit's");
  if (schedule.status !== "active") throw new RenewalNotDueError(`the schedule is ${schedule.status}`);
  if (schedule.period !== renewal.period || schedule.attempt !== renewal.attempt)
    throw new RenewalNotDueError(`the schedule is at ${schedule.period} attempt ${schedule.attempt}, not ${renewal.period} attempt ${renewal.attempt}`);
  const charges = await tx
    .selectFrom("permit_charges")
    .select(["id", "status"])
    .where("schedule_id", "=", renewal.scheduleId)
    .where("period", "=", renewal.period)
    .forShare()
    .execute();
  if (charges.some((charge) => charge.status === "succeeded")) throw new RenewalNotDueError(`the period ${renewal.period} is paid already`);
}

/** The charge this input names by its unique key (a renewal's period and attempt, or the merchant's key), if it exists. */
async function existingCharge(deps: Pick<Deps, "db">, input: CreatePermitChargeInput): Promise<PermitChargeRow | undefined> {
  if (input.renewal)
    return deps.db
      .selectFrom("permit_charges")
      .selectAll()
      .where("schedule_id", "=", input.renewal.scheduleId)
      .where("period", "=", input.renewal.period)
      .where("attempt", "=", input.renewal.attempt)
      .where("tenant_id", "=", input.tenantId)
      .where("permit_id", "=", input.permitId)
      .executeTakeFirst();
  if (input.idempotencyKey === undefined) return undefined;
  const found = await deps.db
    .selectFrom("permit_charges")
    .selectAll()
    .where("tenant_id", "=", input.tenantId)
    .where("environment", "=", input.environment)
    .where("permit_id", "=", input.permitId)
    .where("idempotency_key", "=", input.idempotencyKey)
    .executeTakeFirst();
  if (found) assertSameCharge(found, input);
  return found;
}

/**
 * The key names a charge already made: it must be the same request (the idempotency layer checks this while it
 * keeps the key, 24 hours; the charge keeps the key for good). 422 `idempotency_mismatch` otherwise.
 */
function assertSameCharge(charge: PermitChargeRow, input: CreatePermitChargeInput): void {
  const same =
    Number(charge.amount) === input.amount &&
    charge.description === input.description &&
    canonicalJson(charge.custom_data ?? null) === canonicalJson(input.customData ?? null);
  if (!same) throw new AppError(422, "idempotency_mismatch", "This Idempotency-Key was already used with another request body");
}

/**
 * A charge row first (and its pending payment), in one transaction; returns the existing one when its unique
 * key — (scheduleId, period, attempt), or (tenant, environment, permit, idempotencyKey) — already exists
 * (422 `idempotency_mismatch` when that key's charge was another amount, description or customData). Throws 404 `not_found` (also for another tenant's permit),
 * 409 `permit_not_active`, 422 `amount_exceeds_permit`; for a new renewal, {@link RenewalNotDueError}
 * unless its schedule — locked in the same transaction — still expects exactly that period and attempt.
 *
 * @example
 * ```ts
 * const { charge } = await createPermitCharge(deps, { tenantId, environment: "sandbox", permitId, amount: 5000, description: "Mai" });
 * const settled = await executePermitCharge(deps, charge.id);
 * ```
 */
export async function createPermitCharge(deps: Deps, input: CreatePermitChargeInput): Promise<{ charge: PermitChargeRow; created: boolean }> {
  const existing = await existingCharge(deps, input);
  if (existing) return { charge: existing, created: false };
  let charge: PermitChargeRow;
  try {
    charge = await deps.db.transaction().execute(async (tx) => {
      const now = deps.now();
      // Shared lock: a revocation waits for this charge's row, and this charge sees the permit's last word.
      const permit = isId("prm", input.permitId)
        ? await tx
            .selectFrom("permits")
            .selectAll()
            .where("id", "=", input.permitId)
            .where("tenant_id", "=", input.tenantId)
            .where("environment", "=", input.environment)
            .forShare()
            .executeTakeFirst()
        : undefined;
      if (!permit) throw new NotFoundError("Permit not found");
      if (permit.status !== "active") throw new ConflictError(`The permit is ${permit.status}; only an active permit can be charged`, "permit_not_active");
      if (input.amount > Number(permit.max_amount))
        throw new AppError(422, "amount_exceeds_permit", `amount ${input.amount} is greater than the permit's maxAmount ${permit.max_amount}`);
      if (input.renewal) await assertRenewalDue(tx, permit.id, input.renewal);
      const paymentId = newId("pay");
      await tx
        .insertInto("payments")
        .values({
          id: paymentId,
          tenant_id: permit.tenant_id,
          environment: permit.environment,
          // A permit is held by the provider of standing authorisations; its charges are payments there.
          provider: checkoutProviderOf(deps).name,
          kind: "permit_charge",
          provider_account: permit.provider_account,
          state: "pending",
          amount: input.amount,
          currency: permit.currency,
          description: input.description,
          customer: permit.customer,
          custom_data: input.customData ?? null,
          payment_method: permit.payment_method,
          credential_version: permit.credential_version,
          created_at: now,
          updated_at: now,
        })
        .execute();
      const inserted = await tx
        .insertInto("permit_charges")
        .values({
          id: newId("chg"),
          permit_id: permit.id,
          tenant_id: permit.tenant_id,
          environment: permit.environment,
          payment_id: paymentId,
          amount: input.amount,
          description: input.description,
          custom_data: input.customData ?? null,
          status: "pending",
          schedule_id: input.renewal?.scheduleId ?? null,
          period: input.renewal?.period ?? null,
          attempt: input.renewal?.attempt ?? 0,
          idempotency_key: input.renewal ? null : (input.idempotencyKey ?? null),
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) =>
          input.renewal || input.idempotencyKey === undefined
            ? oc.columns(["schedule_id", "period", "attempt"]).where("schedule_id", "is not", null).doNothing()
            : oc.columns(["tenant_id", "environment", "permit_id", "idempotency_key"]).where("idempotency_key", "is not", null).doNothing(),
        )
        .returningAll()
        .executeTakeFirst();
      if (!inserted) throw new ChargeExists();
      return inserted;
    });
  } catch (error) {
    if (!(error instanceof ChargeExists)) throw error;
    // Another worker (or a retry of the same request) inserted the same charge meanwhile: that one is the charge.
    return { charge: (await existingCharge(deps, input))!, created: false };
  }
  await CHARGE_SYNC.enqueue(deps, { subjectId: charge.id, provider: checkoutProviderOf(deps).name, createdAt: charge.created_at, step: 0 });
  return { charge, created: true };
}

/** Why provider B refused a charge, in the charge's `failReason`. */
function refusalReason(refusal: Extract<AuthorisationChargeResult, { outcome: "refused" }>): string {
  if (refusal.reason !== "provider_refused") return refusal.reason;
  return `provider_refused: ${refusal.failure.message}`.slice(0, 255);
}

/**
 * Sends a charge to provider B with its charge id as `idempotency_key` (and in custom_data), unless it was
 * already answered; records the answer, and on completed/failed settles the charge, its payment and its
 * event (`permit.charge.succeeded` / `permit.charge.failed`) in one transaction. `pending` stays pending and
 * is left to providerB-sync (confirm of the invoice token), never charged again. A refusal (the provider
 * charged nothing) fails the charge. No answer (timeout, 5xx, garbage) leaves it pending and unanswered:
 * the sync job sends it again under the same key. Idempotent: safe to call any number of times,
 * concurrently, after a crash at any point. Returns the charge as it now stands.
 */
export async function executePermitCharge(deps: Deps, chargeId: string): Promise<PermitChargeRow> {
  const charge = await deps.db.selectFrom("permit_charges").selectAll().where("id", "=", chargeId).executeTakeFirst();
  if (!charge) throw new NotFoundError("Charge not found");
  if (charge.status !== "pending" || charge.provider_answered_at !== null) return charge;
  const permit = await deps.db.selectFrom("permits").selectAll().where("id", "=", charge.permit_id).executeTakeFirstOrThrow();
  let answer: ProviderReply;
  try {
    const result = await checkoutProviderOf(deps).recurring.charge(deps, {
      authorisation: authorisationOf(permit),
      chargeId: charge.id,
      paymentId: charge.payment_id,
      amount: Number(charge.amount),
      description: charge.description,
      customData: charge.custom_data,
    });
    answer = result.outcome === "answered" ? { kind: "answer", answer: result } : { kind: "refused", reason: refusalReason(result) };
  } catch (error) {
    if (error instanceof NotConfiguredError) {
      // Never fail it here: an earlier attempt may have reached provider B before a crash.
      deps.logger.error(
        { alert: "providerB_charge_no_credentials", chargeId, permitId: permit.id },
        "the credentials of the charge's permit are gone; the charge stays pending",
      );
      return charge;
    }
    if (!(error instanceof ProviderCallError)) throw error;
    // Sent, but no answer: provider B may have charged. The same key later tells us, without charging again.
    deps.logger.warn(
      { chargeId, kind: error.kind, status: error.status, reason: error.message },
      "provider B did not answer a permit charge; the sync job sends it again under the same key",
    );
    await deps.db
      .updateTable("payments")
      .set({ outcome_unknown: true, updated_at: deps.now() })
      .where("id", "=", charge.payment_id)
      .where("state", "=", "pending")
      .execute();
    return await deps.db.selectFrom("permit_charges").selectAll().where("id", "=", chargeId).executeTakeFirstOrThrow();
  }
  return recordChargeAnswer(deps, chargeId, answer);
}

/** Provider B's answer to a charge call, or its refusal (nothing charged). */
type ProviderReply = { kind: "answer"; answer: Extract<AuthorisationChargeResult, { outcome: "answered" }> } | { kind: "refused"; reason: string };

/** Records provider B's first answer once (the row lock decides between concurrent executors). */
async function recordChargeAnswer(deps: Deps, chargeId: string, reply: ProviderReply): Promise<PermitChargeRow> {
  const result = await deps.db.transaction().execute(async (tx) => {
    const now = deps.now();
    const charge = await lockChargeToSettle(tx, chargeId);
    if (charge.status !== "pending" || charge.provider_answered_at !== null) return { charge, deliveryIds: [] as string[] };
    const invoiceToken = reply.kind === "answer" ? reply.answer.providerPaymentId : null;
    const answered = await tx
      .updateTable("permit_charges")
      .set({ provider_answered_at: now, invoice_token: invoiceToken, updated_at: now })
      .where("id", "=", chargeId)
      .returningAll()
      .executeTakeFirstOrThrow();
    await tx
      .updateTable("payments")
      .set({
        ...(invoiceToken ? { provider_transaction_id: invoiceToken } : {}),
        provider_status: reply.kind === "answer" ? reply.answer.providerStatus : "refused",
        outcome_unknown: false,
        updated_at: now,
      })
      .where("id", "=", charge.payment_id)
      .execute();
    if (reply.kind === "refused") return settleCharge(tx, now, answered, { to: "failed", failReason: reply.reason });
    const answer = reply.answer;
    if (answer.state === "succeeded") return settleCharge(tx, now, answered, { to: "succeeded", providerStatus: answer.providerStatus });
    if (answer.state === "failed")
      return settleCharge(tx, now, answered, { to: "failed", failReason: answer.failReason ?? "failed", providerStatus: answer.providerStatus });
    return { charge: answered, deliveryIds: [] as string[] };
  });
  if (result.deliveryIds.length > 0) await scheduleDeliveries(deps, result.deliveryIds);
  // The charge's IPN may have outrun this answer (it was kept as an orphan): pick it up now.
  if (result.charge.invoice_token)
    await rematchOrphans(deps, { token: result.charge.invoice_token }).catch((err) => deps.logger.warn({ err, chargeId }, "could not re-match orphan IPNs"));
  return result.charge;
}
