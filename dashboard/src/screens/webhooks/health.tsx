/**
 * An endpoint's health in words, as in Svix's portal (`health` on `webhooks.list` and `webhooks.get`): a badge
 * (healthy, failing, disabled, no deliveries yet), the share of its recent deliveries that arrived, and the
 * last error with its time.
 */
import type { Outputs } from "../../api.ts";
import { DateTime } from "../../components.tsx";
import { useDashboard } from "../../context.ts";
import { formatPercent } from "../../i18n.ts";

export type EndpointHealth = Outputs["webhooks"]["get"]["health"];

/** The badge's colour class for each status (the state badges' palette). */
const BADGE: Record<EndpointHealth["status"], string> = {
  healthy: "badge-succeeded",
  failing: "badge-failed",
  disabled: "badge-cancelled",
  idle: "badge-pending",
};

export function HealthBadge({ health }: { health: EndpointHealth }) {
  const { t } = useDashboard();
  return (
    <span class={`badge ${BADGE[health.status]}`} data-health={health.status}>
      {t(`webhookHealth.${health.status}`)}
    </span>
  );
}

/** One line: the badge, the delivered share of the recent deliveries, since when it fails. */
export function HealthLine({ health }: { health: EndpointHealth }) {
  const { t, language } = useDashboard();
  const finished = health.recent.succeeded + health.recent.failed;
  return (
    <span class="health">
      <HealthBadge health={health} />{" "}
      {health.successRate === null ? null : <span>{t("webhookHealth.rate", { rate: formatPercent(language, health.successRate), count: finished })}</span>}
      {health.failingSince ? (
        <span>
          {" · "}
          {t("webhookHealth.failingSince")} <DateTime iso={health.failingSince} />
        </span>
      ) : null}
    </span>
  );
}

/** The health block of an endpoint's page: the line above, the counts, the last delivery and the last error. */
export function HealthFacts({ health }: { health: EndpointHealth }) {
  const { t } = useDashboard();
  return (
    <dl class="facts card" data-testid="endpoint-health">
      <dt>{t("webhookHealth.title")}</dt>
      <dd>
        <HealthLine health={health} />
      </dd>
      <dt>{t("webhookHealth.recent")}</dt>
      <dd>{t("webhookHealth.counts", { succeeded: health.recent.succeeded, failed: health.recent.failed, pending: health.recent.pending })}</dd>
      <dt>{t("webhookHealth.lastDelivered")}</dt>
      <dd>{health.lastDeliveredAt ? <DateTime iso={health.lastDeliveredAt} /> : t("webhookHealth.never")}</dd>
      {health.lastError ? (
        <>
          <dt>{t("webhookHealth.lastError")}</dt>
          <dd>
            <span class="mono">{health.lastError}</span>
            {health.lastErrorAt ? (
              <span class="muted">
                {" · "}
                <DateTime iso={health.lastErrorAt} />
              </span>
            ) : null}
          </dd>
        </>
      ) : null}
    </dl>
  );
}
