/**
 * One webhook endpoint: its health, its settings (enable or disable, delete), a test event, a new signing
 * secret (shown once), a replay of a window of events, the failed deliveries of a window sent again, and its
 * delivery log with attempts, every delivery or one state, paged with the API's cursors (`webhooks.get`,
 * `update`, `delete`, `test`, `rotateSecret`, `replay`, `recover`, `deliveries`).
 */
import { useState } from "preact/hooks";
import { DateTime, ErrorNote, Loading, ReadOnlyNote, SecretOnce, SectionHead, StatusNote, useAction, useLoad } from "../../components.tsx";
import { may } from "../../permissions.ts";
import { cursorOf, Pager, useAddress, usePages } from "../../lists.tsx";
import { useDashboard } from "../../context.ts";
import { DeliveryLog } from "./deliveries.tsx";
import { HealthFacts } from "./health.tsx";
import { EVENT_TYPES, type EventType } from "./webhooks.tsx";

/** The delivery log's filter: every delivery, or one state. */
type LogFilter = "all" | "failed" | "pending" | "succeeded";
const LOG_FILTERS: readonly LogFilter[] = ["all", "failed", "pending", "succeeded"];
const LOG_FILTER_LABEL = { all: "webhook.logAll", failed: "webhook.logFailed", pending: "webhook.logPending", succeeded: "webhook.logSucceeded" } as const;

/** A datetime-local field's value (the viewer's time zone) as an RFC 3339 instant. */
function instantOf(local: string): string {
  return new Date(local).toISOString();
}

/** `datetime-local`'s format for a moment, in the viewer's time zone. */
function localValue(date: Date): string {
  const shifted = new Date(date.getTime() - date.getTimezoneOffset() * 60_000);
  return shifted.toISOString().slice(0, 16);
}

export function WebhookScreen({ webhookId }: { webhookId: string }) {
  const { api, session, t, navigate } = useDashboard();
  const endpoint = useLoad(() => api.webhooks.get.query({ webhook_id: webhookId }), [webhookId]);
  // The log's filter and page live in the address (`#/webhooks/wh_…?state=failed&page=…`).
  const address = useAddress(`#/webhooks/${encodeURIComponent(webhookId)}`);
  const filter = LOG_FILTERS.find((value) => value === address.query.get("state")) ?? "all";
  const deliveries = usePages(
    (cursor) => api.webhooks.deliveries.query({ webhook_id: webhookId, limit: 20, ...(filter === "all" ? {} : { state: filter }), ...cursorOf(cursor) }),
    [webhookId, filter],
    address.pages(),
  );
  const [secret, setSecret] = useState<string | undefined>();
  const [status, setStatus] = useState<string | undefined>();
  const action = useAction();

  /** Runs an action, then says `done` and reloads the endpoint and its log; a failure shows the API's message. */
  const act = (run: () => Promise<unknown>, done: string) => {
    setStatus(undefined);
    return action.run(async () => {
      await run();
      if (done) setStatus(done);
      endpoint.reload();
      deliveries.reload();
    });
  };

  const replay = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    return act(async () => {
      const answer = await api.webhooks.replay.mutate({ webhook_id: webhookId, since: instantOf(String(form.get("since"))) });
      setStatus(t("webhook.replayed", { count: answer.replayed }));
    }, "");
  };

  const recover = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    return act(async () => {
      const answer = await api.webhooks.recover.mutate({ webhook_id: webhookId, since: instantOf(String(form.get("since"))) });
      setStatus(t("webhook.recovered", { count: answer.recovered }));
    }, "");
  };

  const saveEvents = (event: SubmitEvent) => {
    event.preventDefault();
    const events = new FormData(event.currentTarget as HTMLFormElement).getAll("events").map(String) as EventType[];
    // Nothing ticked is every event (null), as when the endpoint was created.
    return act(() => api.webhooks.update.mutate({ webhook_id: webhookId, events: events.length > 0 ? events : null }), t("webhook.saved"));
  };

  const current = endpoint.data;
  return (
    <section aria-labelledby="webhook-title">
      <p>
        <a href="#/webhooks">← {t("webhooks.title")}</a>
      </p>
      <h1 id="webhook-title">{t("webhook.title")}</h1>
      <ErrorNote error={endpoint.error} />
      {endpoint.loading && !current ? <Loading /> : null}
      {current ? (
        <>
          <dl class="facts card">
            <dt>{t("webhooks.url")}</dt>
            <dd class="mono">{current.url}</dd>
            <dt>{t("webhooks.events")}</dt>
            <dd>{current.events ? current.events.join(", ") : t("webhooks.allEvents")}</dd>
            <dt>{t("webhook.state")}</dt>
            <dd>
              {current.enabled ? t("webhooks.enabled") : t("webhooks.disabled")}
              {current.disabledReason ? ` (${current.disabledReason})` : ""}
            </dd>
            <dt>{t("payments.created")}</dt>
            <dd>
              <DateTime iso={current.createdAt} />
            </dd>
          </dl>
          <HealthFacts health={current.health} />
          <ReadOnlyNote ability="webhooks" />
          {may(session, "webhooks") ? (
            <>
              <div class="actions">
                <button type="button" onClick={() => act(() => api.webhooks.test.mutate({ webhook_id: webhookId }), t("webhook.testSent"))}>
                  {t("webhook.test")}
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={() => act(async () => setSecret((await api.webhooks.rotateSecret.mutate({ webhook_id: webhookId })).secret), t("webhook.rotated"))}
                >
                  {t("webhook.rotate")}
                </button>
                <button
                  type="button"
                  class="secondary"
                  onClick={() => act(() => api.webhooks.update.mutate({ webhook_id: webhookId, enabled: !current.enabled }), t("webhook.saved"))}
                >
                  {current.enabled ? t("webhook.disable") : t("webhook.enable")}
                </button>
                <button
                  type="button"
                  class="danger"
                  onClick={() =>
                    confirm(t("webhook.deleteConfirm")) &&
                    act(async () => {
                      await api.webhooks.delete.mutate({ webhook_id: webhookId });
                      navigate("#/webhooks");
                    }, "")
                  }
                >
                  {t("webhook.delete")}
                </button>
              </div>
              {secret ? <SecretOnce secret={secret} onDone={() => setSecret(undefined)} /> : null}
              <StatusNote>{status}</StatusNote>
              <ErrorNote error={action.error} />
              <details class="card">
                <summary>{t("webhook.editEvents")}</summary>
                <form class="stack" onSubmit={saveEvents} key={(current.events ?? []).join(",")}>
                  <p class="hint">{t("webhooks.eventsHint")}</p>
                  {EVENT_TYPES.map((type) => (
                    <label key={type} class="check">
                      <input type="checkbox" name="events" value={type} defaultChecked={current.events?.includes(type) ?? false} />{" "}
                      <span class="mono">{type}</span>
                    </label>
                  ))}
                  <button type="submit">{t("settings.save")}</button>
                </form>
              </details>
              <form class="inline-form" onSubmit={replay}>
                <label>
                  {t("webhook.replaySince")}
                  <input name="since" type="datetime-local" required defaultValue={localValue(new Date(Date.now() - 24 * 3600_000))} />
                </label>
                <button type="submit" class="secondary">
                  {t("webhook.replay")}
                </button>
              </form>
              <form class="inline-form" onSubmit={recover}>
                <label>
                  {t("webhook.recoverSince")}
                  <input name="since" type="datetime-local" required defaultValue={localValue(new Date(Date.now() - 24 * 3600_000))} />
                </label>
                <button type="submit" class="secondary">
                  {t("webhook.recover")}
                </button>
              </form>
            </>
          ) : null}
          <SectionHead title={t("webhook.log")} onRefresh={deliveries.reload} />
          <div class="inline-form">
            <label>
              {t("webhook.logFilter")}
              <select
                name="state"
                value={filter}
                onChange={(event) => {
                  // A new filter starts from its first page: the cursors of another list mean nothing to it.
                  const chosen = (event.currentTarget as HTMLSelectElement).value as LogFilter;
                  address.set({ state: chosen === "all" ? undefined : chosen, page: undefined });
                }}
              >
                {LOG_FILTERS.map((value) => (
                  <option key={value} value={value}>
                    {t(LOG_FILTER_LABEL[value])}
                  </option>
                ))}
              </select>
            </label>
          </div>
          <ErrorNote error={deliveries.error} />
          {deliveries.data ? <DeliveryLog deliveries={deliveries.data.data} onChanged={deliveries.reload} /> : null}
          <Pager pages={deliveries} />
        </>
      ) : null}
    </section>
  );
}
