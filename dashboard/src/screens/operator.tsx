/**
 * The operator's screens (an admin token): tenants — create one (its first API key's secret shown once),
 * disable or enable it, let it go live (`tenants.list`, `create`, `update`) — and the payments stuck past
 * the sync window (`admin.stuckPayments`). A tenant's session that opens these addresses gets the API's
 * refusal: the dashboard adds no way in that the API does not have.
 */
import { useState } from "preact/hooks";
import { Amount, DateTime, Empty, ErrorNote, Loading, providerLabel, SecretOnce, StateBadge, useLoad } from "../components.tsx";
import { useDashboard } from "../context.ts";

export function TenantsScreen() {
  const { api, actFor, t } = useDashboard();
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const tenants = useLoad(() => api.tenants.list.query({ limit: 20, ...(cursor ? { cursor } : {}) }), [cursor]);
  const [created, setCreated] = useState<{ keyId: string; secret: string } | undefined>();
  const [error, setError] = useState<unknown>();

  const act = async (action: () => Promise<unknown>) => {
    setError(undefined);
    try {
      await action();
      tenants.reload();
    } catch (caught) {
      setError(caught);
    }
  };
  const create = (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const name = String(new FormData(formElement).get("name") ?? "").trim();
    return act(async () => {
      const answer = await api.tenants.create.mutate({ name });
      setCreated({ keyId: answer.apiKey.id, secret: answer.apiKey.secret });
      formElement.reset();
    });
  };

  return (
    <section aria-labelledby="tenants-title">
      <h1 id="tenants-title">{t("tenants.title")}</h1>
      <form class="inline-form" onSubmit={create}>
        <label>
          {t("tenants.name")}
          <input name="name" required maxLength={200} />
        </label>
        <button type="submit">{t("tenants.create")}</button>
      </form>
      {created ? (
        <>
          <p class="notice" role="status">
            {t("tenants.created", { id: created.keyId })}
          </p>
          <SecretOnce secret={created.secret} onDone={() => setCreated(undefined)} />
        </>
      ) : null}
      <ErrorNote error={error} />
      <ErrorNote error={tenants.error} />
      {tenants.loading && !tenants.data ? <Loading /> : null}
      {tenants.data && tenants.data.data.length === 0 ? <Empty>{t("tenants.none")}</Empty> : null}
      {tenants.data && tenants.data.data.length > 0 ? (
        <div class="table-wrap">
          <table class="list" data-testid="tenants">
            <thead>
              <tr>
                <th scope="col">{t("tenants.name")}</th>
                <th scope="col">{t("tenants.id")}</th>
                <th scope="col">{t("tenants.state")}</th>
                <th scope="col">{t("tenants.actions")}</th>
              </tr>
            </thead>
            <tbody>
              {tenants.data.data.map((tenant) => (
                <tr key={tenant.id} data-tenant-id={tenant.id}>
                  <td>{tenant.name}</td>
                  <td class="mono">{tenant.id}</td>
                  <td>
                    {tenant.disabled ? t("tenants.disabled") : t("tenants.active")}
                    {tenant.liveEnabled ? ` · ${t("env.live")}` : ""}
                  </td>
                  <td class="actions">
                    <button type="button" onClick={() => actFor({ tenantId: tenant.id, name: tenant.name })}>
                      {t("tenants.open")}
                    </button>
                    <button
                      type="button"
                      class="secondary"
                      onClick={() => act(() => api.tenants.update.mutate({ tenant_id: tenant.id, disabled: !tenant.disabled }))}
                    >
                      {tenant.disabled ? t("tenants.enable") : t("tenants.disable")}
                    </button>
                    {tenant.liveEnabled ? null : (
                      <button
                        type="button"
                        class="danger"
                        onClick={() =>
                          confirm(t("tenants.goLiveConfirm", { name: tenant.name })) &&
                          act(() => api.tenants.update.mutate({ tenant_id: tenant.id, liveEnabled: true }))
                        }
                      >
                        {t("tenants.goLive")}
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <div class="pager">
        <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          {t("pager.previous")}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={!tenants.data?.nextCursor}
          onClick={() => tenants.data?.nextCursor && setCursors([...cursors, tenants.data.nextCursor])}
        >
          {t("pager.next")}
        </button>
      </div>
    </section>
  );
}

export function StuckPaymentsScreen() {
  const { api, t } = useDashboard();
  const stuck = useLoad(() => api.admin.stuckPayments.query({ limit: 50 }), []);
  return (
    <section aria-labelledby="stuck-title">
      <h1 id="stuck-title">{t("stuck.title")}</h1>
      <p class="hint">{t("stuck.hint")}</p>
      <ErrorNote error={stuck.error} />
      {stuck.loading && !stuck.data ? <Loading /> : null}
      {stuck.data && stuck.data.data.length === 0 ? <Empty>{t("stuck.none")}</Empty> : null}
      {stuck.data && stuck.data.data.length > 0 ? (
        <div class="table-wrap">
          <table class="list" data-testid="stuck">
            <thead>
              <tr>
                <th scope="col">{t("payments.created")}</th>
                <th scope="col">{t("payments.amount")}</th>
                <th scope="col">{t("payments.state")}</th>
                <th scope="col">{t("payments.provider")}</th>
                <th scope="col">{t("payments.id")}</th>
              </tr>
            </thead>
            <tbody>
              {stuck.data.data.map((payment) => (
                <tr key={payment.id}>
                  <td>
                    <DateTime iso={payment.createdAt} />
                  </td>
                  <td>
                    <Amount amount={payment.amount} currency={payment.currency} />
                  </td>
                  <td>
                    <StateBadge state={payment.state} />
                  </td>
                  <td>{providerLabel(payment.provider)}</td>
                  <td class="mono">{payment.id}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
