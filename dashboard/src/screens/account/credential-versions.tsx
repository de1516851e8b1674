/**
 * Every version of a tenant's keys at a provider, per environment, newest first
 * (`credentials.<provider>.versions`): the one in use, and each one it
 * replaced with when. A payment names the version it was made with ("your provider B keys, version 1"), and
 * its link lands here, on that version.
 */
import { useEffect } from "preact/hooks";
import type { Outputs } from "../../api.ts";
import { DateTime, ErrorNote, type Loaded } from "../../components.tsx";
import { useDashboard } from "../../context.ts";
import { formatDateTime } from "../../i18n.ts";

type Version = Outputs["credentials"]["providerB"]["versions"]["data"][number];
type Environment = Version["environment"];

/** The element id of one version, and the `#/settings/<id>` route's part that leads to it: `providerB-sandbox-v1`. */
export function versionAnchor(provider: string, environment: Environment, version: number): string {
  return `${provider}-${environment}-v${version}`;
}

export function CredentialVersions(props: {
  provider: string;
  /** The provider's fields, named in the dashboard's language. */
  fields: { name: string; label: string }[];
  versions: Loaded<{ data: Version[] }>;
  /** The version the route names (`versionAnchor`), brought into view and focused once listed. */
  target: string | undefined;
}) {
  const { language, t } = useDashboard();
  const versions = props.versions.data?.data ?? [];
  const listed = versions.some((version) => versionAnchor(props.provider, version.environment, version.version) === props.target);
  useEffect(() => {
    if (!listed || !props.target) return;
    const element = document.getElementById(props.target);
    element?.scrollIntoView({ block: "center" });
    element?.focus({ preventScroll: true });
  }, [listed, props.target]);
  if (versions.length === 0 && !props.versions.error) return null;
  const environments = [...new Set(versions.map((version) => version.environment))];
  return (
    <div class="versions" data-testid={`${props.provider}-versions`}>
      <h3>{t("settings.versions")}</h3>
      <p class="hint">{t("settings.versionsHint")}</p>
      <ErrorNote error={props.versions.error} />
      {environments.map((environment) => {
        const mine = versions.filter((version) => version.environment === environment);
        return (
          <div key={environment} data-environment={environment}>
            <h4>
              <span class={`env-badge env-badge-${environment}`}>{environment === "live" ? t("env.live") : t("env.sandbox")}</span>
            </h4>
            <ol class="cards version-list">
              {mine.map((version) => {
                const id = versionAnchor(props.provider, environment, version.version);
                // A newer version of the same environment replaced this one; without one, it was switched off.
                const replaced = mine.some((other) => other.version > version.version);
                return (
                  <li
                    key={id}
                    id={id}
                    tabIndex={-1}
                    class={`card version${id === props.target ? " version-target" : ""}`}
                    data-version={version.version}
                    data-active={String(version.active)}
                    aria-current={id === props.target ? "true" : undefined}
                  >
                    <div class="card-head">
                      <strong>{t("settings.versionTitle", { version: version.version })}</strong>
                      {version.active ? (
                        <span class="badge badge-succeeded">{t("settings.active")}</span>
                      ) : (
                        <span class="badge" data-testid="version-ended">
                          {version.deactivatedAt
                            ? t(replaced ? "settings.replacedOn" : "settings.deactivatedOn", { date: formatDateTime(language, version.deactivatedAt) })
                            : t(replaced ? "settings.replaced" : "settings.deactivated")}
                        </span>
                      )}
                    </div>
                    <dl class="facts">
                      <dt>{t("settings.createdAt")}</dt>
                      <dd>
                        <DateTime iso={version.createdAt} />
                      </dd>
                      {props.fields
                        .filter((field) => field.name in version.masked)
                        .map((field) => (
                          <>
                            <dt key={`${field.name}-label`}>{field.label}</dt>
                            <dd key={field.name} class="mono masked">
                              {version.masked[field.name] ?? "—"}
                            </dd>
                          </>
                        ))}
                    </dl>
                  </li>
                );
              })}
            </ol>
          </div>
        );
      })}
    </div>
  );
}
