/**
 * `GET /balance` and `GET /balance/entries`: the tenant's money as the ledger holds it (`ledger.ts`), per
 * **holding account** — where the money sits: the service's pooled account at a provider, or the tenant's own
 * account there — and currency: what is available there and what is pending on its way out; beside an own
 * account, the balance its provider reports (the pooled account's balance is the operator's to see:
 * `/admin/reports/reconciliation`); and the totals over every holding.
 *
 * @module
 */
import { z } from "zod";
import type { Currency, Environment } from "../../db/schema.ts";
import { AppError, ValidationError } from "../../errors.ts";
import { type ProviderAccountRef, ProviderCallError } from "../../providers/provider.ts";
import { amountFrom, wholeUnits } from "../amounts.ts";
import type { Deps } from "../deps.ts";
import { CURRENCIES } from "../payments/payment-view.ts";
import { balancesOf, type HoldingBalance, holdingOf, parseHolding } from "./ledger.ts";

const currencyBalance = z.object({
  currency: z.enum(CURRENCIES),
  available: wholeUnits("Collected, less what has gone out or is on its way (whole units)"),
  pending: wholeUnits("Payouts and refunds sent to a provider and not final yet"),
});

export const balanceSchema = z
  .object({
    environment: z.enum(["sandbox", "live"]),
    balances: z.array(currencyBalance).meta({ description: "Per currency, the totals over every holding account" }),
    accounts: z
      .array(
        z.object({
          holding: z
            .string()
            .meta({ description: "Where the money sits: pooled:<provider> (the service's account) or own:<provider> (yours)", example: "pooled:providerA" }),
          kind: z.enum(["pooled", "own"]).meta({
            description:
              "pooled: the service's account at the provider, shared by its tenants (a payout from it spends what you hold there); own: your account at the provider (it refuses what it cannot pay)",
          }),
          provider: z.string(),
          label: z.string().meta({ description: "The provider's name for people" }),
          balances: z.array(currencyBalance),
          reported: z
            .object({
              balances: z.array(z.object({ currency: z.enum(CURRENCIES), amount: wholeUnits("What the provider holds"), label: z.string().nullable() })),
              error: z.string().nullable().meta({ description: "Why the provider's balance could not be read, when it could not" }),
            })
            .nullable()
            .meta({ description: "An own account: what its provider reports it holds (null for a pooled account, or a provider that does not tell)" }),
        }),
      )
      .meta({ description: "Each holding account the tenant has money on or can pay out from, pooled ones first" }),
  })
  .meta({ id: "Balance" });

export type BalanceView = z.infer<typeof balanceSchema>;

/** Per currency, the sums of some holdings' balances. */
function totals(lines: readonly HoldingBalance[]): BalanceView["balances"] {
  const byCurrency = new Map<Currency, { currency: Currency; available: number; pending: number }>();
  for (const line of lines) {
    const total = byCurrency.get(line.currency) ?? { currency: line.currency, available: 0, pending: 0 };
    total.available += line.available;
    total.pending += line.pending;
    byCurrency.set(line.currency, total);
  }
  return [...byCurrency.values()].sort((a, b) => a.currency.localeCompare(b.currency));
}

/** What a provider reports for the tenant's own account there; null when it does not tell. */
async function reportedBalance(deps: Deps, tenantId: string, environment: Environment, providerName: string, account: ProviderAccountRef) {
  const provider = deps.providers.find(providerName);
  const read = provider?.payouts?.balances;
  if (!provider || !read) return null;
  try {
    const balances = await read(deps, tenantId, environment, account);
    return { balances: balances.map((b) => ({ currency: b.currency, amount: amountFrom(b.amount), label: b.label })), error: null };
  } catch (error) {
    if (!(error instanceof ProviderCallError || error instanceof AppError)) throw error;
    return { balances: [], error: `${provider.label} did not answer its balance (${error.message})` };
  }
}

/** Beside an own account: what its provider reports, or why it cannot (its keys removed); null when the provider does not tell. */
async function ownReported(deps: Deps, input: { tenantId: string; environment: Environment }, providerName: string, account: ProviderAccountRef | null) {
  if (account !== null) return reportedBalance(deps, input.tenantId, input.environment, providerName, account);
  const provider = deps.providers.find(providerName);
  if (!provider?.payouts?.balances) return null;
  return { balances: [], error: `The tenant's ${provider.label} keys for this environment are no longer stored: the balance cannot be read` };
}

/** The tenant's balance in one environment: every holding it has entries on, and every account it can pay out from now. */
export async function getBalance(deps: Deps, input: { tenantId: string; environment: Environment }): Promise<BalanceView> {
  const lines = await balancesOf(deps.db, input.tenantId, input.environment);
  const accounts = new Map<string, ProviderAccountRef | null>(lines.map((line) => [line.holding, null]));
  for (const provider of deps.providers.all) {
    if (!provider.capabilities.payout && !lines.some((line) => parseHolding(line.holding).provider === provider.name)) continue;
    try {
      const account = await provider.accountFor(deps, input.tenantId, input.environment);
      accounts.set(holdingOf(provider.name, account.accountId), account);
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
    }
  }
  const holdings = [...accounts.keys()].sort((a, b) => {
    const [ka, kb] = [parseHolding(a), parseHolding(b)];
    return ka.kind === kb.kind ? ka.provider.localeCompare(kb.provider) : ka.kind === "pooled" ? -1 : 1;
  });
  const views = await Promise.all(
    holdings.map(async (holding) => {
      const { kind, provider } = parseHolding(holding);
      const account = accounts.get(holding) ?? null;
      return {
        holding,
        kind,
        provider,
        label: deps.providers.find(provider)?.label ?? provider,
        balances: totals(lines.filter((line) => line.holding === holding)),
        reported: kind === "own" ? await ownReported(deps, input, provider, account) : null,
      };
    }),
  );
  return { environment: input.environment, balances: totals(lines), accounts: views };
}

export const ledgerEntrySchema = z
  .object({
    id: z.string().meta({ description: "The entry's number, in the order entries were written" }),
    journal: z.string().meta({ description: "The movement it belongs to: <id>.collected, .reserved, .sent, .released or .fee" }),
    account: z.string().meta({ description: "available, pending, provider:<name> or fees" }),
    holding: z.string().meta({ description: "Where the money sits: pooled:<provider> (the service's account) or own:<provider> (the tenant's)" }),
    amount: wholeUnits("Signed, whole units: the legs of a movement sum to zero"),
    currency: z.enum(CURRENCIES),
    kind: z.enum(["payment", "payout", "refund", "fee"]),
    subjectId: z.string().meta({ description: "The payment, payout or refund that moved the money" }),
    provider: z.string(),
    createdAt: z.string().meta({ format: "date-time" }),
  })
  .meta({ id: "LedgerEntry" });

/** One page of the tenant's ledger entries, newest first. */
export async function listLedgerEntries(
  deps: Pick<Deps, "db">,
  input: { tenantId: string; environment: Environment; limit: number; cursor?: string; subjectId?: string },
): Promise<{ data: z.infer<typeof ledgerEntrySchema>[]; nextCursor: string | null }> {
  let query = deps.db.selectFrom("ledger_entries").selectAll().where("tenant_id", "=", input.tenantId).where("environment", "=", input.environment);
  if (input.subjectId !== undefined) query = query.where("subject_id", "=", input.subjectId);
  if (input.cursor !== undefined) {
    const decoded = /^[A-Za-z0-9_-]+$/.test(input.cursor) ? Buffer.from(input.cursor, "base64url").toString("utf8") : "";
    if (!/^e\d{1,18}$/.test(decoded)) throw new ValidationError(["cursor must be a nextCursor returned by an earlier page"]);
    query = query.where("id", "<", decoded.slice(1));
  }
  const rows = await query
    .orderBy("id", "desc")
    .limit(input.limit + 1)
    .execute();
  const page = rows.slice(0, input.limit);
  return {
    data: page.map((row) => ({
      id: String(row.id),
      journal: row.journal,
      account: row.account,
      holding: row.holding,
      amount: amountFrom(row.amount),
      currency: row.currency,
      kind: row.kind,
      subjectId: row.subject_id,
      provider: row.provider,
      createdAt: row.created_at.toISOString(),
    })),
    nextCursor: rows.length > input.limit ? Buffer.from(`e${page[page.length - 1]!.id}`).toString("base64url") : null,
  };
}
