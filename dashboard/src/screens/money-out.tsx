/**
 * One payout or refund (`#/money/po_…`, `#/money/rf_…`): what a row of Balance & payouts opens — its amount,
 * state, wallet, provider and dates, the payment a refund gives back, and the ledger's entries it moved
 * (`payouts.get` or `payouts.getRefund`, `balance.entries` with its `subjectId`).
 */
import type { ComponentChildren } from "preact";
import type { Outputs } from "../api.ts";
import { Amount, DateTime, ErrorNote, Loading, providerLabel, StateBadge, useLoad } from "../components.tsx";
import { useDashboard } from "../context.ts";
import { ListStates, ListTable } from "../lists.tsx";
import { formatPhone } from "../phones.ts";
import { walletName } from "../wallets.ts";
import { EntryCells } from "./money-lists.tsx";

type Payout = Outputs["payouts"]["get"];
type Refund = Outputs["payouts"]["getRefund"];

export function MoneyOutScreen({ id }: { id: string }) {
  const { api, t } = useDashboard();
  const refund = id.startsWith("rf_");
  const record = useLoad<{ payout?: Payout; refund?: Refund }>(
    async () => (refund ? { refund: await api.payouts.getRefund.query({ refund_id: id }) } : { payout: await api.payouts.get.query({ payout_id: id }) }),
    [id],
  );
  const entries = useLoad(() => api.balance.entries.query({ subjectId: id, limit: 100 }), [id]);
  const current = record.data?.payout ?? record.data?.refund;
  return (
    <section aria-labelledby="money-out-title">
      <p>
        <a href="#/money">{t("money.back")}</a>
      </p>
      <h1 id="money-out-title">{t(refund ? "moneyOut.refund" : "moneyOut.payout")}</h1>
      <p class="mono">{id}</p>
      <ErrorNote error={record.error} />
      {record.loading && !current ? <Loading /> : null}
      {current ? <MoneyOutFacts payout={record.data?.payout} refund={record.data?.refund} /> : null}
      <h2>{t("money.entries")}</h2>
      <ListStates loaded={entries} items={(page) => page.data} empty={t("money.noEntries")}>
        {(list) => (
          <ListTable testid="entries" columns={[{ label: t("payments.created") }, { label: t("payments.amount") }, { label: t("money.entryAccount") }]}>
            {list.map((entry) => (
              <tr key={entry.id} data-entry-id={entry.id}>
                <EntryCells entry={entry} />
              </tr>
            ))}
          </ListTable>
        )}
      </ListStates>
    </section>
  );
}

function MoneyOutFacts({ payout, refund }: { payout: Payout | undefined; refund: Refund | undefined }) {
  const { t, language } = useDashboard();
  const current = (payout ?? refund)!;
  const rows: [string, ComponentChildren][] = [
    [t("payments.amount"), <Amount key="amount" amount={current.amount} currency={current.currency} />],
    [t("payments.state"), <StateBadge key="state" state={current.state} />],
    [
      t("money.recipient"),
      `${formatPhone(current.recipient.phone.number)} · ${walletName(language, current.recipient.operator, current.recipient.phone.country)}`,
    ],
    [t("payments.provider"), providerLabel(current.provider)],
    refund
      ? [
          t("refunds.payment"),
          <a key="payment" class="mono" href={`#/payments/${encodeURIComponent(refund.paymentId)}`}>
            {refund.paymentId}
          </a>,
        ]
      : [t("payments.description"), payout?.description],
    [t("payments.created"), <DateTime key="created" iso={current.createdAt} />],
    [refund ? t("money.succeededAt") : t("money.sentAt"), <DateTime key="done" iso={refund ? refund.succeededAt : (payout?.sentAt ?? null)} />],
  ];
  if (current.failureCode) rows.push([t("payment.failureCode"), current.failureCode]);
  return (
    <dl class="facts card" data-testid="money-out-facts" data-state={current.state}>
      {rows.map(([label, value]) => (
        <>
          <dt>{label}</dt>
          <dd>{value}</dd>
        </>
      ))}
    </dl>
  );
}
