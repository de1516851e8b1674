/**
 * Settled payments read again from their provider, on a schedule of their own (migration 0028). A provider
 * that can give a payment back outside the gateway (`capabilities.refundsOutsideGateway`: provider A, whose
 * merchants refund on its dashboard) notifies the refund once, with a few tries; when every try finds the
 * gateway down, the refund was never learnt — the payment stayed `succeeded`, and the ledger kept money on the
 * provider's account that the provider no longer held. Nothing but a read of the payment tells it.
 *
 * So a payment of such a provider that settles gets `reread_at` (`apply-update.ts`: the first step of
 * `SETTLED_REREAD_SCHEDULE`, by default 2 min, 10 min, 1 h, 6 h, 1 d, 3 d, 7 d and 30 d after its settlement),
 * and every sweeper run ({@link rereadSettledPayments}) takes the due ones:
 *
 * 1. one statement claims at most `limit` of them (`for update skip locked`: two workers never take the
 *    same) and moves each `reread_at` to its next step — null past the last step, or once the payment is no
 *    longer `succeeded` (given back in full: nothing more can happen to it);
 * 2. each claimed payment is read from its provider and the answer applied like a notification's
 *    (`syncFromProvider`: the order of states, `refunded_by_provider`, the ledger's trigger, refunds of ours
 *    that no longer fit stopped, `payment.refunded` when it is all given back).
 *
 * A worker that dies between the two loses that step's read only; the next step reads it. A provider that
 * cannot be reached is logged and read at the next step, like a sync.
 *
 * @module
 */
import { sql } from "kysely";
import type { Payment } from "../../db/schema.ts";
import { sharedNow } from "../../db/shared-clock.ts";
import type { Deps } from "../deps.ts";
import { syncFromProvider } from "./refresh.ts";

/** Payments read per sweeper run, by default: at two reads a second per worker, the sweeper's minute is not outgrown. */
export const REREAD_BATCH = 200;

/** How many reads run at once. */
const CONCURRENCY = 8;

type RereadDeps = Parameters<typeof syncFromProvider>[0];

export interface RereadResult {
  /** Payments read from their provider. */
  read: number;
  /** Of those, payments their provider said it gave back (more of), now recorded. */
  givenBack: number;
}

/**
 * Claims the settled payments whose re-read is due now (on the shared clock) and moves each to its next step, in one
 * statement: the payment is `succeeded` and a step of `schedule` (milliseconds after `completed_at`) is
 * still ahead of now, else its `reread_at` becomes null. Returns the claimed rows that are still `succeeded`.
 */
export async function claimDueRereads(deps: Pick<Deps, "db" | "now" | "sharedClock" | "config">, limit: number): Promise<Payment[]> {
  // Due on the shared clock (the database's, `db/shared-clock.ts`), whichever worker's sweeper claims them: one
  // whose clock ran ahead would otherwise read them early and pass over the steps its clock had already passed.
  const now = sharedNow(deps);
  const stepsSeconds = deps.config.settledRereadSchedule.map((ms) => ms / 1000);
  const { rows } = await sql<Payment>`
    update payments as p
    set reread_at = case when p.state = 'succeeded' then (
      select min(p.completed_at + step * interval '1 second')
      from unnest(${sql.val(stepsSeconds)}::float8[]) as step
      where p.completed_at + step * interval '1 second' > ${now}
    ) end
    where p.id in (
      select id from payments
      where reread_at <= ${now}
      order by reread_at
      limit ${limit}
      for update skip locked
    )
    returning p.*`.execute(deps.db);
  return rows.filter((row) => row.state === "succeeded");
}

/**
 * One sweeper run's re-reads: claims up to `limit` due payments ({@link claimDueRereads}) and reads each from
 * its provider, applying what it says.
 *
 * @example
 * ```ts
 * // in the sweeper, every SWEEP_EVERY_MS:
 * const { read, givenBack } = await rereadSettledPayments(deps);
 * ```
 */
export async function rereadSettledPayments(deps: RereadDeps, limit = REREAD_BATCH): Promise<RereadResult> {
  const due = await claimDueRereads(deps, limit);
  const result: RereadResult = { read: 0, givenBack: 0 };
  let next = 0;
  const readOne = async (): Promise<void> => {
    while (next < due.length) {
      const row = due[next++]!;
      const after = await syncFromProvider(deps, row);
      result.read++;
      if (Number(after.refunded_by_provider) > Number(row.refunded_by_provider)) {
        result.givenBack++;
        deps.logger.info(
          { paymentId: row.id, provider: row.provider, refundedByProvider: Number(after.refunded_by_provider), state: after.state },
          "a settled payment read again: its provider gave it back outside the gateway",
        );
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, due.length) }, readOne));
  return result;
}
