/**
 * The clock of the times that order or lease work across processes: a delivery's `next_attempt_at` and its
 * lease, an idempotency key's lock and expiry. On a fleet each process has its own clock, and one that has
 * jumped (a host whose time was stepped; the fault campaign's `clock-jump`) dated such times by it: an API
 * node 184 s ahead wrote deliveries that the workers' sweeps did not find due for 184 s, and a worker ahead
 * took others' leases for over. These times are therefore written and compared on the database's clock
 * (`now()`, the one clock every process shares), as a payout's lease already was
 * (`services/payouts/advance-payout.ts`).
 *
 * A gateway on an injected clock — a test's virtual time (`startTestGateway`'s `time`) or a fixed `now` —
 * keeps that clock for them instead ({@link SharedClockDeps.sharedClock} absent): every process of such a
 * test shares it, and a test moves it forward to make a retry due or a lock run out. `createGateway` sets
 * `sharedClock: "database"` when the gateway runs on the machine's clock or the fault campaign's offset clock.
 *
 * The database's time is cut to whole milliseconds: a lease or lock read back into a `Date` (milliseconds)
 * fences later writes by equality (`locked_until = …`), which a microsecond value would never match.
 *
 * Times that are business data or records stay on the process's clock: a record's `created_at`, an event's
 * date, a merchant's or a schedule's due dates.
 *
 * @example
 * ```ts
 * await deps.db.updateTable("deliveries").set({ next_attempt_at: sharedNow(deps) })
 *   .where("locked_until", "<", sharedNow(deps)).execute();
 * // precompiled statements take the value, null for the database's clock:
 * const due = precompile<{ now: Date | null }>()((db, p) => db.selectFrom("deliveries").selectAll().where("next_attempt_at", "<=", sharedNowOf(p.now)));
 * await due(deps.db, { now: sharedNowValue(deps) });
 * ```
 *
 * @module
 */
import { type Kysely, type RawBuilder, sql, type Transaction } from "kysely";
import type { Database } from "./schema.ts";

/** What the shared clock is read from. */
export interface SharedClockDeps {
  now: () => Date;
  /** `"database"`: its `now()`; absent: `now()` of these deps (a test's injected clock). */
  sharedClock?: "database";
}

/** The value a statement takes for the shared clock: the injected clock's time, or null for the database's `now()`. */
export function sharedNowValue(deps: SharedClockDeps): Date | null {
  return deps.sharedClock === "database" ? null : deps.now();
}

/** The shared clock's time in SQL from a value of {@link sharedNowValue} (a precompiled statement's stand-in). */
export function sharedNowOf(value: Date | null | unknown): RawBuilder<Date> {
  return sql<Date>`date_trunc('milliseconds', coalesce(${value}::timestamptz, now()))`;
}

/** The shared clock's time plus `ms` (a stand-in or a number) in SQL. */
export function sharedNowPlusOf(value: Date | null | unknown, ms: number | unknown): RawBuilder<Date> {
  return sql<Date>`(date_trunc('milliseconds', coalesce(${value}::timestamptz, now())) + ${ms}::int8 * interval '1 millisecond')`;
}

/** The shared clock's time in SQL. */
export function sharedNow(deps: SharedClockDeps): RawBuilder<Date> {
  return sharedNowOf(sharedNowValue(deps));
}

/** The shared clock's time plus `ms` in SQL. */
export function sharedNowPlus(deps: SharedClockDeps, ms: number): RawBuilder<Date> {
  return sharedNowPlusOf(sharedNowValue(deps), Math.round(ms));
}

/**
 * The shared clock's time, read: the database's `now()` (one round trip), or a test's injected clock. For work
 * that decides in the process what is due — the renewal sweep picks the schedules due and the period in
 * progress — so that a worker whose clock ran ahead does not charge early.
 */
export async function readSharedNow(deps: SharedClockDeps, db: Kysely<Database> | Transaction<Database>): Promise<Date> {
  if (deps.sharedClock !== "database") return deps.now();
  const { rows } = await sql<{ now: Date }>`select date_trunc('milliseconds', now()) as now`.execute(db);
  return new Date(rows[0]!.now);
}

/**
 * The earlier of the process's clock and the database's (when the database's is the shared clock): a time from
 * which something is due at once on every clock — a renewal schedule's anchor when the merchant gives none. On a
 * test's injected clock, that clock. One round trip on the database's clock.
 */
export async function dueNow(deps: SharedClockDeps, db: Kysely<Database> | Transaction<Database>): Promise<Date> {
  const now = deps.now();
  if (deps.sharedClock !== "database") return now;
  return new Date(Math.min((await readSharedNow(deps, db)).getTime(), now.getTime()));
}
