/**
 * Reconciliation, for the accountant: per kind (payments, refunds, payouts), provider, operator, state and
 * currency, the counts and totals of what was created in a window, and the records whose provider state
 * differs from ours. A tenant sees its own (`balance.reconciliation`); an operator every tenant's, in the
 * token's environment (`balance.allReconciliation`). Download CSV saves the same report as a file, from the
 * REST API's CSV answer (`GET /reports/reconciliation`, `GET /admin/reports/reconciliation`).
 */
import { useState } from "preact/hooks";
import type { Outputs } from "../api.ts";
import { Amount, DateTime, Empty, ErrorNote, Loading, providerLabel, StateBadge, useLoad } from "../components.tsx";
import { useDashboard } from "../context.ts";
import { daysAgo, dayValue, windowOf } from "../days.ts";
import { downloadCsv } from "../download.ts";

type Report = Outputs["balance"]["reconciliation"];

export function ReconciliationScreen({ scope }: { scope: "tenant" | "all" }) {
  const { api, session, sessionEnded, tenantId, t } = useDashboard();
  const today = dayValue(new Date());
  const [days, setDays] = useState({ from: dayValue(daysAgo(29)), to: today });
  const report = useLoad<Report>(() => {
    const window = windowOf(days.from, days.to);
    return scope === "all" ? api.balance.allReconciliation.query(window) : api.balance.reconciliation.query(window);
  }, [scope, days.from, days.to]);

  const apply = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setDays({ from: String(form.get("from")), to: String(form.get("to")) });
  };

  const [downloadError, setDownloadError] = useState<unknown>();
  const [downloading, setDownloading] = useState(false);
  const download = async () => {
    const window = windowOf(days.from, days.to);
    const query = new URLSearchParams(window).toString();
    setDownloading(true);
    setDownloadError(undefined);
    try {
      await downloadCsv({
        token: session.token,
        onUnauthorized: sessionEnded,
        ...(scope === "all"
          ? { path: `/admin/reports/reconciliation?${query}`, filename: `reconciliation-all-${days.from}-${days.to}.csv` }
          : { path: `/reports/reconciliation?${query}`, tenantId, filename: `reconciliation-${days.from}-${days.to}.csv` }),
      });
    } catch (caught) {
      setDownloadError(caught);
    } finally {
      setDownloading(false);
    }
  };

  return (
    <section aria-labelledby="reconciliation-title">
      <h1 id="reconciliation-title">{t("reconciliation.title")}</h1>
      <p class="hint">{scope === "all" ? t("reconciliation.hintAll") : t("reconciliation.hint")}</p>
      <form class="filters" onSubmit={apply}>
        <label>
          {t("reconciliation.from")}
          <input name="from" type="date" required defaultValue={days.from} max={today} />
        </label>
        <label>
          {t("reconciliation.to")}
          <input name="to" type="date" required defaultValue={days.to} max={today} />
        </label>
        <button type="submit">{t("filters.apply")}</button>
        <button type="button" class="secondary" disabled={downloading} onClick={download}>
          {t("reconciliation.download")}
        </button>
      </form>
      <p class="hint">{t("reconciliation.downloadHint")}</p>
      <ErrorNote error={downloadError} />
      <ErrorNote error={report.error} />
      {report.loading && !report.data ? <Loading /> : null}
      {report.data ? <ReportTables report={report.data} showTenant={scope === "all"} /> : null}
    </section>
  );
}

function ReportTables({ report, showTenant }: { report: Report; showTenant: boolean }) {
  const { t } = useDashboard();
  return (
    <>
      <h2>{t("reconciliation.totals")}</h2>
      {report.rows.length === 0 ? <Empty>{t("reconciliation.none")}</Empty> : null}
      {report.rows.length > 0 ? (
        <div class="table-wrap">
          <table class="list" data-testid="reconciliation-rows">
            <thead>
              <tr>
                <th scope="col">{t("reconciliation.kind")}</th>
                <th scope="col">{t("payments.provider")}</th>
                <th scope="col">{t("money.operator")}</th>
                <th scope="col">{t("payments.state")}</th>
                <th scope="col">{t("reconciliation.count")}</th>
                <th scope="col">{t("reconciliation.total")}</th>
              </tr>
            </thead>
            <tbody>
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
            </tbody>
          </table>
        </div>
      ) : null}
      <h2>{t("reconciliation.differences")}</h2>
      {report.differences.length === 0 ? <Empty>{t("reconciliation.noDifferences")}</Empty> : null}
      {report.differences.length > 0 ? (
        <div class="table-wrap">
          <table class="list" data-testid="reconciliation-differences">
            <thead>
              <tr>
                {showTenant ? <th scope="col">{t("tenants.id")}</th> : null}
                <th scope="col">{t("payments.id")}</th>
                <th scope="col">{t("reconciliation.ours")}</th>
                <th scope="col">{t("reconciliation.theirs")}</th>
                <th scope="col">{t("payments.amount")}</th>
                <th scope="col">{t("reconciliation.lastSeen")}</th>
              </tr>
            </thead>
            <tbody>
              {report.differences.map((difference) => (
                <tr key={difference.id}>
                  {showTenant ? <td class="mono">{difference.tenantId}</td> : null}
                  <td class="mono">{difference.id}</td>
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
            </tbody>
          </table>
        </div>
      ) : null}
    </>
  );
}
