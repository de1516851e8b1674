/**
 * `GET /reports/reconciliation?from=&to=`: what an accountant closing a month needs — per provider, operator,
 * state and currency, the counts and totals of payments, refunds and payouts created in `[from, to)`, and the
 * records whose provider state differs from ours (`differences.ts`, found by the sync schedule), last seen in
 * that window. A tenant reads its own; an operator every tenant's (or one). `Accept: text/csv` gets the same
 * as CSV (`reconciliationCsv`): one line per row, then one per difference.
 *
 * @module
 */
import { stringify } from "csv-stringify/sync";
import { z } from "zod";
import type { Selectable } from "kysely";
import type { Environment, ReconciliationDifferencesTable } from "../../db/schema.ts";
import { ValidationError } from "../../errors.ts";
import { amountFrom, wholeUnits } from "../amounts.ts";
import type { Deps } from "../deps.ts";
import { pooledAccounts, pooledAccountSchema } from "../ledger/pooled-accounts.ts";
import { CURRENCIES } from "../payments/payment-view.ts";

const timestamp = z.string().meta({ format: "date-time" });

export const reconciliationRowSchema = z
  .object({
    kind: z.enum(["payment", "refund", "payout"]),
    provider: z.string(),
    operator: z
      .string()
      .meta({ description: "The wallet's operator; for a payment, the one its method or channel names (`unknown` when the provider did not say)" }),
    state: z.string().meta({ description: "Our state (a refund's in its own words: succeeded for sent)" }),
    currency: z.enum(CURRENCIES),
    count: z.number().int(),
    total: wholeUnits("Sum of the amounts, whole units"),
  })
  .meta({ id: "ReconciliationRow" });

export const differenceSchema = z
  .object({
    tenantId: z.string(),
    kind: z.enum(["payment", "refund", "payout"]),
    id: z.string().meta({ description: "Our id of the record (pay_, rf_, po_)" }),
    provider: z.string(),
    ourState: z.string(),
    providerState: z.string().meta({ description: "The provider's state, in our words" }),
    providerStatus: z.string().meta({ description: "The provider's own status word" }),
    amount: wholeUnits("The record's amount, whole units"),
    currency: z.enum(CURRENCIES),
    firstSeenAt: timestamp,
    lastSeenAt: timestamp,
  })
  .meta({ id: "ReconciliationDifference" });

/** A stored difference as the reports show it ({@link differenceSchema}). */
export function differenceView(d: Selectable<ReconciliationDifferencesTable>): z.infer<typeof differenceSchema> {
  return {
    tenantId: d.tenant_id,
    kind: d.subject_kind,
    id: d.subject_id,
    provider: d.provider,
    ourState: d.our_state,
    providerState: d.provider_state,
    providerStatus: d.provider_status,
    amount: amountFrom(d.amount),
    currency: d.currency,
    firstSeenAt: d.first_seen_at.toISOString(),
    lastSeenAt: d.last_seen_at.toISOString(),
  };
}

export const reconciliationSchema = z
  .object({
    from: timestamp,
    to: timestamp,
    environment: z.enum(["sandbox", "live"]),
    rows: z.array(reconciliationRowSchema),
    differences: z.array(differenceSchema),
  })
  .meta({ id: "Reconciliation" });

export type Reconciliation = z.infer<typeof reconciliationSchema>;

/** The operator's report: the tenants' report, and the service's pooled accounts beside their providers' balances. */
export const adminReconciliationSchema = reconciliationSchema
  .extend({
    pooledAccounts: z.array(pooledAccountSchema).meta({
      description:
        "Per provider and currency, in the report's environment: what the ledger says the service holds on its pooled account for all tenants, what the provider reports, and the difference (now, whatever the window)",
    }),
  })
  .meta({ id: "AdminReconciliation" });

export type AdminReconciliation = z.infer<typeof adminReconciliationSchema>;

/** The query: a window of at most a year (default: the last 30 days). */
export const reconciliationQuery = {
  from: z.iso.datetime({ offset: true }).optional().meta({ description: "Start of the window (inclusive), RFC 3339; default 30 days before `to`" }),
  to: z.iso.datetime({ offset: true }).optional().meta({ description: "End of the window (exclusive), RFC 3339; default now" }),
};

/** The operator of a payment: what its provider's methods say of its method, or the channel it reported. */
function operatorOf(deps: Pick<Deps, "providers">, provider: string, method: string | null): string {
  if (method === null) return "unknown";
  const known = deps.providers.find(provider)?.capabilities.methods.find((m) => m.method === method);
  return known?.operator ?? method;
}

/**
 * The window a report or its differences cover: `[from, to)`, by default the 30 days before now.
 *
 * @throws {ValidationError} for a window that ends before it starts or spans more than a year.
 */
export function reconciliationWindow(deps: Pick<Deps, "now">, input: { from?: string | undefined; to?: string | undefined }): { from: Date; to: Date } {
  const to = input.to !== undefined ? new Date(input.to) : deps.now();
  const from = input.from !== undefined ? new Date(input.from) : new Date(to.getTime() - 30 * 86_400_000);
  if (from >= to) throw new ValidationError(["from must be before to"]);
  if (to.getTime() - from.getTime() > 366 * 86_400_000) throw new ValidationError(["the window from–to must not exceed 366 days"]);
  return { from, to };
}

/**
 * The report of one environment, for one tenant or (`tenantId` undefined, operators only) every tenant.
 *
 * @throws {ValidationError} for a window that ends before it starts or spans more than a year.
 */
export async function reconciliationReport(
  deps: Pick<Deps, "db" | "providers" | "now">,
  input: { tenantId?: string; environment: Environment; from?: string; to?: string },
): Promise<Reconciliation> {
  const { from, to } = reconciliationWindow(deps, input);

  let payments = deps.db
    .selectFrom("payments")
    .select((eb) => ["provider", "payment_method", "state", "currency", eb.fn.countAll<string>().as("count"), eb.fn.sum<string>("amount").as("total")])
    .where("environment", "=", input.environment)
    .where("created_at", ">=", from)
    .where("created_at", "<", to)
    .groupBy(["provider", "payment_method", "state", "currency"]);
  let payouts = deps.db
    .selectFrom("payouts")
    .select((eb) => ["purpose", "provider", "operator", "state", "currency", eb.fn.countAll<string>().as("count"), eb.fn.sum<string>("amount").as("total")])
    .where("environment", "=", input.environment)
    .where("created_at", ">=", from)
    .where("created_at", "<", to)
    .groupBy(["purpose", "provider", "operator", "state", "currency"]);
  let differences = deps.db
    .selectFrom("reconciliation_differences")
    .selectAll()
    .where("environment", "=", input.environment)
    .where("last_seen_at", ">=", from)
    .where("last_seen_at", "<", to)
    .orderBy("last_seen_at", "desc")
    .limit(1000);
  if (input.tenantId !== undefined) {
    payments = payments.where("tenant_id", "=", input.tenantId);
    payouts = payouts.where("tenant_id", "=", input.tenantId);
    differences = differences.where("tenant_id", "=", input.tenantId);
  }
  const [paymentRows, payoutRows, differenceRows] = await Promise.all([payments.execute(), payouts.execute(), differences.execute()]);

  // Payments grouped by method, re-grouped by the operator each method names.
  const rows = new Map<string, Reconciliation["rows"][number]>();
  const add = (row: Reconciliation["rows"][number]) => {
    const key = [row.kind, row.provider, row.operator, row.state, row.currency].join("\u0000");
    const seen = rows.get(key);
    if (seen) {
      seen.count += row.count;
      seen.total += row.total;
    } else rows.set(key, { ...row });
  };
  for (const r of paymentRows)
    add({
      kind: "payment",
      provider: r.provider,
      operator: operatorOf(deps, r.provider, r.payment_method),
      state: r.state,
      currency: r.currency,
      count: Number(r.count),
      total: amountFrom(r.total),
    });
  for (const r of payoutRows)
    add({
      kind: r.purpose,
      provider: r.provider,
      operator: r.operator,
      state: r.purpose === "refund" && r.state === "sent" ? "succeeded" : r.state,
      currency: r.currency,
      count: Number(r.count),
      total: amountFrom(r.total),
    });
  const sorted = [...rows.values()].sort((a, b) =>
    [a.kind, a.provider, a.operator, a.state, a.currency].join("\u0000").localeCompare([b.kind, b.provider, b.operator, b.state, b.currency].join("\u0000")),
  );
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    environment: input.environment,
    rows: sorted,
    differences: differenceRows.map(differenceView),
  };
}

/** The operator's report of one environment: {@link reconciliationReport} for every tenant (or one), and the pooled accounts. */
export async function adminReconciliationReport(
  deps: Deps,
  input: { tenantId?: string; environment: Environment; from?: string; to?: string },
): Promise<AdminReconciliation> {
  const [report, pooled] = await Promise.all([reconciliationReport(deps, input), pooledAccounts(deps, input.environment)]);
  return { ...report, pooledAccounts: pooled };
}

/**
 * The report as CSV: a `section` column tells totals (`total`) from differences (`difference`). Cells hold
 * text a provider reported (a channel name as the operator, a status word), which a spreadsheet would run as
 * a formula: csv-stringify's `escape_formulas` puts a `'` before a text cell beginning with `=`, `+`, `-`,
 * `@`, a tab or a CR (and their full-width forms), as OWASP's CSV injection advice has it, and a cell holding
 * `;` is quoted, so a spreadsheet that splits on `;` cannot start a cell inside it either. Numbers are left
 * as they are.
 */
export function reconciliationCsv(output: unknown): string {
  const report = output as Reconciliation & Partial<Pick<AdminReconciliation, "pooledAccounts">>;
  const header = [
    "section",
    "kind",
    "provider",
    "operator",
    "state",
    "currency",
    "count",
    "total",
    "id",
    "tenant_id",
    "provider_state",
    "provider_status",
    "last_seen_at",
    "reported",
    "difference",
  ];
  const lines: (string | number)[][] = [header];
  for (const r of report.rows) lines.push(["total", r.kind, r.provider, r.operator, r.state, r.currency, r.count, r.total, "", "", "", "", "", "", ""]);
  for (const d of report.differences)
    lines.push([
      "difference",
      d.kind,
      d.provider,
      "",
      d.ourState,
      d.currency,
      1,
      d.amount,
      d.id,
      d.tenantId,
      d.providerState,
      d.providerStatus,
      d.lastSeenAt,
      "",
      "",
    ]);
  // The operator's report: each pooled account, `total` what the ledger says it holds for all tenants, `id` the holding.
  for (const a of report.pooledAccounts ?? [])
    lines.push(["pooled_account", "", a.provider, "", "", a.currency, "", a.held, a.holding, "", "", a.error ?? "", "", a.reported ?? "", a.difference ?? ""]);
  return stringify(lines, { escape_formulas: true, quoted_match: ";" });
}
