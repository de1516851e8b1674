/**
 * API keys: the tenant's keys (prefixes only, `apiKeys.list`), a new key (`apiKeys.create`, its secret
 * shown once with a copy button) and revoking one (`apiKeys.revoke`).
 */
import { useState } from "preact/hooks";
import { DateTime, ErrorNote, ReadOnlyNote, SecretOnce, useAction, useLoad } from "../../components.tsx";
import { may } from "../../permissions.ts";
import { ListStates, ListTable } from "../../lists.tsx";
import { useDashboard } from "../../context.ts";
import { ConfirmDialog } from "../../confirm-dialog.tsx";

export function ApiKeysScreen() {
  const { api, session, t, tenantId: actingOn } = useDashboard();
  const tenantId = actingOn ?? "";
  const keys = useLoad(() => api.apiKeys.list.query({ tenant_id: tenantId }), [tenantId]);
  const [created, setCreated] = useState<{ id: string; secret: string } | undefined>();
  const action = useAction();

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const name = String(form.get("name") ?? "").trim();
    await action.run(async () => {
      const key = await api.apiKeys.create.mutate({ tenant_id: tenantId, environment: session.environment, ...(name ? { name } : {}) });
      setCreated({ id: key.id, secret: key.secret });
      formElement.reset();
      keys.reload();
    });
  };

  // The key this session signed in with: revoking it signs this tab out too, so it is asked in a dialog that says so.
  const [askingInUse, setAskingInUse] = useState<string | undefined>();
  const revoke = async (keyId: string, confirmed = false) => {
    const inUse = session.subject === `key:${keyId}`;
    if (inUse && !confirmed) return setAskingInUse(keyId);
    if (!inUse && !confirm(t("apiKeys.revokeConfirm", { id: keyId }))) return;
    await action.run(async () => {
      await api.apiKeys.revoke.mutate({ tenant_id: tenantId, key_id: keyId });
      keys.reload();
    });
  };

  return (
    <section aria-labelledby="api-keys-title">
      <h1 id="api-keys-title">{t("apiKeys.title")}</h1>
      <p class="hint">{t("apiKeys.hint")}</p>
      <ReadOnlyNote ability="keys" />
      {created ? <SecretOnce note={t("apiKeys.created", { id: created.id })} secret={created.secret} onDone={() => setCreated(undefined)} /> : null}
      <ErrorNote error={action.error} />
      <ListStates loaded={keys} items={(page) => page.data} empty={t("apiKeys.none")}>
        {(list) => (
          <ListTable
            testid="api-keys"
            columns={[
              { label: t("apiKeys.name") },
              { label: t("apiKeys.id") },
              { label: t("apiKeys.environment") },
              { label: t("apiKeys.lastUsed"), wide: true },
              { label: t("apiKeys.state") },
            ]}
          >
            {list.map((key) => (
              <tr key={key.id} data-key-id={key.id} data-revoked={key.revokedAt ? "true" : "false"}>
                <td>{key.name ?? "—"}</td>
                <td class="mono">
                  <span class="id" title={key.id}>
                    {key.id}
                  </span>
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
                  ) : may(session, "keys") ? (
                    <button type="button" class="danger" onClick={() => revoke(key.id)}>
                      {t("apiKeys.revoke")}
                    </button>
                  ) : (
                    t("apiKeys.active")
                  )}
                </td>
              </tr>
            ))}
          </ListTable>
        )}
      </ListStates>
      {askingInUse ? (
        <ConfirmDialog
          title={t("apiKeys.revokeInUseTitle")}
          confirmLabel={t("apiKeys.revoke")}
          onCancel={() => setAskingInUse(undefined)}
          onConfirm={() => {
            setAskingInUse(undefined);
            void revoke(askingInUse, true);
          }}
        >
          {t("apiKeys.revokeInUseConfirm", { id: askingInUse })}
        </ConfirmDialog>
      ) : null}
      {may(session, "keys") ? (
        <>
          <h2>{t("apiKeys.create")}</h2>
          <form class="inline-form" onSubmit={create}>
            <label>
              {t("apiKeys.name")}
              <input name="name" maxLength={100} />
            </label>
            <button type="submit">{t("apiKeys.createSubmit", { environment: session.environment === "live" ? t("env.live") : t("env.sandbox") })}</button>
          </form>
        </>
      ) : null}
    </section>
  );
}
