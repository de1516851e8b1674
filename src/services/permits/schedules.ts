/**
 * A permit's renewal schedule (contract §5): create or replace it (`PUT`), read it, cancel it.
 *
 * One row per permit, ever: a PUT updates that row and keeps its id (migration 0009), so the unique
 * `(schedule_id, period, attempt)` of `permit_charges` guards every period of the permit's life. A PUT that
 * keeps the cadence (same interval and count, `startAt` left out or unchanged, `timeZone` left out or
 * unchanged) of an active schedule keeps its position: only the amount and description of the charges still
 * to be made change. Any other PUT (a new cadence, `startAt` or `timeZone`, or reviving a `past_due` or
 * `cancelled` schedule) re-positions it: the anchor becomes `startAt` (default: now, or the old anchor when
 * only the time zone changed or nothing did), and the schedule collects from the period in progress — never
 * one it already has a charge for. The calendar is the schedule's time zone's (`schedule-math.ts`); its
 * default is the payer's country's (`schedule-time-zone.ts`), and a PUT without `timeZone` keeps the zone.
 *
 * @module
 */
import { dueNow } from "../../db/shared-clock.ts";
import type { Transaction } from "kysely";
import type { Environment } from "../../config.ts";
import type { Currency, Database, PermitChargeRow, PermitSchedule, ScheduleInterval, ScheduleStatus } from "../../db/schema.ts";
import { ConflictError, NotFoundError, ValidationError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { newId } from "../ids.ts";
import { nextPeriodAfterPaid, periodAt, startingPeriod, type Cadence } from "./schedule-math.ts";
import { canonicalTimeZone, defaultScheduleTimeZone } from "./schedule-time-zone.ts";

/** The tenant and environment a call acts in. */
export interface Scope {
  tenantId: string;
  environment: Environment;
}

/** What `PUT …/schedule` takes. */
export interface ScheduleInput {
  amount: number;
  interval: ScheduleInterval;
  intervalCount?: number;
  /** RFC 3339; the anchor of every period. Default: now. */
  startAt?: string;
  /** The IANA time zone whose calendar the periods follow. Default: the schedule's, else the payer's country's. */
  timeZone?: string;
  description: string;
}

/** A schedule as the API shows it. */
export interface ScheduleView {
  id: string;
  permitId: string;
  status: ScheduleStatus;
  amount: number;
  currency: Currency;
  interval: ScheduleInterval;
  intervalCount: number;
  description: string;
  startAt: string;
  /** The IANA time zone whose calendar the periods follow. */
  timeZone: string;
  /** The period being collected (`YYYY-MM-DD`, the local date of its due day). */
  period: string;
  /** 0 at the due date, then 1, 2, 3… for the dunning retries. */
  attempt: number;
  /** When the next charge (or retry) is due; null unless `active`. */
  nextChargeAt: string | null;
  /** The tenant is disabled: nothing is charged until it is enabled again. */
  paused: boolean;
  pastDueAt: string | null;
  cancelledAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The cadence of a stored schedule. */
export function cadenceOf(schedule: Pick<PermitSchedule, "start_at" | "interval" | "interval_count" | "time_zone">): Cadence {
  return { anchor: schedule.start_at, interval: schedule.interval, count: schedule.interval_count, timeZone: schedule.time_zone };
}

/** The schedule as the API shows it, with its permit's currency and whether its tenant is disabled. */
export function scheduleView(schedule: PermitSchedule, context: { currency: Currency; tenantDisabled: boolean }): ScheduleView {
  return {
    id: schedule.id,
    permitId: schedule.permit_id,
    status: schedule.status,
    amount: schedule.amount,
    currency: context.currency,
    interval: schedule.interval,
    intervalCount: schedule.interval_count,
    description: schedule.description,
    startAt: schedule.start_at.toISOString(),
    timeZone: schedule.time_zone,
    period: schedule.period,
    attempt: schedule.attempt,
    nextChargeAt: schedule.status === "active" ? schedule.next_attempt_at.toISOString() : null,
    paused: context.tenantDisabled,
    pastDueAt: schedule.past_due_at?.toISOString() ?? null,
    cancelledAt: schedule.cancelled_at?.toISOString() ?? null,
    createdAt: schedule.created_at.toISOString(),
    updatedAt: schedule.updated_at.toISOString(),
  };
}

/**
 * The due date of the schedule's period `key` when its row still tells it — the period it is at, or the one
 * just before — else null. A re-positioned schedule starts after it too: under a new time zone the same
 * due instant can fall on another local date, so the key alone would not see that it was charged.
 */
function dueAtOfPeriod(schedule: PermitSchedule, key: string): Date | null {
  if (schedule.period === key) return schedule.due_at;
  if (schedule.period_index === 0) return null;
  const previous = periodAt(cadenceOf(schedule), schedule.period_index - 1);
  return previous.key === key ? previous.dueAt : null;
}

/** The caller's permit, locked for the transaction; 404 when it is not the caller's. */
async function lockPermit(trx: Transaction<Database>, scope: Scope, permitId: string) {
  const permit = await trx
    .selectFrom("permits")
    .innerJoin("tenants", "tenants.id", "permits.tenant_id")
    .select(["permits.id", "permits.status", "permits.max_amount", "permits.currency", "permits.customer", "tenants.disabled"])
    .where("permits.id", "=", permitId)
    .where("permits.tenant_id", "=", scope.tenantId)
    .where("permits.environment", "=", scope.environment)
    .forUpdate("permits")
    .executeTakeFirst();
  if (!permit) throw new NotFoundError("Permit not found");
  return permit;
}

/**
 * Creates the permit's schedule, or replaces the one it has (see the module's rules). 404 for another
 * tenant's permit, 409 `permit_not_active` unless the permit is active, 400 when the amount exceeds the
 * permit's `maxAmount` or `timeZone` is not an IANA time zone.
 */
export async function putSchedule(deps: Pick<Deps, "db" | "now" | "sharedClock">, scope: Scope, permitId: string, input: ScheduleInput): Promise<ScheduleView> {
  const now = deps.now();
  return deps.db.transaction().execute(async (trx) => {
    // "Now" for the anchor and the period in progress: the earlier of this process's clock and the database's
    // (`db/shared-clock.ts`), so the first period is due at once for every worker's sweep. On a node whose clock
    // had jumped 184 s ahead it was due 184 s late.
    const from = await dueNow(deps, trx);
    const permit = await lockPermit(trx, scope, permitId);
    if (permit.status !== "active") throw new ConflictError(`The permit is ${permit.status}; only an active permit can have a schedule`, "permit_not_active");
    if (input.amount > permit.max_amount) throw new ValidationError([`amount must be at most the permit's maxAmount (${permit.max_amount})`]);

    const intervalCount = input.intervalCount ?? 1;
    const startAt = input.startAt === undefined ? undefined : new Date(input.startAt);
    const askedZone = input.timeZone === undefined ? undefined : canonicalTimeZone(input.timeZone);
    if (input.timeZone !== undefined && askedZone === undefined) throw new ValidationError(["timeZone must be an IANA time zone name, like Africa/Porto-Novo"]);
    // Locked after the permit, like a renewal charge's transaction: a charge job racing this PUT either
    // commits its charge first, or finds the schedule's new position and creates nothing.
    const existing = await trx.selectFrom("permit_schedules").selectAll().where("permit_id", "=", permitId).forUpdate().executeTakeFirst();
    const timeZone = askedZone ?? existing?.time_zone ?? defaultScheduleTimeZone(permit.customer);
    // The same anchor rule: the anchor stays unless a new startAt or cadence is asked.
    const keepsAnchor =
      existing !== undefined &&
      existing.interval === input.interval &&
      existing.interval_count === intervalCount &&
      (startAt === undefined || startAt.getTime() === existing.start_at.getTime());
    const sameCadence = keepsAnchor && existing.time_zone === timeZone;

    let row: PermitSchedule;
    if (existing && sameCadence && existing.status === "active") {
      row = await trx
        .updateTable("permit_schedules")
        .set({ amount: input.amount, description: input.description, updated_at: now })
        .where("id", "=", existing.id)
        .returningAll()
        .executeTakeFirstOrThrow();
    } else {
      const anchor = startAt ?? (keepsAnchor ? existing.start_at : from);
      const lastCharged = existing
        ? ((
            await trx
              .selectFrom("permit_charges")
              .select((eb) => eb.fn.max("period").as("period"))
              .where("schedule_id", "=", existing.id)
              .executeTakeFirst()
          )?.period ?? null)
        : null;
      const lastChargedDue = existing && lastCharged !== null ? dueAtOfPeriod(existing, lastCharged) : null;
      const first = startingPeriod({ anchor, interval: input.interval, count: intervalCount, timeZone }, from, lastCharged, lastChargedDue);
      const position = {
        amount: input.amount,
        interval: input.interval,
        interval_count: intervalCount,
        description: input.description,
        start_at: anchor,
        time_zone: timeZone,
        period_index: first.index,
        period: first.key,
        due_at: first.dueAt,
        attempt: 0,
        next_attempt_at: first.dueAt,
        status: "active" as const,
        past_due_at: null,
        cancelled_at: null,
        updated_at: now,
      };
      row = existing
        ? await trx.updateTable("permit_schedules").set(position).where("id", "=", existing.id).returningAll().executeTakeFirstOrThrow()
        : await trx
            .insertInto("permit_schedules")
            .values({ id: newId("sch"), permit_id: permitId, tenant_id: scope.tenantId, environment: scope.environment, created_at: now, ...position })
            .returningAll()
            .executeTakeFirstOrThrow();
    }
    return scheduleView(row, { currency: permit.currency, tenantDisabled: permit.disabled });
  });
}

/** The permit's schedule (also a cancelled or past-due one); 404 when the permit is not the caller's or has none. */
export async function getSchedule(deps: Pick<Deps, "db">, scope: Scope, permitId: string): Promise<ScheduleView> {
  const found = await deps.db
    .selectFrom("permits")
    .innerJoin("tenants", "tenants.id", "permits.tenant_id")
    .leftJoin("permit_schedules", "permit_schedules.permit_id", "permits.id")
    .select(["permits.currency", "tenants.disabled", "permit_schedules.id as schedule_id"])
    .where("permits.id", "=", permitId)
    .where("permits.tenant_id", "=", scope.tenantId)
    .where("permits.environment", "=", scope.environment)
    .executeTakeFirst();
  if (!found) throw new NotFoundError("Permit not found");
  if (!found.schedule_id) throw new NotFoundError("This permit has no schedule");
  const schedule = await deps.db.selectFrom("permit_schedules").selectAll().where("id", "=", found.schedule_id).executeTakeFirstOrThrow();
  return scheduleView(schedule, { currency: found.currency, tenantDisabled: found.disabled });
}

/** Cancels the permit's schedule (a no-op on one already cancelled); 404 when there is none. */
export async function cancelSchedule(deps: Pick<Deps, "db" | "now">, scope: Scope, permitId: string): Promise<ScheduleView> {
  const now = deps.now();
  return deps.db.transaction().execute(async (trx) => {
    const permit = await lockPermit(trx, scope, permitId);
    await cancelScheduleOfPermit(trx, permitId, now);
    const schedule = await trx.selectFrom("permit_schedules").selectAll().where("permit_id", "=", permitId).executeTakeFirst();
    if (!schedule) throw new NotFoundError("This permit has no schedule");
    return scheduleView(schedule, { currency: permit.currency, tenantDisabled: permit.disabled });
  });
}

/**
 * Cancels the permit's schedule, if it has one that is not cancelled yet, in the caller's transaction (the
 * one that revokes, expires or declines the permit). A charge job already running for it finds the schedule
 * cancelled (or the permit no longer active) and stops before creating a charge.
 */
export async function cancelScheduleOfPermit(trx: Transaction<Database>, permitId: string, now: Date): Promise<void> {
  // The UPDATE takes the schedule row's lock — after the permit's, which every caller holds — so a renewal
  // charge's transaction (permit, then schedule) either commits first or sees `cancelled` and creates nothing.
  await trx
    .updateTable("permit_schedules")
    .set({ status: "cancelled", cancelled_at: now, updated_at: now })
    .where("permit_id", "=", permitId)
    .where("status", "<>", "cancelled")
    .execute();
}

/**
 * A late success after `past_due`: in the transaction that settles a renewal charge as `succeeded` (its
 * caller locked the schedule row before the charge's), a schedule that went `past_due` on that charge's
 * period counts the period as paid and is `active` again, at the next period — or the one in progress when
 * more came due meanwhile, never the ones in between. The paid period is behind its position, so it is
 * never charged again. Any other schedule is left as it is: an active one is moved on by the sweep, a
 * cancelled one stays cancelled, one re-positioned by a PUT is elsewhere already. Returns whether it healed.
 */
export async function healPastDueSchedule(trx: Transaction<Database>, now: Date, charge: PermitChargeRow): Promise<boolean> {
  if (charge.schedule_id === null || charge.period === null || charge.status !== "succeeded") return false;
  const schedule = await trx
    .selectFrom("permit_schedules")
    .selectAll()
    .where("id", "=", charge.schedule_id)
    .where("status", "=", "past_due")
    .where("period", "=", charge.period)
    .forUpdate()
    .executeTakeFirst();
  if (!schedule) return false;
  const next = nextPeriodAfterPaid(cadenceOf(schedule), schedule.period_index, now);
  await trx
    .updateTable("permit_schedules")
    .set({
      status: "active",
      past_due_at: null,
      period_index: next.index,
      period: next.key,
      due_at: next.dueAt,
      attempt: 0,
      next_attempt_at: next.dueAt,
      updated_at: now,
    })
    .where("id", "=", schedule.id)
    .execute();
  return true;
}
