/**
 * The home screen, the first after sign-in (issue 29): over today, 7 or 30 days — counted in the viewer's
 * time zone — what was collected, how many payments, the success rate, the refunds and payouts, and the
 * balance; payments per hour or day, and the success rate per wallet (operator × country) and per
 * provider, as charts that are tables (`charts.tsx`); and first, what needs attention, each item a link to
 * the screen where it is dealt with. `reports.overview` groups it all in PostgreSQL; the balance is
 * `balance.get`'s totals, as Balance & payouts shows them.
 */
import { Fragment } from "preact";
import { OnboardingChecklist } from "./onboarding.tsx";
import { useState } from "preact/hooks";
import type { Outputs } from "../api.ts";
import { BarChart } from "../charts.tsx";
import { Amount, Empty, ErrorNote, Loading, providerLabel, StateBadge, useLoad } from "../components.tsx";
import { useDashboard } from "../context.ts";
import { countryName, formatAmount, formatPercent, type Language } from "../i18n.ts";
import { ListTable } from "../lists.tsx";
import { hashOf } from "../routes.ts";

type Overview = Outputs["reports"]["overview"];
type Period = Overview["period"];
type Outcomes = Overview["totals"];

const PERIODS = ["today", "7d", "30d"] as const satisfies readonly Period[];

/** The viewer's time zone, as the browser knows it (UTC when it does not say). */
function viewerTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

export function HomeScreen() {
  const { api, t } = useDashboard();
  const [period, setPeriod] = useState<Period>("7d");
  const timeZone = viewerTimeZone();
  const overview = useLoad(() => api.reports.overview.query({ period, timeZone }), [period]);
  const balance = useLoad(() => api.balance.get.query({}), []);
  const data = overview.data;
  return (
    <section aria-labelledby="home-title">
      <h1 id="home-title">{t("home.title")}</h1>
      <div class="filters">
        <fieldset class="period-switch">
          <legend>{t("home.period")}</legend>
          {PERIODS.map((option) => (
            <button type="button" key={option} aria-pressed={period === option} data-period={option} onClick={() => setPeriod(option)}>
              {t(`home.period.${option}`)}
            </button>
          ))}
        </fieldset>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            overview.reload();
            balance.reload();
          }}
        >
          {t("refresh")}
        </button>
      </div>
      <OnboardingChecklist />
      <ErrorNote error={overview.error} />
      {overview.loading && !data ? <Loading /> : null}
      {data ? <AttentionList attention={data.attention} /> : null}
      {data ? <KeyFigures overview={data} balance={balance.data} balanceError={balance.error} /> : null}
      {data ? <Charts overview={data} /> : null}
    </section>
  );
}

function AttentionList({ attention }: { attention: Overview["attention"] }) {
  const { language, t } = useDashboard();
  const items: { key: string; kind: string; text: string; links: { href: string; label: string }[] }[] = [];
  if (attention.stuckPayments.count > 0)
    items.push({
      key: "stuck",
      kind: "stuck",
      text: t("home.attention.stuck", { count: attention.stuckPayments.count }),
      links: attention.stuckPayments.oldest.map((payment) => ({
        href: hashOf({ screen: "payment", paymentId: payment.id }),
        label: t("home.attention.openPayment", { amount: formatAmount(language, payment.amount, payment.currency), id: payment.id }),
      })),
    });
  for (const endpoint of attention.webhookEndpoints)
    items.push({
      key: `webhook-${endpoint.id}`,
      kind: "webhook",
      text:
        endpoint.enabled && endpoint.failingSince
          ? t("home.attention.endpointFailing", { url: endpoint.url, since: dateOf(language, endpoint.failingSince) })
          : t("home.attention.endpointDisabled", { url: endpoint.url, reason: endpoint.disabledReason ?? "" }),
      links: [{ href: hashOf({ screen: "webhook", webhookId: endpoint.id }), label: t("home.attention.openWebhook") }],
    });
  for (const pending of attention.pendingMoneyOut)
    items.push({
      key: `pending-${pending.purpose}`,
      kind: `pending-${pending.purpose}`,
      text: t(pending.purpose === "payout" ? "home.attention.payouts" : "home.attention.refunds", {
        count: pending.count,
        since: dateOf(language, pending.oldestCreatedAt),
      }),
      links: [
        pending.purpose === "payout"
          ? { href: "#/money?list=payouts&state=pending", label: t("home.attention.openPayouts") }
          : { href: "#/money?list=refunds&state=pending", label: t("home.attention.openReports") },
      ],
    });
  for (const missing of attention.missingCredentials)
    items.push({
      key: `credentials-${missing.provider}`,
      kind: "credentials",
      text: t("home.attention.credentials", { provider: missing.label }),
      links: [{ href: hashOf({ screen: "settings" }), label: t("home.attention.openSettings", { provider: missing.label }) }],
    });
  return (
    <>
      <h2>{t("home.attention")}</h2>
      {items.length === 0 ? <Empty>{t("home.attention.none")}</Empty> : null}
      {items.length > 0 ? (
        <ul class="cards attention" data-testid="attention">
          {items.map((item) => (
            <li key={item.key} class="card notice-warning" data-attention={item.kind}>
              <p>{item.text}</p>
              <p class="actions">
                {item.links.map((link) => (
                  <a key={link.href} href={link.href}>
                    {link.label}
                  </a>
                ))}
              </p>
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}

function dateOf(language: Language, iso: string): string {
  return new Intl.DateTimeFormat(language === "fr" ? "fr-FR" : "en-GB", { dateStyle: "medium", timeStyle: "short" }).format(new Date(iso));
}

/** Amounts per currency, one after the other; "0" in the first currency when there are none. */
function Amounts({ amounts }: { amounts: { currency: "XOF" | "GNF"; amount: number }[] }) {
  if (amounts.length === 0) return <Amount amount={0} currency="XOF" />;
  return (
    <>
      {amounts.map((line, index) => (
        <Fragment key={line.currency}>
          {index > 0 ? " · " : null}
          <Amount amount={line.amount} currency={line.currency} />
        </Fragment>
      ))}
    </>
  );
}

function rateText(language: Language, t: ReturnType<typeof useDashboard>["t"], outcomes: Outcomes): string {
  return outcomes.successRate === null ? t("home.noRate") : formatPercent(language, outcomes.successRate);
}

function KeyFigures({ overview, balance, balanceError }: { overview: Overview; balance: Outputs["balance"]["get"] | undefined; balanceError: unknown }) {
  const { language, t } = useDashboard();
  const totals = overview.totals;
  const out = (purpose: "refund" | "payout") => {
    const rows = overview.moneyOut.filter((row) => row.purpose === purpose && row.state !== "failed");
    const byCurrency = new Map<"XOF" | "GNF", number>();
    for (const row of rows) byCurrency.set(row.currency, (byCurrency.get(row.currency) ?? 0) + row.amount);
    return { count: rows.reduce((sum, row) => sum + row.count, 0), amounts: [...byCurrency].map(([currency, amount]) => ({ currency, amount })) };
  };
  const refunds = out("refund");
  const payouts = out("payout");
  const ended = totals.succeeded + totals.failed + totals.cancelled;
  return (
    <>
      <h2>{t("home.figures")}</h2>
      <p class="hint">{t("home.window", { from: dateOf(language, overview.from) })}</p>
      <dl class="facts figures" data-testid="figures">
        <dt>{t("home.collected")}</dt>
        <dd data-figure="collected">
          <Amounts amounts={totals.collected} />
        </dd>
        <dt>{t("home.payments")}</dt>
        <dd data-figure="payments">{totals.payments}</dd>
        <dt>{t("home.successRate")}</dt>
        <dd data-figure="successRate">
          {rateText(language, t, totals)}
          {ended > 0 ? <span class="muted"> ({t("home.rateDetail", { succeeded: totals.succeeded, ended })})</span> : null}
        </dd>
        <dt>{t("home.refunds")}</dt>
        <dd data-figure="refunds">
          {refunds.count} · <Amounts amounts={refunds.amounts} />
        </dd>
        <dt>{t("home.payouts")}</dt>
        <dd data-figure="payouts">
          {payouts.count} · <Amounts amounts={payouts.amounts} />
        </dd>
        <dt>{t("home.balance")}</dt>
        <dd data-figure="balance">
          {balance ? (
            <Amounts amounts={balance.balances.map((line) => ({ currency: line.currency, amount: line.available }))} />
          ) : balanceError ? (
            <ErrorNote error={balanceError} />
          ) : (
            <span class="muted">…</span>
          )}
        </dd>
      </dl>
      <p class="hint">
        <a href={hashOf({ screen: "money" })}>{t("home.openMoney")}</a>
      </p>
    </>
  );
}

function Charts({ overview }: { overview: Overview }) {
  const { language, t } = useDashboard();
  const locale = language === "fr" ? "fr-FR" : "en-GB";
  const stepLabel = new Intl.DateTimeFormat(
    locale,
    overview.bucket === "hour" ? { hour: "2-digit", minute: "2-digit" } : { weekday: "short", day: "numeric", month: "short" },
  );
  const most = Math.max(1, ...overview.series.map((step) => step.payments));
  const walletName = (operator: string, country: string) =>
    `${operator === "unknown" ? t("home.unknownOperator") : operator.toUpperCase()} · ${country === "unknown" ? t("home.unknownCountry") : countryName(language, country)}`;
  const rateBars = (rows: (Outcomes & { key: string; name: string; data: Record<string, string> })[]) =>
    rows.map((row) => ({
      key: row.key,
      label: row.name,
      size: row.successRate ?? 0,
      value: `${rateText(language, t, row)} · ${row.succeeded}/${row.succeeded + row.failed + row.cancelled}`,
      data: row.data,
    }));
  const wallets = overview.wallets.map((wallet) => ({
    ...wallet,
    key: `${wallet.operator}/${wallet.country}`,
    name: walletName(wallet.operator, wallet.country),
    data: { wallet: `${wallet.operator}/${wallet.country}` },
  }));
  const providers = overview.providers.map((provider) => ({
    ...provider,
    key: provider.provider,
    name: providerLabel(provider.provider),
    data: { provider: provider.provider },
  }));
  return (
    <>
      <h2>{overview.bucket === "hour" ? t("home.series.hour") : t("home.series.day")}</h2>
      {overview.totals.payments === 0 ? <Empty>{t("home.noPayments")}</Empty> : null}
      <BarChart
        testid="series"
        caption={overview.bucket === "hour" ? t("home.series.hour") : t("home.series.day")}
        heads={[overview.bucket === "hour" ? t("home.hour") : t("home.day"), t("home.payments")]}
        bars={overview.series.map((step) => ({
          key: step.start,
          label: stepLabel.format(new Date(step.start)),
          size: step.payments / most,
          value:
            step.payments === 0
              ? "0"
              : `${step.payments} · ${step.collected.map((line) => formatAmount(language, line.amount, line.currency)).join(" · ") || formatAmount(language, 0, "XOF")}`,
          data: { start: step.start },
        }))}
      />

      {wallets.length > 0 ? (
        <>
          <h2>{t("home.byWallet")}</h2>
          <BarChart testid="wallet-rates" caption={t("home.byWallet")} heads={[t("home.wallet"), t("home.successRate")]} bars={rateBars(wallets)} />
          <OutcomeTable testid="wallets" head={t("home.wallet")} rows={wallets} />
          <h2>{t("home.byProvider")}</h2>
          <BarChart testid="provider-rates" caption={t("home.byProvider")} heads={[t("payments.provider"), t("home.successRate")]} bars={rateBars(providers)} />
          <OutcomeTable testid="providers" head={t("payments.provider")} rows={providers} />
        </>
      ) : null}

      <h2>{t("home.moneyOut")}</h2>
      {overview.moneyOut.length === 0 ? <Empty>{t("home.moneyOut.none")}</Empty> : null}
      {overview.moneyOut.length > 0 ? (
        <ListTable
          testid="money-out"
          columns={[
            { label: t("reconciliation.kind") },
            { label: t("payments.state") },
            { label: t("reconciliation.count") },
            { label: t("reconciliation.total") },
          ]}
        >
          {overview.moneyOut.map((row) => (
            <tr key={`${row.purpose}/${row.state}/${row.currency}`} data-purpose={row.purpose} data-state={row.state}>
              <td>{t(`reconciliation.kind.${row.purpose}`)}</td>
              <td>
                <StateBadge state={row.purpose === "refund" && row.state === "sent" ? "succeeded" : row.state} />
              </td>
              <td>{row.count}</td>
              <td>
                <Amount amount={row.amount} currency={row.currency} />
              </td>
            </tr>
          ))}
        </ListTable>
      ) : null}
      <p class="hint">{t("home.hint")}</p>
    </>
  );
}

/** The numbers behind a success-rate chart: per row, the payments by outcome and what they collected. */
function OutcomeTable({
  testid,
  head,
  rows,
}: {
  testid: string;
  head: string;
  rows: (Outcomes & { key: string; name: string; data: Record<string, string> })[];
}) {
  const { t } = useDashboard();
  return (
    <details class="numbers">
      <summary>{t("home.showTable")}</summary>
      <ListTable
        testid={testid}
        columns={[
          { label: head },
          { label: t("home.payments") },
          { label: t("state.succeeded") },
          { label: t("state.failed"), wide: true },
          { label: t("state.cancelled"), wide: true },
          { label: t("state.pending"), wide: true },
          { label: t("home.collected") },
        ]}
      >
        {rows.map((row) => (
          <tr key={row.key} {...Object.fromEntries(Object.entries(row.data).map(([name, value]) => [`data-${name}`, value]))}>
            <th scope="row">{row.name}</th>
            <td>{row.payments}</td>
            <td>{row.succeeded}</td>
            <td class="wide-only">{row.failed}</td>
            <td class="wide-only">{row.cancelled}</td>
            <td class="wide-only">{row.pending}</td>
            <td>
              <Amounts amounts={row.collected} />
            </td>
          </tr>
        ))}
      </ListTable>
    </details>
  );
}
