/**
 * The operator's screens (an admin token): tenants — create one (its first API key's secret shown once),
 * disable or enable it, let it go live (`tenants.list`, `create`, `update`) — and the payments stuck past
 * the sync window (`admin.stuckPayments`). A tenant's session that opens these addresses gets the API's
 * refusal: the dashboard adds no way in that the API does not have.
 */
import { useState } from "preact/hooks";
import { CreatedAmountState, ErrorNote, providerLabel, SecretOnce, useAction, useLoad } from "../components.tsx";
import { cursorOf, ListStates, ListTable, Pager, usePages } from "../lists.tsx";
import { useDashboard } from "../context.ts";

export function TenantsScreen() {
  const { api, actFor, t } = useDashboard();
  const tenants = usePages((cursor) => api.tenants.list.query({ limit: 20, ...cursorOf(cursor) }), []);
  const [created, setCreated] = useState<{ keyId: string; secret: string } | undefined>();
  const action = useAction();

  const act = (run: () => Promise<unknown>) =>
    action.run(async () => {
      await run();
      tenants.reload();
    });
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
      {created ? <SecretOnce note={t("tenants.created", { id: created.keyId })} secret={created.secret} onDone={() => setCreated(undefined)} /> : null}
      <ErrorNote error={action.error} />
      <ListStates loaded={tenants} items={(page) => page.data} empty={t("tenants.none")}>
        {(list) => (
          <ListTable
            testid="tenants"
            columns={[{ label: t("tenants.name") }, { label: t("tenants.id") }, { label: t("tenants.state") }, { label: t("tenants.actions") }]}
          >
            {list.map((tenant) => (
              <tr key={tenant.id} data-tenant-id={tenant.id}>
                <td>{tenant.name}</td>
                <td class="mono">
                  <span class="id" title={tenant.id}>
                    {tenant.id}
                  </span>
                </td>
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
                    onClick={() =>
                      // Disabling stops a merchant's business at once: said before it is done; enabling again is harmless.
                      (tenant.disabled || confirm(t("tenants.disableConfirm", { name: tenant.name }))) &&
                      act(() => api.tenants.update.mutate({ tenant_id: tenant.id, disabled: !tenant.disabled }))
                    }
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
          </ListTable>
        )}
      </ListStates>
      <Pager pages={tenants} />
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
      <ListStates loaded={stuck} items={(page) => page.data} empty={t("stuck.none")}>
        {(list) => (
          <ListTable
            testid="stuck"
            columns={[
              { label: t("payments.created") },
              { label: t("payments.amount") },
              { label: t("payments.state") },
              { label: t("payments.provider") },
              { label: t("payments.id") },
            ]}
          >
            {list.map((payment) => (
              <tr key={payment.id}>
                <CreatedAmountState createdAt={payment.createdAt} amount={payment.amount} currency={payment.currency} state={payment.state} />
                <td>{providerLabel(payment.provider)}</td>
                <td class="mono">
                  <span class="id" title={payment.id}>
                    {payment.id}
                  </span>
                </td>
              </tr>
            ))}
          </ListTable>
        )}
      </ListStates>
    </section>
  );
}
