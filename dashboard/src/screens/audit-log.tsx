/**
 * The audit log (issue 30 points 5 and 6): every change or attempt — who, what, when, from where, the outcome —
 * newest first, filtered by action, person or key, and outcome; the shop's own (`auditLog.list`) or, on the
 * operator's side, every shop's (`admin.auditLog`). Offered to the shop's owner and the operator's staff.
 */
import { useState } from "preact/hooks";
import { DateTime } from "../components.tsx";
import { useDashboard } from "../context.ts";
import type { MessageKey } from "../i18n.ts";
import { cursorOf, FoldedFilters, ListStates, ListTable, Pager, usePages } from "../lists.tsx";

interface Filters {
  action?: string;
  actor?: string;
  outcome?: string;
}

export function AuditLogScreen({ scope }: { scope: "shop" | "all" }) {
  const { api, t } = useDashboard();
  const [filters, setFilters] = useState<Filters>({});
  const entries = usePages(
    (cursor) =>
      scope === "all"
        ? api.admin.auditLog.query({ limit: 50, ...filters, ...cursorOf(cursor) })
        : api.auditLog.list.query({ limit: 50, ...filters, ...cursorOf(cursor) }),
    [scope, filters.action, filters.actor, filters.outcome],
  );
  const filter = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const value = (name: string) => String(form.get(name) ?? "").trim() || undefined;
    const next: Filters = {};
    for (const name of ["action", "actor", "outcome"] as const) {
      const given = value(name);
      if (given) next[name] = given;
    }
    entries.restart();
    setFilters(next);
  };
  const who = (entry: { actorType: string; actorId: string; actorRole: string | null }) =>
    `${t(`audit.actor.${entry.actorType}` as MessageKey)}${entry.actorRole ? ` · ${t(`role.${entry.actorRole}` as MessageKey)}` : ""}`;

  return (
    <section aria-labelledby="audit-title">
      <h1 id="audit-title">{t("audit.title")}</h1>
      <p class="hint">{t("audit.hint")}</p>
      <FoldedFilters>
        <form class="inline-form" onSubmit={filter} data-testid="audit-filters">
          <label>
            {t("audit.filterAction")}
            <input name="action" maxLength={100} />
          </label>
          <label>
            {t("audit.filterActor")}
            <input name="actor" maxLength={200} />
          </label>
          <label>
            {t("audit.filterOutcome")}
            <select name="outcome">
              <option value="">{t("audit.anyOutcome")}</option>
              <option value="success">{t("audit.success")}</option>
              <option value="forbidden">{t("audit.onlyRefusals")}</option>
            </select>
          </label>
          <button type="submit">{t("audit.filter")}</button>
        </form>
      </FoldedFilters>
      <ListStates loaded={entries} items={(page) => page.data} empty={t("audit.none")}>
        {(list) => (
          <ListTable
            testid="audit-log"
            columns={[
              { label: t("audit.at") },
              { label: t("audit.who") },
              { label: t("audit.action") },
              { label: t("audit.outcome") },
              { label: t("audit.targets"), wide: true },
              { label: t("audit.from"), wide: true },
              ...(scope === "all" ? [{ label: t("audit.shop"), wide: true }] : []),
            ]}
          >
            {list.map((entry) => (
              <tr key={entry.id} data-entry-id={entry.id} data-action={entry.action} data-outcome={entry.outcome}>
                <td>
                  <DateTime iso={entry.at} />
                </td>
                <td>
                  {who(entry)}
                  <br />
                  <span class="mono id" title={entry.actorId}>
                    {entry.actorId}
                  </span>
                </td>
                <td class="mono">
                  <details>
                    <summary>{entry.action}</summary>
                    <span class="visually-hidden">{t("audit.input")}</span>
                    <pre>{JSON.stringify(entry.input, null, 2)}</pre>
                  </details>
                </td>
                <td>
                  {entry.outcome === "success"
                    ? t("audit.success")
                    : entry.outcome === "forbidden"
                      ? t("audit.onlyRefusals")
                      : t("audit.refused", { code: entry.outcome })}
                </td>
                <td class="wide-only mono">{entry.targets.join(", ") || "—"}</td>
                <td class="wide-only">{entry.address}</td>
                {scope === "all" ? <td class="wide-only mono">{entry.tenantId ?? "—"}</td> : null}
              </tr>
            ))}
          </ListTable>
        )}
      </ListStates>
      <Pager pages={entries} />
    </section>
  );
}
