/**
 * `GET /reports/overview?period=today|7d|30d` (issue 29): what the dashboard's home screen shows first — over
 * today, the last 7 or the last 30 days, in the viewer's time zone: the payments created, how many succeeded,
 * failed, were cancelled or are still pending, what they collected, and the success rate, in total, per hour
 * or day, per wallet (operator × country) and per provider; the refunds and payouts created; and what needs
 * the merchant's attention whatever the window (`overview-attention.ts`).
 *
 * Everything is grouped in PostgreSQL: one grouped read of the window's payments and one of its payouts, by
 * index (migration 0023's covering index for the payments, 0018's for the payouts), so a tenant with a million
 * payments reads only the window's rows, and the payments from the index alone; the payments' read hashes its groups in memory ({@link withReportMemory}). The balance is not here: it is `GET /balance`'s (the ledger, and
 * the providers' own balances), which the home screen shows beside this.
 *
 * Decisions:
 * - A payment counts in the window it was **created** in (as the reconciliation does).
 * - **Succeeded** counts the payments whose collection succeeded: `succeeded`, and `refunded` (collected,
 *   then given back — the refunds are shown apart). The success rate is succeeded / (succeeded + failed +
 *   cancelled): pending payments are left out, and a group with none of those has no rate (null).
 * - A payment's **operator** is the one `POST /payments` stored, else the one its provider's method names,
 *   else the method itself, else `unknown`; its **country** is its customer's, else the one of the customer's
 *   international number, else its method's, else `unknown`.
 *
 * @module
 */
import { type Kysely, sql } from "kysely";
import { Temporal } from "temporal-polyfill";
import { z } from "zod";
import type { Currency, Database, Environment } from "../../db/schema.ts";
import { ValidationError } from "../../errors.ts";
import { amountFrom, wholeUnits } from "../amounts.ts";
import { countryOfNumber } from "../countries.ts";
import type { Deps } from "../deps.ts";
import { CURRENCIES } from "../payments/payment-view.ts";
import { type Attention, attentionOf, attentionSchema } from "./overview-attention.ts";

export const OVERVIEW_PERIODS = ["today", "7d", "30d"] as const;
export type OverviewPeriod = (typeof OVERVIEW_PERIODS)[number];

const timestamp = z.string().meta({ format: "date-time" });

export const overviewQuery = {
  period: z
    .enum(OVERVIEW_PERIODS)
    .optional()
    .meta({ description: "today (since midnight, per hour), 7d or 30d (today and the days before it, per day); default 7d" }),
  timeZone: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .meta({ description: "The IANA time zone days and hours are counted in (e.g. Africa/Porto-Novo); default UTC", example: "Africa/Abidjan" }),
};

const currencyAmount = z.object({ currency: z.enum(CURRENCIES), amount: wholeUnits("Whole units") });

const outcomes = {
  payments: z.number().int().meta({ description: "Payments created in the window" }),
  succeeded: z.number().int().meta({ description: "Of them, collected (succeeded, or refunded after)" }),
  failed: z.number().int(),
  cancelled: z.number().int(),
  pending: z.number().int(),
  successRate: z.number().min(0).max(1).nullable().meta({ description: "succeeded / (succeeded + failed + cancelled); null when none of them ended yet" }),
  collected: z.array(currencyAmount).meta({ description: "Per currency, the amounts of the payments collected" }),
};

const outcomesSchema = z.object(outcomes);
type Outcomes = z.infer<typeof outcomesSchema>;

export const overviewSchema = z
  .object({
    environment: z.enum(["sandbox", "live"]),
    period: z.enum(OVERVIEW_PERIODS),
    timeZone: z.string(),
    from: timestamp.meta({ description: "Start of the window (inclusive): midnight in timeZone, today or 6 or 29 days before" }),
    to: timestamp.meta({ description: "End of the window (exclusive): now" }),
    bucket: z.enum(["hour", "day"]).meta({ description: "The length of each step of series" }),
    totals: outcomesSchema.meta({ description: "Every payment created in the window" }),
    series: z
      .array(z.object({ start: timestamp, ...outcomes }))
      .meta({ description: "Per hour (today) or day, every step of the window, in order (none left out)" }),
    wallets: z
      .array(z.object({ operator: z.string(), country: z.string().meta({ description: "ISO 3166-1 alpha-2, lower case, or unknown" }), ...outcomes }))
      .meta({ description: "Per wallet (operator × country), most payments first" }),
    providers: z.array(z.object({ provider: z.string(), label: z.string(), ...outcomes })).meta({ description: "Per provider, most payments first" }),
    moneyOut: z
      .array(
        z.object({
          purpose: z.enum(["refund", "payout"]),
          state: z.enum(["pending", "sent", "failed"]),
          currency: z.enum(CURRENCIES),
          count: z.number().int(),
          amount: wholeUnits("Sum of the amounts, whole units"),
        }),
      )
      .meta({ description: "The refunds and payouts created in the window, per state and currency" }),
    attention: attentionSchema,
  })
  .meta({ id: "Overview" });

export type Overview = z.infer<typeof overviewSchema>;

/** The window of a period in a time zone, and its steps. */
export function overviewWindow(period: OverviewPeriod, timeZone: string, now: Date): { from: Date; to: Date; bucket: "hour" | "day"; starts: Date[] } {
  let today: Temporal.ZonedDateTime;
  try {
    today = Temporal.Instant.fromEpochMilliseconds(now.getTime()).toZonedDateTimeISO(timeZone).startOfDay();
  } catch {
    throw new ValidationError([`timeZone ${JSON.stringify(timeZone)} is not a known IANA time zone`]);
  }
  const days = period === "today" ? 1 : period === "7d" ? 7 : 30;
  const first = today.subtract({ days: days - 1 });
  const bucket = period === "today" ? "hour" : "day";
  const starts: Date[] = [];
  for (let step = first; step.epochMilliseconds <= now.getTime(); step = step.add(bucket === "hour" ? { hours: 1 } : { days: 1 }))
    starts.push(new Date(step.epochMilliseconds));
  return { from: new Date(first.epochMilliseconds), to: now, bucket, starts };
}

interface PaymentGroup {
  bucket: Date;
  provider: string;
  operator: string | null;
  payment_method: string | null;
  /** The customer's country, or `phone:` and the first four characters of its phone (migration 0023). */
  report_country: string | null;
  state: string;
  currency: Currency;
  count: string | number;
  total: string | number | null;
}

/** The grouped read of the window's payments (also what the index test explains). */
export function paymentGroupsQuery(
  scope: { tenantId: string; environment: Environment },
  window: { from: Date; to: Date; bucket: "hour" | "day" },
  timeZone: string,
) {
  return sql<PaymentGroup>`
    select date_trunc(${window.bucket}, created_at, ${timeZone}) as bucket, provider, operator, payment_method, report_country,
           state, currency, count(*) as count, sum(amount) as total
      from payments
     where tenant_id = ${scope.tenantId} and environment = ${scope.environment}
       and created_at >= ${window.from} and created_at < ${window.to}
     group by 1, 2, 3, 4, 5, 6, 7`;
}

/**
 * The memory one grouped read may take to sort or hash (PostgreSQL's `work_mem`, 4 MB by default). The
 * planner cannot tell how few groups the window's payments make (a customer's country is an expression
 * over its JSON), expects nearly one per row, and with the default would sort a month of a large merchant's
 * payments on disk (about 6 MB for 80,000); with this it hashes them in memory, about a third faster.
 */
export const REPORT_WORK_MEM = "32MB";

/** Runs `read` in a transaction of its own whose `work_mem` is {@link REPORT_WORK_MEM} (`set local`: that transaction only). */
export function withReportMemory<T>(db: Kysely<Database>, read: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`set local work_mem = ${sql.lit(REPORT_WORK_MEM)}`.execute(trx);
    return read(trx);
  });
}

/** The grouped read of the window's refunds and payouts. */
export function moneyOutQuery(scope: { tenantId: string; environment: Environment }, window: { from: Date; to: Date }) {
  return sql<{ purpose: "refund" | "payout"; state: "pending" | "sent" | "failed"; currency: Currency; count: string | number; total: string | number | null }>`
    select purpose, state, currency, count(*) as count, sum(amount) as total
      from payouts
     where tenant_id = ${scope.tenantId} and environment = ${scope.environment}
       and created_at >= ${window.from} and created_at < ${window.to}
     group by 1, 2, 3
     order by 1, 2, 3`;
}

/** Counts that add up, and the amounts per currency. */
class Tally {
  payments = 0;
  succeeded = 0;
  failed = 0;
  cancelled = 0;
  pending = 0;
  private readonly collected = new Map<Currency, number>();

  add(state: string, currency: Currency, count: number, total: number): void {
    this.payments += count;
    if (state === "succeeded" || state === "refunded") {
      this.succeeded += count;
      this.collected.set(currency, (this.collected.get(currency) ?? 0) + total);
    } else if (state === "failed") this.failed += count;
    else if (state === "cancelled") this.cancelled += count;
    else this.pending += count;
  }

  view(): Outcomes {
    const ended = this.succeeded + this.failed + this.cancelled;
    return {
      payments: this.payments,
      succeeded: this.succeeded,
      failed: this.failed,
      cancelled: this.cancelled,
      pending: this.pending,
      successRate: ended === 0 ? null : this.succeeded / ended,
      collected: [...this.collected.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([currency, amount]) => ({ currency, amount })),
    };
  }
}

function tallyOf<K>(map: Map<K, Tally>, key: K): Tally {
  let tally = map.get(key);
  if (!tally) map.set(key, (tally = new Tally()));
  return tally;
}

/** Most payments first, then by name. */
function byVolume<T extends { payments: number }>(name: (row: T) => string) {
  return (a: T, b: T) => b.payments - a.payments || name(a).localeCompare(name(b));
}

/**
 * The overview of one tenant's environment over a period.
 *
 * @throws {ValidationError} for a time zone that is not an IANA one.
 * @example
 * ```ts
 * const overview = await overviewReport(deps, { tenantId, environment: "sandbox", period: "7d", timeZone: "Africa/Abidjan" });
 * overview.wallets[0]; // { operator: "mtn", country: "bj", payments: 12, succeeded: 10, …, successRate: 0.9 }
 * ```
 */
export async function overviewReport(
  deps: Deps,
  input: { tenantId: string; environment: Environment; period?: OverviewPeriod; timeZone?: string },
): Promise<Overview> {
  const period = input.period ?? "7d";
  const timeZone = input.timeZone ?? "UTC";
  const now = deps.now();
  const window = overviewWindow(period, timeZone, now);
  const scope = { tenantId: input.tenantId, environment: input.environment };
  const [paymentGroups, moneyOut, attention] = await Promise.all([
    withReportMemory(deps.db, (db) => paymentGroupsQuery(scope, window, timeZone).execute(db)),
    moneyOutQuery(scope, window).execute(deps.db),
    attentionOf(deps, scope),
  ]);

  const totals = new Tally();
  const steps = new Map<number, Tally>(window.starts.map((start) => [start.getTime(), new Tally()]));
  const wallets = new Map<string, Tally>();
  const providers = new Map<string, Tally>();
  for (const group of paymentGroups.rows) {
    const count = Number(group.count);
    const total = amountFrom(group.total);
    const method =
      group.payment_method === null ? undefined : deps.providers.find(group.provider)?.capabilities.methods.find((m) => m.method === group.payment_method);
    const operator = group.operator ?? method?.operator ?? group.payment_method ?? "unknown";
    const reported = group.report_country;
    const country = (reported?.startsWith("phone:") ? countryOfNumber(reported.slice("phone:".length)) : reported) ?? method?.country ?? "unknown";
    for (const tally of [
      totals,
      tallyOf(steps, new Date(group.bucket).getTime()),
      tallyOf(wallets, `${operator}\u0000${country}`),
      tallyOf(providers, group.provider),
    ])
      tally.add(group.state, group.currency, count, total);
  }

  return {
    environment: input.environment,
    period,
    timeZone,
    from: window.from.toISOString(),
    to: window.to.toISOString(),
    bucket: window.bucket,
    totals: totals.view(),
    series: [...steps.entries()].sort(([a], [b]) => a - b).map(([start, tally]) => ({ start: new Date(start).toISOString(), ...tally.view() })),
    wallets: [...wallets.entries()]
      .map(([key, tally]) => {
        const [operator, country] = key.split("\u0000") as [string, string];
        return { operator, country, ...tally.view() };
      })
      .sort(byVolume((row) => `${row.operator} ${row.country}`)),
    providers: [...providers.entries()]
      .map(([provider, tally]) => ({ provider, label: deps.providers.find(provider)?.label ?? provider, ...tally.view() }))
      .sort(byVolume((row) => row.provider)),
    moneyOut: moneyOut.rows.map((row) => ({
      purpose: row.purpose,
      state: row.state,
      currency: row.currency,
      count: Number(row.count),
      amount: amountFrom(row.total),
    })),
    attention: attention satisfies Attention,
  };
}
