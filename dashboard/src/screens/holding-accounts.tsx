/**
 * The Balance part of Balance and payouts (`balance.get`): the totals per currency, then each **holding
 * account** — where the money sits — in the merchant's words: Passerelle's account at a provider, shared by
 * its merchants (a payout or refund from it spends only what this merchant collected there), or the
 * merchant's own account at a provider, beside what that provider reports it holds (or why it could not be
 * read). The holding's code (`pooled:providerA`) is the API's; the page names the account instead.
 */
import { Fragment } from "preact";
import type { Outputs } from "../api.ts";
import { Amount, Empty, ErrorNote, type Loaded, Loading } from "../components.tsx";
import { useDashboard } from "../context.ts";
import { countryName } from "../i18n.ts";

type BalanceView = Outputs["balance"]["get"];
type HoldingAccount = BalanceView["accounts"][number];
type CurrencyLine = BalanceView["balances"][number];

export function BalanceSection({ balance }: { balance: Loaded<BalanceView> }) {
  const { t } = useDashboard();
  const data = balance.data;
  return (
    <>
      <h2>{t("money.balance")}</h2>
      <ErrorNote error={balance.error} />
      {balance.loading && !data ? <Loading /> : null}
      {data && data.balances.length === 0 && data.accounts.length === 0 ? <Empty>{t("money.noBalance")}</Empty> : null}
      {data && data.accounts.length > 0 ? <p class="hint">{t("money.accountsHint")}</p> : null}
      {data && data.balances.length > 0 ? (
        <div class="card money-card">
          <h3>{t("money.total")}</h3>
          <CurrencyFacts lines={data.balances} testid="balance" />
        </div>
      ) : null}
      {data && data.accounts.length > 0 ? (
        <ul class="cards card-grid" data-testid="holding-accounts">
          {data.accounts.map((account) => (
            <AccountCard key={account.holding} account={account} />
          ))}
        </ul>
      ) : null}
    </>
  );
}

/** Per currency, what is available and what is on its way out. */
function CurrencyFacts({ lines, testid }: { lines: CurrencyLine[]; testid?: string }) {
  const { t } = useDashboard();
  return (
    <dl class="facts" data-testid={testid}>
      {lines.map((line) => (
        <Fragment key={line.currency}>
          <dt>{t("money.available", { currency: line.currency })}</dt>
          <dd data-currency={line.currency} data-amount="available">
            <Amount amount={line.available} currency={line.currency} />
          </dd>
          <dt>{t("money.pending")}</dt>
          <dd data-amount="pending">
            <Amount amount={line.pending} currency={line.currency} />
          </dd>
        </Fragment>
      ))}
    </dl>
  );
}

function AccountCard({ account }: { account: HoldingAccount }) {
  const { t } = useDashboard();
  const provider = account.label;
  const titleId = `holding-${account.holding.replace(/[^A-Za-z0-9-]/g, "-")}`;
  return (
    <li class="card money-card" data-holding={account.holding} data-kind={account.kind} aria-labelledby={titleId}>
      <h3 id={titleId}>{account.kind === "pooled" ? t("money.account.pooled", { provider }) : t("money.account.own", { provider })}</h3>
      <p class="hint">{account.kind === "pooled" ? t("money.account.pooledHint", { provider }) : t("money.account.ownHint", { provider })}</p>
      {account.balances.length > 0 ? <CurrencyFacts lines={account.balances} /> : <p class="muted">{t("money.account.empty")}</p>}
      {account.kind === "own" ? <Reported provider={provider} reported={account.reported} /> : null}
    </li>
  );
}

/** What the provider says the merchant's own account holds; why it could not say, when it could not. */
function Reported({ provider, reported }: { provider: string; reported: HoldingAccount["reported"] }) {
  const { language, t } = useDashboard();
  if (reported === null) return <p class="muted">{t("money.reportedUnknown", { provider })}</p>;
  if (reported.error !== null)
    return (
      <p class="notice notice-warning" data-testid="reported-error">
        {t("money.reportedError", { provider })} <span class="error-message">{reported.error}</span>
      </p>
    );
  if (reported.balances.length === 0) return <p class="muted">{t("money.reportedNone", { provider })}</p>;
  return (
    <div class="reported" data-testid="reported">
      <p>{t("money.reported", { provider })}</p>
      <dl class="facts">
        {reported.balances.map((line) => (
          <Fragment key={`${line.currency}-${line.label ?? ""}`}>
            <dt>{line.label ? (/^[a-z]{2}$/i.test(line.label) ? countryName(language, line.label) : line.label) : line.currency}</dt>
            <dd data-currency={line.currency} data-label={line.label ?? undefined}>
              <Amount amount={line.amount} currency={line.currency} />
            </dd>
          </Fragment>
        ))}
      </dl>
    </div>
  );
}
