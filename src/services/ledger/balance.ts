/**
 * `GET /balance` and `GET /balance/entries`: the tenant's money as the ledger holds it (`ledger.ts`) — per
 * currency, what is available and what is pending on its way out — and, beside it, the balances the
 * providers report for the tenant's own accounts there (the service's pooled account is not the tenant's to
 * see: its share of it is the ledger's `available`).
 *
 * @module
 */
import { z } from "zod";
import type { Environment } from "../../db/schema.ts";
import { AppError, ValidationError } from "../../errors.ts";
import { type ProviderAccountRef, ProviderCallError } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { CURRENCIES } from "../payments/payment-view.ts";
import { POOLED_ACCOUNT } from "../payouts/record-money-out.ts";
import { balancesOf } from "./ledger.ts";

export const balanceSchema = z
  .object({
    environment: z.enum(["sandbox", "live"]),
    balances: z.array(
      z.object({
        currency: z.enum(CURRENCIES),
        available: z.number().int().meta({ description: "Collected, less what has gone out or is on its way (whole units)" }),
        pending: z.number().int().meta({ description: "Payouts and refunds sent to a provider and not final yet" }),
      }),
    ),
    providers: z
      .array(
        z.object({
          provider: z.string(),
          balances: z.array(z.object({ currency: z.enum(CURRENCIES), amount: z.number().int(), label: z.string().nullable() })),
          error: z.string().nullable().meta({ description: "Why the provider's balance could not be read, when it could not" }),
        }),
      )
      .meta({ description: "What each provider reports for the tenant's own account there (not for the service's pooled account)" }),
  })
  .meta({ id: "Balance" });

export type BalanceView = z.infer<typeof balanceSchema>;

/** The tenant's balance in one environment. */
export async function getBalance(deps: Deps, input: { tenantId: string; environment: Environment }): Promise<BalanceView> {
  const ours = await balancesOf(deps.db, input.tenantId, input.environment);
  const providers: BalanceView["providers"] = [];
  for (const provider of deps.providers.all) {
    const read = provider.payouts?.balances;
    if (!read) continue;
    let account: ProviderAccountRef;
    try {
      account = await provider.accountFor(deps, input.tenantId, input.environment);
    } catch (error) {
      if (error instanceof AppError) continue;
      throw error;
    }
    if (account.accountId === POOLED_ACCOUNT) continue;
    try {
      providers.push({ provider: provider.name, balances: await read(deps, input.tenantId, input.environment, account), error: null });
    } catch (error) {
      if (!(error instanceof ProviderCallError || error instanceof AppError)) throw error;
      providers.push({ provider: provider.name, balances: [], error: `${provider.label} did not answer its balance (${error.message})` });
    }
  }
  return { environment: input.environment, balances: ours, providers };
}

export const ledgerEntrySchema = z
  .object({
    id: z.string().meta({ description: "The entry's number, in the order entries were written" }),
    journal: z.string().meta({ description: "The movement it belongs to: <id>.collected, .reserved, .sent, .released or .fee" }),
    account: z.string().meta({ description: "available, pending, provider:<name> or fees" }),
    amount: z.number().int().meta({ description: "Signed, whole units: the legs of a movement sum to zero" }),
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
      amount: Number(row.amount),
      currency: row.currency,
      kind: row.kind,
      subjectId: row.subject_id,
      provider: row.provider,
      createdAt: row.created_at.toISOString(),
    })),
    nextCursor: rows.length > input.limit ? Buffer.from(`e${page[page.length - 1]!.id}`).toString("base64url") : null,
  };
}
