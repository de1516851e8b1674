/**
 * The operator's view of Passerelle's pooled accounts, on Reconciliation (`balance.allReconciliation`'s
 * `pooledAccounts`): per provider and currency, what the ledger says the service holds there for all its
 * merchants, what the provider reports, and the difference. Below zero the provider holds less than the
 * service owes its merchants: the row and a note above the table say so in words. A balance the provider
 * did not give shows why.
 */
import type { Outputs } from "../api.ts";
import { Amount, Empty, providerLabel } from "../components.tsx";
import { ListTable } from "../lists.tsx";
import { useDashboard } from "../context.ts";
import { formatAmount } from "../i18n.ts";

type PooledAccount = Outputs["balance"]["allReconciliation"]["pooledAccounts"][number];

export function PooledAccounts({ accounts }: { accounts: PooledAccount[] }) {
  const { language, t } = useDashboard();
  const short = accounts.filter((account) => account.difference !== null && account.difference < 0);
  return (
    <section aria-labelledby="pooled-title">
      <h2 id="pooled-title">{t("pooled.title")}</h2>
      <p class="hint">{t("pooled.hint")}</p>
      {short.map((account) => (
        <p key={`${account.holding}/${account.currency}`} class="notice notice-warning" data-testid="pooled-short">
          {t("pooled.shortNotice", {
            provider: providerLabel(account.provider),
            currency: account.currency,
            amount: formatAmount(language, -account.difference!, account.currency),
          })}
        </p>
      ))}
      {accounts.length === 0 ? <Empty>{t("pooled.none")}</Empty> : null}
      {accounts.length > 0 ? (
        <ListTable
          testid="pooled-accounts"
          columns={[{ label: t("pooled.account") }, { label: t("pooled.held") }, { label: t("pooled.reported") }, { label: t("pooled.difference") }]}
        >
          {accounts.map((account) => {
            const isShort = account.difference !== null && account.difference < 0;
            return (
              <tr
                key={`${account.holding}/${account.currency}`}
                class={isShort ? "row-warning" : undefined}
                data-provider={account.provider}
                data-currency={account.currency}
                data-short={String(isShort)}
              >
                <td>
                  {providerLabel(account.provider)}
                  <div class="muted">{account.currency}</div>
                </td>
                <td data-amount="held">
                  <Amount amount={account.held} currency={account.currency} />
                </td>
                <td data-amount="reported">
                  {account.reported === null ? (
                    <>
                      <span class="badge badge-failed">{t("pooled.unreadable")}</span>
                      {account.error ? <div class="muted error-message">{account.error}</div> : null}
                    </>
                  ) : (
                    <Amount amount={account.reported} currency={account.currency} />
                  )}
                </td>
                <td data-amount="difference">
                  {account.difference === null ? (
                    <span class="muted">—</span>
                  ) : (
                    <span class="amount">{signed(formatAmount(language, Math.abs(account.difference), account.currency), account.difference)}</span>
                  )}
                  {isShort ? <div class="warning-text">{t("pooled.short")}</div> : null}
                </td>
              </tr>
            );
          })}
        </ListTable>
      ) : null}
    </section>
  );
}

/** `300 FCFA` as `+300 FCFA` or `−300 FCFA` (a true minus sign) by the sign of `value`; zero as it is. */
function signed(formatted: string, value: number): string {
  return value > 0 ? `+${formatted}` : value < 0 ? `\u2212${formatted}` : formatted;
}
