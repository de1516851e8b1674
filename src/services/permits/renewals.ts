/**
 * Renewals (contract §5, §8): the sweep that finds due schedules, the charge job of one schedule period and
 * attempt, and how a settled charge moves its schedule on.
 *
 * - The sweep (queue `permits`, a job scheduler every minute) takes the `active` schedules of `active`
 *   permits of enabled tenants whose `next_attempt_at` has come, and enqueues one charge job per
 *   (schedule, period, attempt), job id `<scheduleId>.<period>.<attempt>`. A disabled tenant's schedules are
 *   skipped (paused); so are those whose current charge is pending at provider B (it is settled by IPN or
 *   providerB-sync, never charged again).
 * - The job writes the charge row first — unique per (schedule_id, period, attempt) in the database, which is
 *   what guarantees one charge per period with any number of workers; the job id is only the cheap first
 *   guard — then has provider B charge it (`executePermitCharge`), then applies the outcome.
 * - Outcome: succeeded → the next period; failed → the next dunning attempt, due
 *   `renewalRetrySchedule[attempt]` after the period's due date; after the last one → `past_due` and the
 *   `permit.schedule.past_due` event, in one transaction. A pending charge leaves the schedule waiting; the
 *   sweep applies its outcome once it is settled.
 * - Catch-up: a schedule never charges more than one period at a time. When it resumes after a pause (a
 *   disabled tenant, workers down, a charge pending for long), it charges the period in progress only, never
 *   the ones missed in between. Dunning of a period is not cut short by the next period coming due.
 *
 * @module
 */
import type { PermitChargeRow, PermitSchedule } from "../../db/schema.ts";
import { readSharedNow } from "../../db/shared-clock.ts";
import { AppError } from "../../errors.ts";
import { enqueueRenewalCharge, type RenewalJobData } from "../../jobs/queues.ts";
import type { Deps } from "../deps.ts";
import { recordEvent } from "../events/record-event.ts";
import { scheduleDeliveries } from "../webhooks/schedule-deliveries.ts";
import { createPermitCharge, executePermitCharge, RenewalNotDueError } from "./charges.ts";
import { permitEventData } from "./permit-view.ts";
import { currentPeriodIndex, nextPeriodAfterPaid, periodAt } from "./schedule-math.ts";
import { cadenceOf } from "./schedules.ts";

/** What one sweep did. */
export interface RenewalSweepReport {
  /** Charge jobs enqueued (an id still live is a no-op, and counted). */
  enqueued: number;
  /** Schedules moved on from a charge settled outside a job (IPN, sync). */
  settled: number;
}

/**
 * Finds the due schedules (see the module) and enqueues their charge jobs; applies the outcome of charges
 * settled since. Safe to run at any time, concurrently, any number of times.
 */
export async function sweepRenewals(deps: Deps, options: { limit?: number } = {}): Promise<RenewalSweepReport> {
  // What is due, and which period is in progress, by the clock every process shares: a worker whose clock ran
  // ahead would otherwise charge early by as much.
  const now = await readSharedNow(deps, deps.db);
  const due = await deps.db
    .selectFrom("permit_schedules as s")
    .innerJoin("permits as p", "p.id", "s.permit_id")
    .innerJoin("tenants as t", "t.id", "s.tenant_id")
    .selectAll("s")
    .where("s.status", "=", "active")
    .where("s.next_attempt_at", "<=", now)
    .where("p.status", "=", "active")
    .where("t.disabled", "=", false)
    // A charge provider B answered `pending` waits for its IPN or sync: not this sweep's business.
    .where(({ not, exists, selectFrom }) =>
      not(
        exists(
          selectFrom("permit_charges as c")
            .select("c.id")
            .whereRef("c.schedule_id", "=", "s.id")
            .whereRef("c.period", "=", "s.period")
            .whereRef("c.attempt", "=", "s.attempt")
            .where("c.status", "=", "pending")
            .where("c.provider_answered_at", "is not", null),
        ),
      ),
    )
    .orderBy("s.next_attempt_at")
    .limit(options.limit ?? 500)
    .execute();

  const report: RenewalSweepReport = { enqueued: 0, settled: 0 };
  for (const schedule of due) {
    try {
      const action = await sweepOne(deps, schedule, now);
      if (action === "enqueued") report.enqueued++;
      if (action === "settled") report.settled++;
    } catch (err) {
      deps.logger.warn({ err, scheduleId: schedule.id }, "renewal sweep: could not handle a due schedule; trying again next sweep");
    }
  }
  return report;
}

async function sweepOne(deps: Deps, schedule: PermitSchedule, now: Date): Promise<"enqueued" | "settled" | "none"> {
  const charges = await deps.db
    .selectFrom("permit_charges")
    .select(["id", "status", "attempt", "provider_answered_at"])
    .where("schedule_id", "=", schedule.id)
    .where("period", "=", schedule.period)
    .execute();
  const paid = charges.find((charge) => charge.status === "succeeded");
  const current = charges.find((charge) => charge.attempt === schedule.attempt);
  if (paid || current?.status === "failed") {
    await applyRenewalOutcome(deps, (paid ?? current)!.id);
    return "settled";
  }
  if (current) {
    // Pending and never answered: its job died before or during the provider call. Calling again is safe.
    if (current.provider_answered_at === null) {
      await enqueueRenewalCharge(deps, { scheduleId: schedule.id, period: schedule.period, attempt: schedule.attempt });
      return "enqueued";
    }
    return "none";
  }

  let position = schedule;
  const inProgress = currentPeriodIndex(cadenceOf(schedule), now);
  if (charges.length === 0 && schedule.attempt === 0 && inProgress > schedule.period_index) {
    // Catch up with the period in progress only (compare-and-set: another sweep may be doing the same).
    const period = periodAt(cadenceOf(schedule), inProgress);
    const moved = await deps.db
      .updateTable("permit_schedules")
      .set({ period_index: period.index, period: period.key, due_at: period.dueAt, next_attempt_at: period.dueAt, updated_at: now })
      .where("id", "=", schedule.id)
      .where("status", "=", "active")
      .where("period_index", "=", schedule.period_index)
      .where("attempt", "=", 0)
      .returningAll()
      .executeTakeFirst();
    if (!moved) return "none";
    deps.logger.info({ scheduleId: schedule.id, from: schedule.period, to: period.key }, "renewal: caught up with the period in progress");
    position = moved;
  }
  await enqueueRenewalCharge(deps, { scheduleId: position.id, period: position.period, attempt: position.attempt });
  return "enqueued";
}

/**
 * The charge job: creates the renewal's charge (or finds it), has provider B charge it, and moves the
 * schedule on. A job that no longer matches its schedule's position (already settled, schedule cancelled,
 * permit no longer active, tenant disabled) creates nothing; a charge that already exists is always
 * carried through, so no pending payment is left behind.
 */
export async function runRenewalCharge(deps: Deps, job: RenewalJobData): Promise<void> {
  const existing = await deps.db
    .selectFrom("permit_charges")
    .select("id")
    .where("schedule_id", "=", job.scheduleId)
    .where("period", "=", job.period)
    .where("attempt", "=", job.attempt)
    .executeTakeFirst();
  let chargeId = existing?.id;
  if (!chargeId) {
    const found = await deps.db
      .selectFrom("permit_schedules as s")
      .innerJoin("permits as p", "p.id", "s.permit_id")
      .innerJoin("tenants as t", "t.id", "s.tenant_id")
      .selectAll("s")
      .select(["p.status as permit_status", "t.disabled as tenant_disabled"])
      .where("s.id", "=", job.scheduleId)
      .executeTakeFirst();
    if (found?.status !== "active" || found.period !== job.period || found.attempt !== job.attempt) return;
    if (found.permit_status !== "active" || found.tenant_disabled) return;
    const paid = await deps.db
      .selectFrom("permit_charges")
      .select("id")
      .where("schedule_id", "=", job.scheduleId)
      .where("period", "=", job.period)
      .where("status", "=", "succeeded")
      .executeTakeFirst();
    if (paid) return applyRenewalOutcome(deps, paid.id);
    try {
      const { charge } = await createPermitCharge(deps, {
        tenantId: found.tenant_id,
        environment: found.environment,
        permitId: found.permit_id,
        amount: found.amount,
        description: found.description,
        renewal: { scheduleId: job.scheduleId, period: job.period, attempt: job.attempt },
      });
      chargeId = charge.id;
    } catch (err) {
      // Revoked (or otherwise ended), or the schedule cancelled, moved or paid, between the check above and
      // the charge's transaction (which locks the schedule row and checks again): nothing to charge.
      if (err instanceof RenewalNotDueError) {
        deps.logger.info(
          { scheduleId: job.scheduleId, period: job.period, attempt: job.attempt, reason: err.message },
          "renewal charge job: not due any more, nothing charged",
        );
        return;
      }
      if (err instanceof AppError && (err.code === "permit_not_active" || err.code === "not_found")) return;
      throw err;
    }
  }
  const charge = await executePermitCharge(deps, chargeId);
  deps.logger.info({ scheduleId: job.scheduleId, period: job.period, attempt: job.attempt, chargeId, status: charge.status }, "renewal charge job");
  if (charge.status !== "pending") await applyRenewalOutcome(deps, charge.id);
}

/**
 * Moves a schedule on from one of its settled charges, once (the schedule row is locked and its position
 * compared): a succeeded charge pays its period; a failed one of the current attempt schedules the next
 * retry, or makes the schedule `past_due` with its event after the last one.
 */
export async function applyRenewalOutcome(deps: Deps, chargeId: string): Promise<void> {
  const now = deps.now();
  const retries = deps.config.renewalRetrySchedule;
  const recorded = await deps.db.transaction().execute(async (trx) => {
    let charge: PermitChargeRow | undefined = await trx.selectFrom("permit_charges").selectAll().where("id", "=", chargeId).executeTakeFirst();
    if (!charge?.schedule_id || charge.status === "pending") return undefined;
    const schedule = await trx.selectFrom("permit_schedules").selectAll().where("id", "=", charge.schedule_id).forUpdate().executeTakeFirst();
    if (schedule?.status !== "active" || schedule.period !== charge.period) return undefined;
    if (charge.status === "failed") {
      // Paid wins: an earlier attempt of the period that succeeded late (provider B completed its invoice
      // after all) pays the period — no retry, no past_due. Share lock: a settle in flight is waited for.
      const ofPeriod = await trx
        .selectFrom("permit_charges")
        .selectAll()
        .where("schedule_id", "=", schedule.id)
        .where("period", "=", schedule.period)
        .forShare()
        .execute();
      charge = ofPeriod.find((row) => row.status === "succeeded") ?? charge;
    }

    if (charge.status === "succeeded") {
      const next = nextPeriodAfterPaid(cadenceOf(schedule), schedule.period_index, now);
      await trx
        .updateTable("permit_schedules")
        .set({ period_index: next.index, period: next.key, due_at: next.dueAt, attempt: 0, next_attempt_at: next.dueAt, updated_at: now })
        .where("id", "=", schedule.id)
        .execute();
      return undefined;
    }
    if (charge.attempt !== schedule.attempt) return undefined;
    if (schedule.attempt < retries.length) {
      await trx
        .updateTable("permit_schedules")
        .set({ attempt: schedule.attempt + 1, next_attempt_at: new Date(schedule.due_at.getTime() + retries[schedule.attempt]!), updated_at: now })
        .where("id", "=", schedule.id)
        .execute();
      return undefined;
    }
    await trx.updateTable("permit_schedules").set({ status: "past_due", past_due_at: now, updated_at: now }).where("id", "=", schedule.id).execute();
    const permit = await trx.selectFrom("permits").selectAll().where("id", "=", schedule.permit_id).executeTakeFirstOrThrow();
    return recordEvent(trx, now, {
      tenantId: schedule.tenant_id,
      environment: schedule.environment,
      type: "permit.schedule.past_due",
      paymentId: charge.payment_id,
      data: { ...permitEventData(permit, charge), status: "past_due", chargeStatus: charge.status, attempts: schedule.attempt + 1 },
    });
  });
  if (recorded) await scheduleDeliveries(deps, recorded.deliveryIds);
}
