/**
 * Tenant Config (spec 2.5): a tenant's keys at each provider that takes some, as the gateway lists them
 * (`providers.credentials`: provider B's keys, the tenant's optional own provider A account, and any
 * provider the gateway runs besides), shown masked with the version each payment records, replaced by a new
 * set (`credentials.<provider>.get` / `put`), with every version stored before (`credentials.<provider>.versions`,
 * credential-versions.tsx). Values typed here are sent once and never shown again.
 */
import { useState } from "preact/hooks";
import type { Outputs } from "../../api.ts";
import { DateTime, Empty, ErrorNote, type Loaded, Loading, ReadOnlyNote, SecretOnce, StatusNote, useAction, useLoad } from "../../components.tsx";
import { useDashboard } from "../../context.ts";
import { formatDateTime } from "../../i18n.ts";
import { may } from "../../permissions.ts";
import { CredentialVersions } from "./credential-versions.tsx";

type Environment = Outputs["auth"]["whoami"]["environment"];
const ENVIRONMENTS = ["sandbox", "live"] as const satisfies readonly Environment[];

/** What a provider takes, as the gateway declares it (its fields' labels in each language). */
type ProviderCredentials = Outputs["providers"]["credentials"]["data"][number];
type VersionList = Outputs["credentials"]["providerB"]["versions"];

/** The section's element id: `providerB` → `provider-b`. */
const sectionId = (provider: string) => provider.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);

/** `version`: the stored version the route names (`#/settings/providerB-sandbox-v1`), shown and focused. */
export function SettingsScreen({ version }: { version?: string }) {
  const { api, t, tenantId: actingOn } = useDashboard();
  const tenantId = actingOn ?? "";
  const providers = useLoad(() => api.providers.credentials.query({}), []);
  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title">{t("settings.title")}</h1>
      <p class="hint">{t("settings.hint")}</p>
      <ReadOnlyNote ability="credentials" />
      <ErrorNote error={providers.error} />
      {providers.loading && !providers.data ? <Loading /> : null}
      {(providers.data?.data ?? []).map((provider) => (
        <ProviderCredentialsSection key={provider.provider} tenantId={tenantId} provider={provider} version={version} />
      ))}
      <CallbackSecret tenantId={tenantId} />
    </section>
  );
}

/** One provider's sets, versions and form, through its routes (`credentials.<provider>.*`). */
function ProviderCredentialsSection(props: { tenantId: string; provider: ProviderCredentials; version: string | undefined }) {
  const { api, language } = useDashboard();
  const { tenantId, provider } = props;
  // Every provider's routes have the same shape; the gateway names them after the provider.
  const routes = api.credentials[provider.provider]!;
  const sets = useLoad(() => routes.get.query({ tenant_id: tenantId }) as unknown as Promise<{ data: MaskedSet[] }>, [tenantId, provider.provider]);
  const versions = useLoad(() => routes.versions.query({ tenant_id: tenantId }) as Promise<VersionList>, [tenantId, provider.provider]);
  const fields = provider.fields.map((field) => ({ name: field.name, optional: field.optional, label: field.label[language] }));
  return (
    <CredentialsSection
      id={sectionId(provider.provider)}
      title={provider.title[language]}
      hint={provider.hint[language]}
      fields={fields}
      sets={sets}
      versions={<CredentialVersions provider={provider.provider} fields={fields} versions={versions} target={props.version} />}
      onSaved={versions.reload}
      save={(environment, values) =>
        (routes.put.mutate as (input: Record<string, string>) => Promise<unknown>)({
          tenant_id: tenantId,
          environment,
          // An optional field left empty is not sent; a required one is sent as typed.
          ...Object.fromEntries(fields.filter((field) => !field.optional || values[field.name]).map((field) => [field.name, values[field.name] ?? ""])),
        })
      }
    />
  );
}

interface MaskedSet {
  environment: Environment;
  version: number;
  updatedAt: string;
  [field: string]: string | number | null;
}

function CredentialsSection(props: {
  id: string;
  title: string;
  hint: string;
  fields: { name: string; optional: boolean; label: string }[];
  sets: Loaded<{ data: MaskedSet[] }>;
  /** Every version stored, under the sets in use. */
  versions: preact.ComponentChildren;
  save: (environment: Environment, values: Record<string, string>) => Promise<unknown>;
  onSaved: () => void;
}) {
  const { session, t } = useDashboard();
  const action = useAction();
  const [saved, setSaved] = useState<string | undefined>();
  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const environment = String(form.get("environment")) as Environment;
    const values = Object.fromEntries(props.fields.map((field) => [field.name, String(form.get(field.name) ?? "").trim()]));
    setSaved(undefined);
    await action.run(async () => {
      await props.save(environment, values);
      // The values leave the page once sent: only the masked set is shown from now on.
      formElement.reset();
      setSaved(t("settings.saved", { environment: environment === "live" ? t("env.live") : t("env.sandbox") }));
      props.sets.reload();
      props.onSaved();
    });
  };
  const sets = props.sets.data?.data ?? [];
  return (
    <div class="card" id={props.id} data-testid={props.id}>
      <h2>{props.title}</h2>
      <p class="hint">{props.hint}</p>
      <ErrorNote error={props.sets.error} />
      {props.sets.loading && !props.sets.data ? <Loading /> : null}
      {props.sets.data && sets.length === 0 ? <Empty>{t("settings.none")}</Empty> : null}
      {sets.map((set) => (
        <dl key={set.environment} class="facts" data-environment={set.environment} data-version={set.version}>
          <dt>{t("apiKeys.environment")}</dt>
          <dd>
            <span class={`env-badge env-badge-${set.environment}`}>{set.environment === "live" ? t("env.live") : t("env.sandbox")}</span>
          </dd>
          {props.fields.map((field) => (
            <>
              <dt key={`${field.name}-label`}>{field.label}</dt>
              <dd key={field.name} class="mono masked">
                {set[field.name] ?? "—"}
              </dd>
            </>
          ))}
          <dt>{t("settings.version")}</dt>
          <dd>{t("settings.versionValue", { version: set.version })}</dd>
          <dt>{t("settings.updatedAt")}</dt>
          <dd>
            <DateTime iso={set.updatedAt} />
          </dd>
        </dl>
      ))}
      {props.versions}
      {/* Provider credentials are the owner's (and the operator's) to store: another role reads them masked. */}
      {may(session, "credentials") ? (
        <form class="stack" onSubmit={submit} aria-label={t("settings.replace", { provider: props.title })}>
          <h3>{sets.length > 0 ? t("settings.replace", { provider: props.title }) : t("settings.store", { provider: props.title })}</h3>
          <label>
            {t("apiKeys.environment")}
            <select name="environment">
              {ENVIRONMENTS.map((environment) => (
                <option key={environment} value={environment} selected={environment === session.environment}>
                  {environment === "live" ? t("env.live") : t("env.sandbox")}
                </option>
              ))}
            </select>
          </label>
          {props.fields.map((field) => (
            <label key={field.name}>
              {field.label}
              {field.optional ? ` ${t("settings.optional")}` : ""}
              <input name={field.name} type="password" autoComplete="off" required={!field.optional} spellcheck={false} />
            </label>
          ))}
          <StatusNote>{saved}</StatusNote>
          <ErrorNote error={action.error} />
          <button type="submit">{t("settings.save")}</button>
        </form>
      ) : null}
    </div>
  );
}

/** The secret that signs deliveries to a direct payment's callback_url: a new one, shown once (`tenants.rotateCallbackSecret`). */
function CallbackSecret({ tenantId }: { tenantId: string }) {
  const { api, language, session, t } = useDashboard();
  const [rotated, setRotated] = useState<{ secret: string; previousExpiresAt: string } | undefined>();
  const action = useAction();
  const rotate = async () => {
    if (!confirm(t("settings.callbackConfirm"))) return;
    await action.run(async () => {
      const answer = await api.tenants.rotateCallbackSecret.mutate({ tenant_id: tenantId });
      setRotated({ secret: answer.callbackSecret, previousExpiresAt: answer.previousExpiresAt });
    });
  };
  return (
    <div class="card" data-testid="callback-secret">
      <h2>{t("settings.callbackTitle")}</h2>
      <p class="hint">{t("settings.callbackHint")}</p>
      {rotated ? (
        <SecretOnce
          note={t("settings.callbackRotated", { until: formatDateTime(language, rotated.previousExpiresAt) })}
          secret={rotated.secret}
          onDone={() => setRotated(undefined)}
        />
      ) : may(session, "keys") ? (
        <button type="button" class="secondary" onClick={rotate}>
          {t("settings.callbackRotate")}
        </button>
      ) : null}
      <ErrorNote error={action.error} />
    </div>
  );
}
