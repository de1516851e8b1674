/**
 * One payment: what it is (amount, state, provider ids, customer, the provider keys it was made with), its
 * timeline — its states, the providers it was tried on, the events about it and its refunds, in time order —
 * its refunds and the deliveries of its events with their attempts (`payments.get`, `events.list` with
 * `paymentId`, `payouts.refunds`, `payments.deliveries`). Another tenant's payment is the API's 404, shown as
 * its message.
 */
import type { Outputs } from "../../api.ts";
import { Amount, DateTime, ErrorNote, Loading, providerLabel, SectionHead, StateBadge, useLoad } from "../../components.tsx";
import { useDashboard } from "../../context.ts";
import { formatAmount, type MessageKey } from "../../i18n.ts";
import { hashOf } from "../../routes.ts";
import { versionAnchor } from "../account/credential-versions.tsx";
import { DeliveryLog } from "../webhooks/deliveries.tsx";
import { rescueOffer, rescueTryLabel } from "../links/rescue-timeline.ts";
import { type Refund, RefundsSection } from "./refunds.tsx";
import { formatPhone } from "../../phones.ts";

type PaymentDetail = Outputs["payments"]["get"];
type Attempt = PaymentDetail["attempts"][number];
type Event = Outputs["events"]["list"]["data"][number];

interface TimelineEntry {
  at: string;
  kind: "created" | "attempt" | "event" | "refund" | "final";
  label: string;
  detail?: string;
  state?: string;
  eventType?: string;
  /** A link the entry carries (a rescue offer's URL, to send to the customer). */
  href?: string;
}

const ATTEMPT_OUTCOMES: Record<Attempt["outcome"], MessageKey> = {
  started: "timeline.attempt.started",
  refused: "timeline.attempt.refused",
  unreachable: "timeline.attempt.unreachable",
  circuit_open: "timeline.attempt.circuit_open",
  unknown: "timeline.attempt.unknown",
  failed: "timeline.attempt.failed",
};

/**
 * The payment's life in time order: created, each provider it was tried on, each event about it, each
 * refund (asked, then its end), the final state. Entries of the same moment keep that order.
 */
export function timelineOf(
  payment: PaymentDetail,
  events: Event[],
  refunds: Refund[],
  t: ReturnType<typeof useDashboard>["t"],
  amount: (value: number) => string,
): TimelineEntry[] {
  const entries: TimelineEntry[] = [{ at: payment.createdAt, kind: "created", label: t("timeline.created"), state: "pending" }];
  for (const attempt of payment.attempts)
    entries.push({
      at: attempt.createdAt,
      kind: "attempt",
      label: rescueTryLabel(attempt, t) ?? t(ATTEMPT_OUTCOMES[attempt.outcome], { provider: providerLabel(attempt.provider), attempt: attempt.attempt }),
      detail: [attempt.reason, attempt.error].filter(Boolean).join(" — "),
    });
  for (const event of events) {
    const rescue = rescueOffer(event, t);
    entries.push({
      at: event.createdAt,
      kind: "event",
      label: rescue?.label ?? t("timeline.event", { type: event.type }),
      eventType: event.type,
      href: rescue?.url,
    });
  }
  for (const refund of refunds) {
    entries.push({
      at: refund.createdAt,
      kind: "refund",
      label: t("timeline.refundAsked", { amount: amount(refund.amount) }),
      detail: refund.reason ?? undefined,
    });
    if (refund.succeededAt)
      entries.push({ at: refund.succeededAt, kind: "refund", label: t("timeline.refunded", { amount: amount(refund.amount) }), state: "succeeded" });
  }
  if (payment.completedAt) entries.push({ at: payment.completedAt, kind: "final", label: t("timeline.final"), state: payment.state });
  const order = entries.map((entry, index) => ({ entry, index }));
  order.sort((a, b) => Date.parse(a.entry.at) - Date.parse(b.entry.at) || a.index - b.index);
  return order.map(({ entry }) => entry);
}

export function PaymentScreen({ paymentId }: { paymentId: string }) {
  const { api, language, t } = useDashboard();
  const payment = useLoad(() => api.payments.get.query({ payment_id: paymentId }), [paymentId]);
  const updatedAt = payment.data?.updatedAt;
  const events = useLoad(() => api.events.list.query({ paymentId, limit: 100 }), [paymentId, updatedAt]);
  const refunds = useLoad(() => api.payouts.refunds.query({ payment_id: paymentId, limit: 100 }), [paymentId, updatedAt]);
  const deliveries = useLoad(() => api.payments.deliveries.query({ payment_id: paymentId, limit: 100 }), [paymentId]);
  const reload = () => {
    payment.reload();
    events.reload();
    refunds.reload();
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
          <SectionHead title={t("payment.timeline")} onRefresh={reload} />
          <ErrorNote error={events.error} />
          <ol class="timeline" data-testid="timeline">
            {timelineOf(payment.data, events.data?.data ?? [], refunds.data?.data ?? [], t, (value) =>
              formatAmount(language, value, payment.data!.currency),
            ).map((entry) => (
              <li key={`${entry.at}${entry.kind}${entry.label}`} data-kind={entry.kind} data-event-type={entry.eventType}>
                <DateTime iso={entry.at} /> <span>{entry.label}</span> {entry.state ? <StateBadge state={entry.state} /> : null}
                {entry.detail ? <div class="muted">{entry.detail}</div> : null}
                {entry.href ? (
                  <div>
                    {t("timeline.rescueUrl")}{" "}
                    <a href={entry.href} class="mono" target="_blank" rel="noopener noreferrer">
                      {entry.href}
                    </a>
                  </div>
                ) : null}
              </li>
            ))}
          </ol>
          <RefundsSection payment={payment.data} refunds={refunds} onChanged={reload} />
          <div data-testid="payment-deliveries">
            <SectionHead title={t("payment.deliveries")} onRefresh={reload} />
            <ErrorNote error={deliveries.error} />
            {deliveries.data ? <DeliveryLog deliveries={deliveries.data.data} onChanged={deliveries.reload} /> : null}
          </div>
        </>
      ) : null}
    </section>
  );
}

/** Which keys the payment was made with: the tenant's own (a version Settings lists) or the gateway's account. */
function CredentialsFact({ payment }: { payment: PaymentDetail }) {
  const { t } = useDashboard();
  const provider = providerLabel(payment.provider);
  if (payment.credentialVersion === null) return <span data-testid="credential-version">{t("payment.gatewayAccount", { provider })}</span>;
  return (
    <span data-testid="credential-version" data-version={payment.credentialVersion}>
      {t("payment.credentialVersion", { provider, version: payment.credentialVersion })}{" "}
      <a href={hashOf({ screen: "settings", version: versionAnchor(payment.provider, payment.environment, payment.credentialVersion) })}>
        {t("payment.seeVersions")}
      </a>
    </span>
  );
}

function PaymentFacts({ payment }: { payment: PaymentDetail }) {
  const { t } = useDashboard();
  const rows: [string, preact.ComponentChildren][] = [
    [t("payments.amount"), <Amount key="amount" amount={payment.amount} currency={payment.currency} />],
    [t("payments.state"), <StateBadge key="state" state={payment.state} />],
    [t("payments.description"), payment.description],
    [t("payments.provider"), providerLabel(payment.provider)],
    [t("payment.credentials"), <CredentialsFact key="credentials" payment={payment} />],
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
    [
      t("payment.customer"),
      payment.customer ? [payment.customer.name, payment.customer.email, formatPhone(payment.customer.phone)].filter(Boolean).join(" · ") : "—",
    ],
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
