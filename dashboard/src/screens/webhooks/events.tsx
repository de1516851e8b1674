/**
 * Events: the tenant's event log of the last 30 days, newest first, filtered by type and paged with the
 * API's cursors (`events.list`) — what its webhook endpoints were sent, with each event's data.
 */
import { useState } from "preact/hooks";
import { DateTime, Empty, ErrorNote, Loading, useLoad } from "../../components.tsx";
import { useDashboard } from "../../context.ts";
import { EVENT_TYPES, type EventType } from "./webhooks.tsx";

export function EventsScreen() {
  const { api, t } = useDashboard();
  const [type, setType] = useState<EventType | "">("");
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const events = useLoad(() => api.events.list.query({ limit: 20, ...(type ? { type } : {}), ...(cursor ? { cursor } : {}) }), [type, cursor]);
  return (
    <section aria-labelledby="events-title">
      <h1 id="events-title">{t("events.title")}</h1>
      <p class="hint">{t("events.hint")}</p>
      <div class="filters">
        <label>
          {t("events.type")}
          <select
            name="type"
            onChange={(event) => {
              setCursors([]);
              setType((event.currentTarget as HTMLSelectElement).value as EventType | "");
            }}
          >
            <option value="">{t("filters.any")}</option>
            {EVENT_TYPES.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNote error={events.error} />
      {events.loading && !events.data ? <Loading /> : null}
      {events.data && events.data.data.length === 0 ? <Empty>{t("events.none")}</Empty> : null}
      {events.data && events.data.data.length > 0 ? (
        <ul class="cards" data-testid="events">
          {events.data.data.map((event) => {
            const paymentId = typeof event.data.paymentId === "string" ? event.data.paymentId : undefined;
            return (
              <li key={event.id} class="card" data-event-id={event.id} data-event-type={event.type}>
                <div class="card-head">
                  <span class="mono">{event.type}</span>
                  <DateTime iso={event.createdAt} />
                  <span class="spacer" />
                  {paymentId ? <a href={`#/payments/${encodeURIComponent(paymentId)}`}>{t("events.payment")}</a> : null}
                </div>
                <div class="muted mono">{event.id}</div>
                <details>
                  <summary>{t("events.data")}</summary>
                  <pre class="json">{JSON.stringify(event.data, null, 2)}</pre>
                </details>
              </li>
            );
          })}
        </ul>
      ) : null}
      <div class="pager">
        <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          {t("pager.previous")}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={!events.data?.nextCursor}
          onClick={() => events.data?.nextCursor && setCursors([...cursors, events.data.nextCursor])}
        >
          {t("pager.next")}
        </button>
      </div>
    </section>
  );
}
