/**
 * Moving a pending payout (or refund) at its provider: one step of its sync chain, a provider's
 * notification about it, or the first send. Under a lease on the row (one worker at a time), it reads what
 * the provider holds under the payout's id and sends it only when the provider holds nothing yet or says
 * nothing was sent (`Payouts.send` reads before it sends); after a call whose answer never came it only
 * reads. Then the answer is applied (`apply-payout.ts`). Before the first call that may create it and right
 * before the call that moves money, a refund is checked against what its payment's provider gave back
 * meanwhile (`refund-guard.ts`): one that no longer fits is stopped there and nothing is sent.
 *
 * | provider's call fails with            | the payout                                                    |
 * |---------------------------------------|---------------------------------------------------------------|
 * | a refusal, nothing sent (4xx, a code) | `failed`, with the provider's code                            |
 * | unreachable, or no answer before send | stays pending: the next step tries again (nothing was sent)   |
 * | no answer to the sending call         | stays pending, `outcomeUnknown`: later steps only read it     |
 *
 * @module
 */
import { sql } from "kysely";
import type { PayoutRow } from "../../db/schema.ts";
import { NotConfiguredError } from "../../errors.ts";
import { PayoutError, type PayoutRef, type PayoutReport, type Payouts, ProviderCallError, SendingStopped } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { sweepableByAge, syncWindowStart } from "../payments/sync-chain.ts";
import { applyPayoutReport } from "./apply-payout.ts";
import { payoutChain, type PayoutSyncJobData } from "./payout-sync-chain.ts";
import { clearToSend } from "./refund-guard.ts";
import { coverFee } from "./fee-guard.ts";
import { nationalNumber } from "../countries.ts";

/** How long a worker holds a payout while it calls its provider: longer than its calls can take (a read, a create, a send, a read). */
function leaseMs(deps: Pick<Deps, "config">): number {
  return 4 * deps.config.providerTimeoutMs + 5_000;
}

function refOf(row: PayoutRow): PayoutRef {
  return {
    payoutId: row.id,
    tenantId: row.tenant_id,
    environment: row.environment,
    account: { accountId: row.provider_account, credentialVersion: row.credential_version },
    providerPayoutId: row.provider_payout_id,
    amount: Number(row.amount),
    currency: row.currency,
  };
}

/**
 * Takes the lease on a pending payout; undefined when it is not pending or another worker holds it. The lease
 * is measured on the database's clock, the one clock every worker shares: a worker whose own clock ran ahead
 * (a fault campaign's `clock-jump`, a host whose time was stepped) took another's lease for over and sent the
 * same refund at once; the second create was refused by the provider (its reference already taken) and the
 * refund recorded `failed` while the first one sent it.
 */
async function lease(deps: Pick<Deps, "db" | "config">, payoutId: string): Promise<PayoutRow | undefined> {
  return deps.db
    .updateTable("payouts")
    .set({ locked_until: sql<Date>`now() + make_interval(secs => ${leaseMs(deps) / 1000})` })
    .where("id", "=", payoutId)
    .where("state", "=", "pending")
    .where((eb) => eb.or([eb("locked_until", "is", null), eb("locked_until", "<", sql<Date>`now()`)]))
    .returningAll()
    .executeTakeFirst();
}

async function unlease(deps: Pick<Deps, "db">, payoutId: string): Promise<void> {
  await deps.db.updateTable("payouts").set({ locked_until: null }).where("id", "=", payoutId).execute();
}

/** Sends (or goes on sending) the payout through the port, storing the provider's id as soon as it is known. */
function send(deps: Deps, payouts: Payouts, row: PayoutRow): Promise<PayoutReport> {
  return payouts.send(deps, {
    ...refOf(row),
    description: row.description,
    recipient: { phone: { number: nationalNumber(row.phone_number, row.country), country: row.country }, operator: row.operator, ...row.recipient },
    beforeSending: async (announced) => {
      if ((await clearToSend(deps, row)).stopped) throw new SendingStopped(row.id);
      if ((await coverFee(deps, row, announced?.fee ?? null)).stopped) throw new SendingStopped(row.id);
    },
    recorded: async (started) => {
      await deps.db
        .updateTable("payouts")
        .set({ provider_payout_id: started.providerPayoutId, provider_status: started.providerStatus, updated_at: deps.now() })
        .where("id", "=", row.id)
        .where("provider_payout_id", "is", null)
        .execute();
    },
  });
}

/** What a failed call leaves: a refusal before sending fails the payout; anything else keeps it pending. */
async function onFailure(deps: Deps, row: PayoutRow, error: PayoutError): Promise<PayoutRow> {
  const failure = error.failure;
  deps.logger.warn({ payoutId: row.id, step: error.step, kind: failure.kind, status: failure.status }, "a payout call failed");
  if (error.mayHaveActed) {
    return deps.db
      .updateTable("payouts")
      .set({ outcome_unknown: true, updated_at: deps.now() })
      .where("id", "=", row.id)
      .returningAll()
      .executeTakeFirstOrThrow();
  }
  if (failure.kind !== "refused") return row;
  const code = failure.details.providerCode ?? (failure.status !== null ? `http_${failure.status}` : "provider_refused");
  return applyPayoutReport(deps, row.id, {
    providerPayoutId: row.provider_payout_id ?? "",
    providerStatus: row.provider_status ?? "refused",
    state: "failed",
    notSentYet: false,
    errorCode: code,
    fee: null,
    sentAt: null,
  });
}

/**
 * Moves the payout as far as it safely can; answers it as it is after (unchanged when another worker holds
 * it, or when it is final already).
 *
 * @example
 * ```ts
 * const row = await advancePayout(deps, "po_01J…");
 * row.state; // "pending" | "sent" | "failed"
 * ```
 */
export async function advancePayout(deps: Deps, payoutId: string): Promise<PayoutRow | undefined> {
  const row = await lease(deps, payoutId);
  if (!row) return deps.db.selectFrom("payouts").selectAll().where("id", "=", payoutId).executeTakeFirst();
  const payouts = deps.providers.find(row.provider)?.payouts;
  try {
    if (!payouts) {
      deps.logger.error({ payoutId, provider: row.provider }, "this gateway runs no provider that sends this payout");
      return row;
    }
    let report = await payouts.read(deps, refOf(row));
    if (report === undefined) return row;
    // Nothing there yet, or held but not sent: sending goes on (it reads again before each sending call),
    // unless it must stop first (a refund whose payment was given back meanwhile: `refund-guard.ts`).
    if (report === null || report.notSentYet) {
      const cleared = await clearToSend(deps, row);
      if (cleared.stopped) return cleared.row;
      report = await send(deps, payouts, row);
    }
    return await applyPayoutReport(deps, payoutId, report);
  } catch (error) {
    // Stopped right before the call that moves money: nothing was sent, the refund is failed already.
    if (error instanceof SendingStopped) return deps.db.selectFrom("payouts").selectAll().where("id", "=", payoutId).executeTakeFirst();
    if (error instanceof PayoutError) return onFailure(deps, row, error);
    if (error instanceof ProviderCallError) {
      deps.logger.warn({ payoutId, kind: error.kind, status: error.status }, "could not read a payout from its provider");
      return row;
    }
    // The account's credentials are gone: nothing can be asked; it stays pending for the operator.
    if (error instanceof NotConfiguredError) {
      deps.logger.error({ payoutId, provider: row.provider }, "the provider account of a pending payout is gone; it cannot be followed");
      return row;
    }
    throw error;
  } finally {
    await unlease(deps, payoutId);
  }
}

/** The step of the payout chain: advance it; when still pending, enqueue the next step. */
export async function syncPayout(deps: Deps, job: PayoutSyncJobData): Promise<void> {
  const row = await advancePayout(deps, job.payoutId);
  if (row?.state !== "pending") return;
  await payoutChain.enqueueNext(deps, {
    subjectId: row.id,
    provider: row.provider,
    createdAt: row.created_at,
    step: job.step,
    context: { tenantId: row.tenant_id, environment: row.environment },
  });
}

/** Pending payouts whose chain lost its job get their due step (the sweeper's clause). */
export async function sweepPayoutSyncs(deps: Pick<Deps, "db" | "queue" | "logger" | "now">): Promise<number> {
  const now = deps.now();
  const rows = await deps.db
    .selectFrom("payouts")
    .select(["id", "provider", "created_at"])
    .where("state", "=", "pending")
    .where("created_at", ">", syncWindowStart(now))
    .where((eb) => sweepableByAge(eb, "created_at", now))
    .orderBy("created_at")
    .limit(500)
    .execute();
  return payoutChain.resume(deps, rows);
}
