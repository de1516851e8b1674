/**
 * Reconciliation, for the accountant: per kind (payments, refunds, payouts), provider, operator, state and
 * currency, the counts and totals of what was created in a window, and the records whose provider state
 * differs from ours. A tenant sees its own (`balance.reconciliation`); an operator every tenant's, in the
 * token's environment (`balance.allReconciliation`), with Passerelle's pooled accounts beside what their
 * providers report (`pooled-accounts.tsx`). Download CSV saves the same report as a file, from the
 * REST API's CSV answer (`GET /reports/reconciliation`, `GET /admin/reports/reconciliation`). The differences are
 * a list paged as every list is (`balance.differences`, `balance.allDifferences`); the window and the page live in
 * the address (`#/reports?from=2026-11-01&to=2026-11-30&page=…`), so Back, a reload or a shared link shows the same.
 */
import type { Outputs } from "../api.ts";
import { Amount, DateTime, Empty, ErrorNote, Loading, providerLabel, StateBadge, useAction, useLoad } from "../components.tsx";
import { cursorOf, ListStates, ListTable, Pager, type Pages, useAddress, usePages } from "../lists.tsx";
import { PooledAccounts } from "./pooled-accounts.tsx";
import { useDashboard } from "../context.ts";
import { daysAgo, dayValue, windowOf } from "../days.ts";
import { downloadCsv } from "../download.ts";

type Report = Outputs["balance"]["reconciliation"];
type AllReport = Outputs["balance"]["allReconciliation"];
type DifferencePage = Outputs["balance"]["differences"];

export function ReconciliationScreen({ scope }: { scope: "tenant" | "all" }) {
  const { api, session, sessionEnded, tenantId, t } = useDashboard();
  const today = dayValue(new Date());
  const address = useAddress(scope === "all" ? "#/operator/reports" : "#/reports");
  const days = { from: address.query.get("from") ?? dayValue(daysAgo(29)), to: address.query.get("to") ?? today };
  const report = useLoad<Report | AllReport>(() => {
    const window = windowOf(days.from, days.to);
    return scope === "all" ? api.balance.allReconciliation.query(window) : api.balance.reconciliation.query(window);
  }, [scope, days.from, days.to]);
  const differences = usePages<DifferencePage>(
    (cursor) => {
      const query = { ...windowOf(days.from, days.to), limit: 20, ...cursorOf(cursor) };
      return scope === "all" ? api.balance.allDifferences.query(query) : api.balance.differences.query(query);
    },
    [scope, days.from, days.to],
    address.pages(),
  );

  // A new window starts the differences again at their first page.
  const apply = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    address.set({ from: String(form.get("from")), to: String(form.get("to")), page: undefined });
  };

  const downloading = useAction();
  const download = () => {
    const window = windowOf(days.from, days.to);
    const query = new URLSearchParams(window).toString();
    return downloading.run(() =>
      downloadCsv({
        token: session.token,
        onUnauthorized: sessionEnded,
        ...(scope === "all"
          ? { path: `/admin/reports/reconciliation?${query}`, filename: `reconciliation-all-${days.from}-${days.to}.csv` }
          : { path: `/reports/reconciliation?${query}`, tenantId, filename: `reconciliation-${days.from}-${days.to}.csv` }),
      }),
    );
  };

  return (
    <section aria-labelledby="reconciliation-title">
      <h1 id="reconciliation-title">{t("reconciliation.title")}</h1>
      <p class="hint">{scope === "all" ? t("reconciliation.hintAll") : t("reconciliation.hint")}</p>
      <form class="filters" onSubmit={apply} key={`${days.from}/${days.to}`}>
        <label>
          {t("reconciliation.from")}
          <input name="from" type="date" required defaultValue={days.from} max={today} />
        </label>
        <label>
          {t("reconciliation.to")}
          <input name="to" type="date" required defaultValue={days.to} max={today} />
        </label>
        <button type="submit">{t("filters.apply")}</button>
        <button type="button" class="secondary" disabled={downloading.busy} onClick={download}>
          {t("reconciliation.download")}
        </button>
      </form>
      <p class="hint">{t("reconciliation.downloadHint")}</p>
      <ErrorNote error={downloading.error} />
      <ErrorNote error={report.error} />
      {report.loading && !report.data ? <Loading /> : null}
      {report.data && "pooledAccounts" in report.data ? <PooledAccounts accounts={report.data.pooledAccounts} /> : null}
      {report.data ? <ReportTotals report={report.data} /> : null}
      <Differences pages={differences} showTenant={scope === "all"} />
    </section>
  );
}

function ReportTotals({ report }: { report: Report }) {
  const { t } = useDashboard();
  return (
    <>
      <h2>{t("reconciliation.totals")}</h2>
      {report.rows.length === 0 ? <Empty>{t("reconciliation.none")}</Empty> : null}
      {report.rows.length > 0 ? (
        <ListTable
          testid="reconciliation-rows"
          columns={[
            { label: t("reconciliation.kind") },
            { label: t("payments.provider") },
            { label: t("money.operator") },
            { label: t("payments.state") },
            { label: t("reconciliation.count") },
            { label: t("reconciliation.total") },
          ]}
        >
          {report.rows.map((row) => (
            <tr key={`${row.kind}/${row.provider}/${row.operator}/${row.state}/${row.currency}`} data-kind={row.kind} data-state={row.state}>
              <td>{t(`reconciliation.kind.${row.kind}`)}</td>
              <td>{providerLabel(row.provider)}</td>
              <td>{row.operator}</td>
              <td>
                <StateBadge state={row.state} />
              </td>
              <td>{row.count}</td>
              <td>
                <Amount amount={row.total} currency={row.currency} />
              </td>
            </tr>
          ))}
        </ListTable>
      ) : null}
    </>
  );
}

/** The records whose provider state differs from ours, a page at a time. */
function Differences({ pages, showTenant }: { pages: Pages<DifferencePage>; showTenant: boolean }) {
  const { t } = useDashboard();
  return (
    <>
      <h2>{t("reconciliation.differences")}</h2>
      <ListStates loaded={pages} items={(page) => page.data} empty={t("reconciliation.noDifferences")}>
        {(list) => (
          <ListTable
            testid="reconciliation-differences"
            columns={[
              ...(showTenant ? [{ label: t("tenants.id") }] : []),
              { label: t("payments.id") },
              { label: t("reconciliation.ours") },
              { label: t("reconciliation.theirs") },
              { label: t("payments.amount") },
              { label: t("reconciliation.lastSeen") },
            ]}
          >
            {list.map((difference) => (
              <tr key={difference.id}>
                {showTenant ? (
                  <td class="mono">
                    <span class="id" title={difference.tenantId}>
                      {difference.tenantId}
                    </span>
                  </td>
                ) : null}
                <td class="mono">
                  <span class="id" title={difference.id}>
                    {difference.id}
                  </span>
                </td>
                <td>
                  <StateBadge state={difference.ourState} />
                </td>
                <td>
                  {providerLabel(difference.provider)}: {difference.providerStatus}
                </td>
                <td>
                  <Amount amount={difference.amount} currency={difference.currency} />
                </td>
                <td>
                  <DateTime iso={difference.lastSeenAt} />
                </td>
              </tr>
            ))}
          </ListTable>
        )}
      </ListStates>
      <Pager pages={pages} />
    </>
  );
}
