/**
 * The operator's screens (an admin token): tenants — create one (its first API key's secret shown once),
 * disable or enable it, let it go live (`tenants.list`, `create`, `update`) — and the payments stuck past
 * the sync window (`admin.stuckPayments`). A tenant's session that opens these addresses gets the API's
 * refusal: the dashboard adds no way in that the API does not have.
 */
import { useState } from "preact/hooks";
import type { Outputs } from "../api.ts";
import { CreatedAmountState, ErrorNote, providerLabel, ReadOnlyNote, SecretOnce, useAction } from "../components.tsx";
import { ConfirmDialog } from "../confirm-dialog.tsx";
import { cursorOf, ListStates, ListTable, Pager, useAddress, usePages } from "../lists.tsx";
import { useDashboard } from "../context.ts";
import { may } from "../permissions.ts";

type Tenant = Outputs["tenants"]["list"]["data"][number];

export function TenantsScreen() {
  const { api, actFor, session, t } = useDashboard();
  // Creating, disabling and letting a shop go live are the operator's admin's: support reads.
  const changes = may(session, "operator");
  // The page lives in the address (`#/operator/tenants?page=…`).
  const tenants = usePages((cursor) => api.tenants.list.query({ limit: 20, ...cursorOf(cursor) }), [], useAddress("#/operator/tenants").pages());
  const [created, setCreated] = useState<{ keyId: string; secret: string } | undefined>();
  // The step the operator is asked to confirm, and for which tenant.
  const [asking, setAsking] = useState<{ step: "disable" | "goLive"; tenant: Tenant } | undefined>();
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
      <ReadOnlyNote ability="operator" />
      {changes ? (
        <form class="inline-form" onSubmit={create}>
          <label>
            {t("tenants.name")}
            <input name="name" required maxLength={200} />
          </label>
          <button type="submit">{t("tenants.create")}</button>
        </form>
      ) : null}
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
                <td>
                  <button type="button" class="link" data-open onClick={() => actFor({ tenantId: tenant.id, name: tenant.name })}>
                    {tenant.name}
                  </button>
                </td>
                <td class="mono">
                  <span class="id" title={tenant.id}>
                    {tenant.id}
                  </span>
                </td>
                <td>
                  {tenant.disabled ? t("tenants.disabled") : t("tenants.active")}
                  {tenant.liveEnabled ? ` · ${t("env.live")}` : ""}
                  {tenant.disabledReason ? <div class="muted">{tenant.disabledReason}</div> : null}
                </td>
                <td class="actions">
                  <button type="button" onClick={() => actFor({ tenantId: tenant.id, name: tenant.name })}>
                    {t("tenants.open")}
                  </button>
                  {changes ? (
                    <button
                      type="button"
                      class="secondary"
                      onClick={() =>
                        // Disabling stops a merchant's business at once: confirmed with a reason first; enabling again is harmless.
                        tenant.disabled
                          ? act(() => api.tenants.update.mutate({ tenant_id: tenant.id, disabled: false }))
                          : setAsking({ step: "disable", tenant })
                      }
                    >
                      {tenant.disabled ? t("tenants.enable") : t("tenants.disable")}
                    </button>
                  ) : null}
                  {/* A disabled tenant cannot take money: going live is offered once it is enabled again. */}
                  {tenant.liveEnabled || tenant.disabled || !changes ? null : (
                    <button type="button" class="danger" onClick={() => setAsking({ step: "goLive", tenant })}>
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
      {asking ? (
        <ConfirmDialog
          title={t(asking.step === "disable" ? "tenants.disableTitle" : "tenants.goLiveTitle", { name: asking.tenant.name })}
          confirmLabel={t(asking.step === "disable" ? "tenants.disable" : "tenants.goLive")}
          reason={asking.step === "disable" ? t("tenants.disableReason") : undefined}
          onCancel={() => setAsking(undefined)}
          onConfirm={(reason) => {
            const { step, tenant } = asking;
            setAsking(undefined);
            void act(() =>
              api.tenants.update.mutate(
                step === "disable" ? { tenant_id: tenant.id, disabled: true, ...(reason ? { reason } : {}) } : { tenant_id: tenant.id, liveEnabled: true },
              ),
            );
          }}
        >
          {t(asking.step === "disable" ? "tenants.disableConfirm" : "tenants.goLiveConfirm", { name: asking.tenant.name })}
        </ConfirmDialog>
      ) : null}
    </section>
  );
}

export function StuckPaymentsScreen() {
  const { api, t, actFor, session } = useDashboard();
  // The page lives in the address (`#/operator/stuck?page=…`), as every list's.
  const stuck = usePages((cursor) => api.admin.stuckPayments.query({ limit: 20, ...cursorOf(cursor) }), [], useAddress("#/operator/stuck").pages());
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
                  {/* Its record is the tenant's: opened as the operator working that tenant (in the session's environment). */}
                  {payment.environment === session.environment ? (
                    <button
                      type="button"
                      class="link id"
                      title={payment.id}
                      data-open
                      onClick={() => actFor({ tenantId: payment.tenantId, name: payment.tenantId }, `#/payments/${encodeURIComponent(payment.id)}`)}
                    >
                      {payment.id}
                    </button>
                  ) : (
                    <span class="id" title={payment.id}>
                      {payment.id}
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </ListTable>
        )}
      </ListStates>
      {/* The longest stuck first: the next page is of later ones. */}
      <Pager pages={stuck} oldestFirst />
    </section>
  );
}
