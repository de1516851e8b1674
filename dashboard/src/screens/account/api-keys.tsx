/**
 * API keys: the tenant's keys (prefixes only, `apiKeys.list`), a new key (`apiKeys.create`, its secret
 * shown once with a copy button) and revoking one (`apiKeys.revoke`).
 */
import { useState } from "preact/hooks";
import { DateTime, Empty, ErrorNote, Loading, SecretOnce, useLoad } from "../../components.tsx";
import { useDashboard } from "../../context.ts";

export function ApiKeysScreen() {
  const { api, session, t, tenantId: actingOn } = useDashboard();
  const tenantId = actingOn ?? "";
  const keys = useLoad(() => api.apiKeys.list.query({ tenant_id: tenantId }), [tenantId]);
  const [created, setCreated] = useState<{ id: string; secret: string } | undefined>();
  const [error, setError] = useState<unknown>();

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const name = String(form.get("name") ?? "").trim();
    setError(undefined);
    try {
      const key = await api.apiKeys.create.mutate({ tenant_id: tenantId, environment: session.environment, ...(name ? { name } : {}) });
      setCreated({ id: key.id, secret: key.secret });
      formElement.reset();
      keys.reload();
    } catch (caught) {
      setError(caught);
    }
  };

  const revoke = async (keyId: string) => {
    if (!confirm(t("apiKeys.revokeConfirm", { id: keyId }))) return;
    setError(undefined);
    try {
      await api.apiKeys.revoke.mutate({ tenant_id: tenantId, key_id: keyId });
      keys.reload();
    } catch (caught) {
      setError(caught);
    }
  };

  return (
    <section aria-labelledby="api-keys-title">
      <h1 id="api-keys-title">{t("apiKeys.title")}</h1>
      <p class="hint">{t("apiKeys.hint")}</p>
      {created ? (
        <>
          <p class="notice" role="status">
            {t("apiKeys.created", { id: created.id })}
          </p>
          <SecretOnce secret={created.secret} onDone={() => setCreated(undefined)} />
        </>
      ) : null}
      <ErrorNote error={error} />
      <ErrorNote error={keys.error} />
      {keys.loading && !keys.data ? <Loading /> : null}
      {keys.data && keys.data.data.length === 0 ? <Empty>{t("apiKeys.none")}</Empty> : null}
      {keys.data && keys.data.data.length > 0 ? (
        <div class="table-wrap">
          <table class="list" data-testid="api-keys">
            <thead>
              <tr>
                <th scope="col">{t("apiKeys.name")}</th>
                <th scope="col">{t("apiKeys.id")}</th>
                <th scope="col">{t("apiKeys.environment")}</th>
                <th scope="col" class="wide-only">
                  {t("apiKeys.lastUsed")}
                </th>
                <th scope="col">{t("apiKeys.state")}</th>
              </tr>
            </thead>
            <tbody>
              {keys.data.data.map((key) => (
                <tr key={key.id} data-key-id={key.id} data-revoked={key.revokedAt ? "true" : "false"}>
                  <td>{key.name ?? "—"}</td>
                  <td class="mono">
                    {key.id}
                    <div class="muted">{key.prefix}…</div>
                  </td>
                  <td>{key.environment === "live" ? t("env.live") : t("env.sandbox")}</td>
                  <td class="wide-only">
                    <DateTime iso={key.lastUsedAt} />
                  </td>
                  <td>
                    {key.revokedAt ? (
                      <span class="muted">
                        {t("apiKeys.revoked")} <DateTime iso={key.revokedAt} />
                      </span>
                    ) : (
                      <button type="button" class="danger" onClick={() => revoke(key.id)}>
                        {t("apiKeys.revoke")}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <h2>{t("apiKeys.create")}</h2>
      <form class="inline-form" onSubmit={create}>
        <label>
          {t("apiKeys.name")}
          <input name="name" maxLength={100} />
        </label>
        <button type="submit">{t("apiKeys.createSubmit", { environment: session.environment === "live" ? t("env.live") : t("env.sandbox") })}</button>
      </form>
    </section>
  );
}
