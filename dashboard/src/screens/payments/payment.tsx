/**
 * One payment: what it is (amount, state, provider ids, customer), its timeline of states and events, and
 * the deliveries of its events with their attempts (`payments.get`, `payments.deliveries`). Another
 * tenant's payment is the API's 404, shown as its message.
 */
import type { Delivery, Payment } from "../../api.ts";
import { Amount, DateTime, ErrorNote, Loading, providerLabel, StateBadge, useLoad } from "../../components.tsx";
import { useDashboard } from "../../context.ts";
import { DeliveryLog } from "../webhooks/deliveries.tsx";
import { RefundsSection } from "./refunds.tsx";

interface TimelineEntry {
  at: string;
  label: string;
  state?: string;
}

/** The payment's life in time order: created, each event it gave rise to, the final state. */
function timelineOf(payment: Payment, deliveries: Delivery[], t: ReturnType<typeof useDashboard>["t"]): TimelineEntry[] {
  const entries: TimelineEntry[] = [{ at: payment.createdAt, label: t("timeline.created"), state: "pending" }];
  const seen = new Set<string>();
  for (const delivery of deliveries) {
    if (seen.has(delivery.eventId)) continue;
    seen.add(delivery.eventId);
    entries.push({ at: delivery.createdAt, label: t("timeline.event", { type: delivery.eventType }) });
  }
  if (payment.completedAt) entries.push({ at: payment.completedAt, label: t("timeline.final"), state: payment.state });
  return entries.sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
}

export function PaymentScreen({ paymentId }: { paymentId: string }) {
  const { api, t } = useDashboard();
  const payment = useLoad(() => api.payments.get.query({ payment_id: paymentId }), [paymentId]);
  const deliveries = useLoad(() => api.payments.deliveries.query({ payment_id: paymentId, limit: 100 }), [paymentId]);
  const reload = () => {
    payment.reload();
    deliveries.reload();
  };
  return (
    <section aria-labelledby="payment-title">
      <p>
        <a href="#/payments">← {t("payments.title")}</a>
      </p>
      <h1 id="payment-title">
        {t("payment.title")} <span class="mono">{paymentId}</span>
      </h1>
      <ErrorNote error={payment.error} />
      {payment.loading && !payment.data ? <Loading /> : null}
      {payment.data ? <PaymentFacts payment={payment.data} /> : null}
      {payment.data ? (
        <>
          <h2>{t("payment.timeline")}</h2>
          <ol class="timeline" data-testid="timeline">
            {timelineOf(payment.data, deliveries.data?.data ?? [], t).map((entry) => (
              <li key={`${entry.at}${entry.label}`}>
                <DateTime iso={entry.at} /> <span>{entry.label}</span> {entry.state ? <StateBadge state={entry.state} /> : null}
              </li>
            ))}
          </ol>
          <RefundsSection payment={payment.data} onChanged={payment.reload} />
          <div data-testid="payment-deliveries">
            <div class="section-head">
              <h2>{t("payment.deliveries")}</h2>
              <button type="button" class="secondary" onClick={reload}>
                {t("refresh")}
              </button>
            </div>
            <ErrorNote error={deliveries.error} />
            {deliveries.data ? <DeliveryLog deliveries={deliveries.data.data} onChanged={deliveries.reload} /> : null}
          </div>
        </>
      ) : null}
    </section>
  );
}

function PaymentFacts({ payment }: { payment: Payment }) {
  const { t } = useDashboard();
  const rows: [string, preact.ComponentChildren][] = [
    [t("payments.amount"), <Amount key="amount" amount={payment.amount} currency={payment.currency} />],
    [t("payments.state"), <StateBadge key="state" state={payment.state} />],
    [t("payments.description"), payment.description],
    [t("payments.provider"), providerLabel(payment.provider)],
    [t("payments.kind"), t(`kind.${payment.kind}`)],
    [
      t("payment.providerTransactionId"),
      <span key="ptid" class="mono">
        {payment.providerTransactionId ?? "—"}
      </span>,
    ],
    [t("payment.providerStatus"), payment.providerStatus ?? "—"],
    [t("payment.reference"), payment.reference ?? payment.providerReference ?? "—"],
    [t("payment.method"), payment.paymentMethod ?? "—"],
    [t("payment.customer"), payment.customer ? [payment.customer.name, payment.customer.email, payment.customer.phone].filter(Boolean).join(" · ") : "—"],
    [t("payments.created"), <DateTime key="created" iso={payment.createdAt} />],
    [t("payment.completed"), <DateTime key="completed" iso={payment.completedAt} />],
  ];
  if (payment.amountRefunded > 0) rows.push([t("payment.refunded"), <Amount key="refunded" amount={payment.amountRefunded} currency={payment.currency} />]);
  if (payment.failureCode) rows.push([t("payment.failureCode"), payment.failureCode]);
  if (payment.outcomeUnknown) rows.push([t("payment.outcomeUnknown"), t("payment.outcomeUnknownHint")]);
  return (
    <dl class="facts card" data-testid="payment-facts" data-state={payment.state}>
      {rows.map(([label, value]) => (
        <>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </>
      ))}
    </dl>
  );
}
