/**
 * Webhook endpoints: the list (`webhooks.list`) with each endpoint's health, and a form that creates one (`webhooks.create`), its
 * signing secret shown once with a copy button.
 */
import { useState } from "preact/hooks";
import type { Outputs } from "../../api.ts";
import { DateTime, ErrorNote, ReadOnlyNote, SecretOnce, useAction, useLoad } from "../../components.tsx";
import { may } from "../../permissions.ts";
import { ListStates, openRowOnClick } from "../../lists.tsx";
import { useDashboard } from "../../context.ts";
import { HealthLine } from "./health.tsx";

export type EventType = Outputs["events"]["get"]["type"];

/** The event types an endpoint may subscribe to (checked against the API's type). */
export const EVENT_TYPES = [
  "payment.completed",
  "payment.failed",
  "payment.cancelled",
  "payment.refunded",
  "permit.activated",
  "permit.declined",
  "permit.revoked",
  "permit.charge.succeeded",
  "permit.charge.failed",
  "permit.schedule.past_due",
  "payout.sent",
  "payout.failed",
  "refund.succeeded",
  "refund.failed",
  "payment_link.paid",
  "payment.rescue_available",
  "webhook.test",
] as const satisfies readonly EventType[];

/** Every type the API sends is offered: a type added to the API and not here fails `bun run typecheck`. */
type Unoffered = Exclude<EventType, (typeof EVENT_TYPES)[number]>;
const everyTypeOffered: [Unoffered] extends [never] ? true : Unoffered = true;
void everyTypeOffered;

export function WebhooksScreen() {
  const { api, session, t } = useDashboard();
  const endpoints = useLoad(() => api.webhooks.list.query(), []);
  const [created, setCreated] = useState<{ id: string; secret: string } | undefined>();
  const action = useAction();

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const events = form.getAll("events").map(String) as EventType[];
    const description = String(form.get("description") ?? "").trim();
    await action.run(async () => {
      const endpoint = await api.webhooks.create.mutate({
        url: String(form.get("url") ?? "").trim(),
        ...(events.length > 0 ? { events } : {}),
        ...(description ? { description } : {}),
      });
      setCreated({ id: endpoint.id, secret: endpoint.secret });
      formElement.reset();
      endpoints.reload();
    });
  };

  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">{t("webhooks.title")}</h1>
      <p class="hint">{t("webhooks.hint")}</p>
      {created ? <SecretOnce secret={created.secret} onDone={() => setCreated(undefined)} /> : null}
      <ListStates loaded={endpoints} items={(page) => page.data} empty={t("webhooks.none")}>
        {(list) => (
          // biome-ignore lint/a11y/useKeyWithClickEvents: a mouse's shortcut to each card's link, which the keyboard reaches itself
          <ul class="cards" data-testid="endpoints" onClick={openRowOnClick}>
            {list.map((endpoint) => (
              <li key={endpoint.id} class="card" data-webhook-id={endpoint.id}>
                <a href={`#/webhooks/${encodeURIComponent(endpoint.id)}`} class="mono" data-open>
                  {endpoint.url}
                </a>
                <div>
                  <HealthLine health={endpoint.health} />
                </div>
                {endpoint.health.lastError ? <div class="muted mono">{endpoint.health.lastError}</div> : null}
                <div class="muted">
                  {endpoint.description ? `${endpoint.description} · ` : ""}
                  {endpoint.events ? endpoint.events.join(", ") : t("webhooks.allEvents")} · {endpoint.enabled ? t("webhooks.enabled") : t("webhooks.disabled")}{" "}
                  · <DateTime iso={endpoint.createdAt} />
                </div>
              </li>
            ))}
          </ul>
        )}
      </ListStates>
      <ReadOnlyNote ability="webhooks" />
      {may(session, "webhooks") ? (
        <>
          <h2>{t("webhooks.create")}</h2>
          <form class="stack card" onSubmit={create}>
            <label>
              {t("webhooks.url")}
              <input name="url" type="url" required placeholder="https://" spellcheck={false} />
            </label>
            <label>
              {t("webhooks.description")}
              <input name="description" maxLength={500} />
            </label>
            <fieldset>
              <legend>{t("webhooks.events")}</legend>
              <p class="hint">{t("webhooks.eventsHint")}</p>
              {EVENT_TYPES.map((type) => (
                <label key={type} class="check">
                  <input type="checkbox" name="events" value={type} /> <span class="mono">{type}</span>
                </label>
              ))}
            </fieldset>
            <ErrorNote error={action.error} />
            <button type="submit" disabled={action.busy}>
              {t("webhooks.createSubmit")}
            </button>
          </form>
        </>
      ) : null}
    </section>
  );
}
