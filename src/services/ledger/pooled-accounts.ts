/**
 * The service's pooled accounts, as the operator sees them (issue 24): per provider, environment and
 * currency, what the ledger says the service holds there for all its tenants (their `available` and
 * `pending` on `pooled:<provider>`), what the provider reports the account holds (read through the port),
 * and the difference (reported − held). A negative difference means the provider holds less than the
 * service owes its tenants there: `/admin/reports/reconciliation` shows it, the gauge
 * `passerelle_pooled_account_difference` carries it (refreshed by the audit job), and
 * `deploy/prometheus/alerts.yml` alerts on it. A positive one is the operator's own float.
 *
 * @module
 */
import { z } from "zod";
import type { Currency, Environment } from "../../db/schema.ts";
import { AppError } from "../../errors.ts";
import { ProviderCallError } from "../../providers/provider.ts";
import { amountFrom, wholeUnits } from "../amounts.ts";
import type { Deps } from "../deps.ts";
import { CURRENCIES } from "../payments/payment-view.ts";
import { parseHolding, POOLED_ACCOUNT, pooledHoldings } from "./ledger.ts";

export const pooledAccountSchema = z
  .object({
    provider: z.string(),
    label: z.string().meta({ description: "The provider's name for people" }),
    holding: z.string().meta({ example: "pooled:providerA" }),
    environment: z.enum(["sandbox", "live"]),
    currency: z.enum(CURRENCIES),
    held: wholeUnits("What the ledger says the service holds there for all its tenants (available and pending)"),
    reported: wholeUnits("What the provider reports the account holds")
      .nullable()
      .meta({ description: "What the provider reports the account holds; null when it could not be read" }),
    difference: wholeUnits("reported − held: below zero, the provider holds less than the service owes its tenants there").nullable().meta({
      description: "reported − held (null when the provider could not be read): below zero, the provider holds less than the service owes its tenants there",
    }),
    error: z.string().nullable().meta({ description: "Why the provider's balance could not be read, when it could not" }),
  })
  .meta({ id: "PooledAccount" });

export type PooledAccount = z.infer<typeof pooledAccountSchema>;

/**
 * The pooled accounts of one environment that hold money in the ledger, each beside its provider's balance.
 *
 * @example
 * ```ts
 * const [account] = await pooledAccounts(deps, "sandbox");
 * account?.difference; // 0 when the provider holds exactly what the tenants are owed
 * ```
 */
export async function pooledAccounts(deps: Deps, environment: Environment): Promise<PooledAccount[]> {
  const held = await pooledHoldings(deps.db, environment);
  const providers = [...new Set(held.map((line) => parseHolding(line.holding).provider))];
  const reports = new Map<string, { balances: Map<Currency, number> } | { error: string }>();
  await Promise.all(
    providers.map(async (name) => {
      const provider = deps.providers.find(name);
      const read = provider?.payouts?.balances;
      if (!provider || !read) {
        reports.set(name, { error: `${provider?.label ?? name} does not report its balances` });
        return;
      }
      try {
        const balances = new Map<Currency, number>();
        // The pooled account is the service's: no tenant's keys are involved in reading it.
        for (const line of await read(deps, "", environment, { accountId: POOLED_ACCOUNT, credentialVersion: null }))
          balances.set(line.currency, (balances.get(line.currency) ?? 0) + amountFrom(line.amount));
        reports.set(name, { balances });
      } catch (error) {
        if (!(error instanceof ProviderCallError || error instanceof AppError)) throw error;
        reports.set(name, { error: `${provider.label} did not answer its balance (${error.message})` });
      }
    }),
  );
  return held.map((line) => {
    const provider = parseHolding(line.holding).provider;
    const report = reports.get(provider)!;
    const reported = "balances" in report ? (report.balances.get(line.currency) ?? 0) : null;
    return {
      provider,
      label: deps.providers.find(provider)?.label ?? provider,
      holding: line.holding,
      environment: line.environment,
      currency: line.currency,
      held: line.held,
      reported,
      difference: reported === null ? null : reported - line.held,
      error: "error" in report ? report.error : null,
    };
  });
}
