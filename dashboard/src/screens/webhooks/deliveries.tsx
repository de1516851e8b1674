/**
 * A delivery log (a payment's, or a webhook endpoint's): each delivery with its event, state, next retry
 * and every attempt (time, status code, duration, error, the start of the answer), and a button that
 * delivers it again now (`webhooks.retry`).
 */
import { useState } from "preact/hooks";
import type { Delivery } from "../../api.ts";
import { DateTime, Empty, ErrorNote, StateBadge, StatusNote, useAction } from "../../components.tsx";
import { ListTable } from "../../lists.tsx";
import { may } from "../../permissions.ts";
import { useDashboard } from "../../context.ts";

export function DeliveryLog({ deliveries, onChanged }: { deliveries: Delivery[]; onChanged: () => void }) {
  const { t } = useDashboard();
  if (deliveries.length === 0) return <Empty>{t("deliveries.none")}</Empty>;
  return (
    <ul class="deliveries" data-testid="deliveries">
      {deliveries.map((delivery) => (
        <DeliveryItem key={delivery.id} delivery={delivery} onChanged={onChanged} />
      ))}
    </ul>
  );
}

function DeliveryItem({ delivery, onChanged }: { delivery: Delivery; onChanged: () => void }) {
  const { api, session, t } = useDashboard();
  const action = useAction();
  const [asked, setAsked] = useState(false);
  const deliverAgain = () =>
    action.run(async () => {
      await api.webhooks.retry.mutate({ delivery_id: delivery.id });
      setAsked(true);
      onChanged();
    });
  return (
    <li class="card delivery" data-delivery-id={delivery.id} data-event-type={delivery.eventType} data-state={delivery.state}>
      <div class="card-head">
        <span class="mono">{delivery.eventType}</span>
        <StateBadge state={delivery.state} />
        <span class="muted">{t("deliveries.attempts", { count: delivery.attemptCount })}</span>
        <span class="spacer" />
        {may(session, "webhooks") ? (
          <button type="button" class="secondary" onClick={deliverAgain} disabled={action.busy}>
            {t("deliveries.deliverAgain")}
          </button>
        ) : null}
      </div>
      <dl class="facts">
        <dt>{t("deliveries.target")}</dt>
        <dd class="mono">{delivery.targetUrl ?? delivery.attempts.at(-1)?.url ?? delivery.endpointId ?? "—"}</dd>
        <dt>{t("deliveries.event")}</dt>
        <dd class="mono">{delivery.eventId}</dd>
        {delivery.nextAttemptAt && delivery.state === "pending" ? (
          <>
            <dt>{t("deliveries.nextAttempt")}</dt>
            <dd>
              <DateTime iso={delivery.nextAttemptAt} />
            </dd>
          </>
        ) : null}
        {delivery.deliveredAt ? (
          <>
            <dt>{t("deliveries.deliveredAt")}</dt>
            <dd>
              <DateTime iso={delivery.deliveredAt} />
            </dd>
          </>
        ) : null}
      </dl>
      <StatusNote>{asked ? t("deliveries.asked") : null}</StatusNote>
      <ErrorNote error={action.error} />
      {delivery.attempts.length > 0 ? (
        <ListTable
          class="attempts"
          columns={[
            { label: "#" },
            { label: t("deliveries.when") },
            { label: t("deliveries.status") },
            { label: t("deliveries.duration") },
            { label: t("deliveries.answer") },
          ]}
        >
          {delivery.attempts.map((attempt) => (
            <tr key={attempt.attempt} data-status={attempt.status ?? "none"}>
              <td>{attempt.attempt}</td>
              <td>
                <DateTime iso={attempt.attemptedAt} />
              </td>
              <td>{attempt.status ?? t("deliveries.noAnswer")}</td>
              <td>{attempt.durationMs} ms</td>
              <td class="excerpt">{attempt.error ?? attempt.responseBody?.slice(0, 200) ?? ""}</td>
            </tr>
          ))}
        </ListTable>
      ) : null}
    </li>
  );
}
