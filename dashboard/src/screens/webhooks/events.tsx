/**
 * Events: the tenant's event log of the last 30 days, newest first, filtered by type and paged with the
 * API's cursors (`events.list`) — what its webhook endpoints were sent, with each event's data.
 */
import { DateTime } from "../../components.tsx";
import { AnySelect, cursorOf, ListStates, openRowOnClick, Pager, useAddress, usePages } from "../../lists.tsx";
import { useDashboard } from "../../context.ts";
import { EVENT_TYPES, type EventType } from "./webhooks.tsx";

export function EventsScreen() {
  const { api, t } = useDashboard();
  // The type and the page live in the address (`#/events?type=payment.completed&page=…`).
  const address = useAddress("#/events");
  const type: EventType | "" = EVENT_TYPES.find((value) => value === address.query.get("type")) ?? "";
  const events = usePages((cursor) => api.events.list.query({ limit: 20, ...(type ? { type } : {}), ...cursorOf(cursor) }), [type], address.pages());
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
          initial={type}
          onChange={(value) => address.set({ type: value, page: undefined })}
        />
      </div>
      <ListStates loaded={events} items={(page) => page.data} empty={t("events.none")}>
        {(list) => (
          // biome-ignore lint/a11y/useKeyWithClickEvents: a mouse's shortcut to each card's own control, which the keyboard reaches itself
          <ul class="cards" data-testid="events" onClick={openRowOnClick}>
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
                    <summary data-open>{t("events.data")}</summary>
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
