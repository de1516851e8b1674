/**
 * Permits (provider B's pre-authorised charges): the list with a status filter and cursor paging
 * (`permits.list`), and one permit with its renewal schedule (set one up, cancel it), its charges and a
 * revoke button (`permits.get`, `permitSchedules.get` / `put` / `cancel`, `permits.charges`, `permits.revoke`).
 */
import { type Outputs, statusOf } from "../api.ts";
import { Amount, CreatedAmountState, DateTime, Empty, ErrorNote, Loading, StateBadge, useAction, useLoad } from "../components.tsx";
import { AnySelect, cursorOf, ListStates, ListTable, Pager, useAddress, usePages } from "../lists.tsx";
import { useDashboard } from "../context.ts";
import { may } from "../permissions.ts";
import { formatPhone } from "../phones.ts";

type Permit = Outputs["permits"]["get"];

/** A permit's statuses (checked against the API's type). */
const PERMIT_STATUSES = ["pending", "active", "declined", "revoked", "expired"] as const satisfies readonly Permit["status"][];

export function PermitsScreen() {
  const { api, t } = useDashboard();
  // The status and the page live in the address (`#/permits?status=active&page=…`).
  const address = useAddress("#/permits");
  const status = PERMIT_STATUSES.find((value) => value === address.query.get("status")) ?? "";
  const permits = usePages((cursor) => api.permits.list.query({ limit: 20, ...(status ? { status } : {}), ...cursorOf(cursor) }), [status], address.pages());
  return (
    <section aria-labelledby="permits-title">
      <h1 id="permits-title">{t("permits.title")}</h1>
      <p class="hint">{t("permits.hint")}</p>
      <div class="filters">
        <AnySelect
          label={t("payments.state")}
          name="status"
          values={PERMIT_STATUSES}
          labelOf={(value) => t(`permitStatus.${value}`)}
          initial={status}
          onChange={(value) => address.set({ status: value, page: undefined })}
        />
      </div>
      <ListStates loaded={permits} items={(page) => page.data} empty={t("permits.none")}>
        {(list) => (
          <ListTable
            testid="permits"
            columns={[
              { label: t("payments.created") },
              { label: t("permits.maxAmount") },
              { label: t("payments.state") },
              { label: t("payment.customer"), wide: true },
              { label: t("payments.id") },
            ]}
          >
            {list.map((permit) => (
              <tr key={permit.permitId} data-permit-id={permit.permitId}>
                <CreatedAmountState
                  createdAt={permit.createdAt}
                  amount={permit.maxAmount}
                  currency={permit.currency}
                  state={permit.status}
                  label={t(`permitStatus.${permit.status}`)}
                />
                <td class="wide-only">{permit.customer.name ?? formatPhone(permit.customer.phone) ?? "—"}</td>
                <td>
                  <a class="mono id" title={permit.permitId} href={`#/permits/${encodeURIComponent(permit.permitId)}`} data-open>
                    {permit.permitId}
                  </a>
                </td>
              </tr>
            ))}
          </ListTable>
        )}
      </ListStates>
      <Pager pages={permits} />
    </section>
  );
}

export function PermitScreen({ permitId }: { permitId: string }) {
  const { api, session, t } = useDashboard();
  // Revoking, scheduling and cancelling move money: not offered to a role that may not (`permissions.ts`).
  const moneyOffered = may(session, "money");
  const permit = useLoad(() => api.permits.get.query({ permit_id: permitId }), [permitId]);
  // A permit without a schedule is the API's 404: shown as "no schedule", not as an error.
  const schedule = useLoad(
    () =>
      api.permitSchedules.get.query({ permit_id: permitId }).catch((error: unknown) => {
        if (statusOf(error) === 404) return null;
        throw error;
      }),
    [permitId],
  );
  const charges = useLoad(() => api.permits.charges.query({ permit_id: permitId, limit: 50 }), [permitId]);
  const action = useAction();
  const revoke = async () => {
    if (!confirm(t("permit.revokeConfirm"))) return;
    await action.run(async () => {
      await api.permits.revoke.mutate({ permit_id: permitId });
      permit.reload();
      schedule.reload();
    });
  };
  const cancelSchedule = async () => {
    if (!confirm(t("permit.cancelScheduleConfirm"))) return;
    await action.run(async () => {
      await api.permitSchedules.cancel.mutate({ permit_id: permitId });
      schedule.reload();
    });
  };
  const putSchedule = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    await action.run(async () => {
      await api.permitSchedules.put.mutate({
        permit_id: permitId,
        amount: Number(form.get("amount")),
        interval: String(form.get("interval")) as "day" | "week" | "month",
        description: String(form.get("description") ?? "").trim(),
      });
      schedule.reload();
      charges.reload();
    });
  };
  const current = permit.data;
  return (
    <section aria-labelledby="permit-title">
      <p>
        <a href="#/permits">← {t("permits.title")}</a>
      </p>
      <h1 id="permit-title">
        {t("permit.title")} <span class="mono">{permitId}</span>
      </h1>
      <ErrorNote error={permit.error} />
      {permit.loading && !current ? <Loading /> : null}
      {current ? (
        <>
          <dl class="facts card" data-status={current.status}>
            <dt>{t("payments.state")}</dt>
            <dd>
              <StateBadge state={current.status} label={t(`permitStatus.${current.status}`)} />
            </dd>
            <dt>{t("permits.maxAmount")}</dt>
            <dd>
              <Amount amount={current.maxAmount} currency={current.currency} />
            </dd>
            <dt>{t("payments.description")}</dt>
            <dd>{current.description}</dd>
            <dt>{t("payment.customer")}</dt>
            <dd>{[current.customer.name, current.customer.email, formatPhone(current.customer.phone)].filter(Boolean).join(" · ") || "—"}</dd>
            <dt>{t("payment.method")}</dt>
            <dd>{current.paymentMethod ?? "—"}</dd>
            <dt>{t("payments.created")}</dt>
            <dd>
              <DateTime iso={current.createdAt} />
            </dd>
            <dt>{t("permit.activatedAt")}</dt>
            <dd>
              <DateTime iso={current.activatedAt} />
            </dd>
            <dt>{t("permit.endedAt")}</dt>
            <dd>
              <DateTime iso={current.endedAt} />
            </dd>
          </dl>
          {moneyOffered && (current.status === "active" || current.status === "pending") ? (
            <div class="actions">
              <button type="button" class="danger" onClick={revoke}>
                {t("permit.revoke")}
              </button>
            </div>
          ) : null}
          <ErrorNote error={action.error} />
          <h2>{t("permit.schedule")}</h2>
          <ErrorNote error={schedule.error} />
          {schedule.data === null ? <Empty>{t("permit.noSchedule")}</Empty> : null}
          {schedule.data ? (
            <dl class="facts card" data-testid="schedule">
              <dt>{t("payments.state")}</dt>
              <dd>{t(`scheduleStatus.${schedule.data.status}`)}</dd>
              <dt>{t("payments.amount")}</dt>
              <dd>
                <Amount amount={schedule.data.amount} currency={schedule.data.currency} />
              </dd>
              <dt>{t("permit.every")}</dt>
              <dd>{t(`interval.${schedule.data.interval}`, { count: schedule.data.intervalCount })}</dd>
              <dt>{t("permit.nextCharge")}</dt>
              <dd>
                <DateTime iso={schedule.data.nextChargeAt} />
              </dd>
            </dl>
          ) : null}
          {moneyOffered && schedule.data && schedule.data.status !== "cancelled" ? (
            <div class="actions">
              <button type="button" class="danger" onClick={cancelSchedule}>
                {t("permit.cancelSchedule")}
              </button>
            </div>
          ) : null}
          {moneyOffered && current.status === "active" && (schedule.data === null || schedule.data?.status === "cancelled") ? (
            <form class="inline-form card" onSubmit={putSchedule} aria-label={t("permit.newSchedule")}>
              <label>
                {t("payments.amount")}
                <input name="amount" type="number" inputMode="numeric" min={1} max={current.maxAmount} step={1} required />
              </label>
              <label>
                {t("permit.every")}
                <select name="interval">
                  <option value="month">{t("interval.month", { count: 1 })}</option>
                  <option value="week">{t("interval.week", { count: 1 })}</option>
                  <option value="day">{t("interval.day", { count: 1 })}</option>
                </select>
              </label>
              <label>
                {t("payments.description")}
                <input name="description" required maxLength={255} defaultValue={current.description} />
              </label>
              <button type="submit">{t("permit.newSchedule")}</button>
            </form>
          ) : null}
          <h2>{t("permit.charges")}</h2>
          <ListStates loaded={charges} items={(page) => page.data} empty={t("permit.noCharges")} quiet>
            {(list) => (
              <ListTable
                testid="charges"
                columns={[{ label: t("payments.created") }, { label: t("payments.amount") }, { label: t("payments.state") }, { label: t("payments.id") }]}
              >
                {list.map((charge) => (
                  <tr key={charge.chargeId}>
                    <CreatedAmountState
                      createdAt={charge.createdAt}
                      amount={charge.amount}
                      currency={charge.currency}
                      state={charge.status}
                      detail={charge.failReason}
                    />
                    <td>
                      <a class="mono id" title={charge.paymentId} href={`#/payments/${encodeURIComponent(charge.paymentId)}`}>
                        {charge.paymentId}
                      </a>
                    </td>
                  </tr>
                ))}
              </ListTable>
            )}
          </ListStates>
        </>
      ) : null}
    </section>
  );
}
