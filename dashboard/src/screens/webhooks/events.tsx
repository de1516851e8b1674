/**
 * Events: the tenant's event log of the last 30 days, newest first, filtered by type and paged with the
 * API's cursors (`events.list`) — what its webhook endpoints were sent, with each event's data.
 */
import { useState } from "preact/hooks";
import { DateTime } from "../../components.tsx";
import { AnySelect, cursorOf, ListStates, Pager, usePages } from "../../lists.tsx";
import { useDashboard } from "../../context.ts";
import { EVENT_TYPES, type EventType } from "./webhooks.tsx";

export function EventsScreen() {
  const { api, t } = useDashboard();
  const [type, setType] = useState<EventType | "">("");
  const events = usePages((cursor) => api.events.list.query({ limit: 20, ...(type ? { type } : {}), ...cursorOf(cursor) }), [type]);
  return (
    <section aria-labelledby="events-title">
      <h1 id="events-title">{t("events.title")}</h1>
      <p class="hint">{t("events.hint")}</p>
      <div class="filters">
        <AnySelect
          label={t("events.type")}
          name="type"
          values={EVENT_TYPES}
          labelOf={(value) => value}
          onChange={(value) => {
            events.restart();
            setType(value);
          }}
        />
      </div>
      <ListStates loaded={events} items={(page) => page.data} empty={t("events.none")}>
        {(list) => (
          <ul class="cards" data-testid="events">
            {list.map((event) => {
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
        )}
      </ListStates>
      <Pager pages={events} />
    </section>
  );
}
