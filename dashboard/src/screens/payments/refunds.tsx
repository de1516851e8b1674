/**
 * A payment's refunds: what has been given back and what is left, each refund with its state, and a form
 * that refunds all or part of what is left to the wallet that paid (`payouts.refunds`, `payouts.refund`).
 * What is left is the payment's amount less its refunds that have not failed, as the API counts it.
 */
import { codeOf, type Outputs, type Payment } from "../../api.ts";
import { CreatedAmountState, ErrorNote, type Loaded, SectionHead, useAction } from "../../components.tsx";
import { ListTable } from "../../lists.tsx";
import { useDashboard } from "../../context.ts";
import { formatAmount } from "../../i18n.ts";
import { may } from "../../permissions.ts";

export type Refund = Outputs["payouts"]["getRefund"];
export type RefundPage = Outputs["payouts"]["refunds"];

/** The payment's amount less its refunds that are pending or succeeded. */
export function refundableOf(payment: Payment, refunds: Refund[]): number {
  const taken = refunds.filter((refund) => refund.state !== "failed").reduce((sum, refund) => sum + refund.amount, 0);
  return Math.max(payment.amount - taken, 0);
}

/** `refunds` is the payment's refunds as its page loaded them (`payouts.refunds`), which its timeline shows too. */
export function RefundsSection({ payment, refunds, onChanged }: { payment: Payment; refunds: Loaded<RefundPage>; onChanged: () => void }) {
  const { api, language, session, t } = useDashboard();
  const action = useAction();
  const list = refunds.data?.data ?? [];
  const left = refundableOf(payment, list);
  // Only a collected payment can be refunded: a pending, failed or cancelled one says nothing of refunds left.
  const collected = payment.state === "succeeded" || payment.state === "refunded";
  const refundable = refunds.data !== undefined && left > 0 && collected;
  // A role that may not move money is not offered the refund (the API refuses it anyway: docs/team.md).
  const offered = refundable && may(session, "money");

  const refund = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const amount = Number(form.get("amount"));
    const reason = String(form.get("reason") ?? "").trim();
    if (!confirm(t("refunds.confirm", { amount: formatAmount(language, amount, payment.currency) }))) return;
    await action.run(async () => {
      await api.payouts.refund.mutate({ payment_id: payment.id, amount, ...(reason ? { reason } : {}) });
      refunds.reload();
      onChanged();
    });
  };

  return (
    <div data-testid="refunds">
      <SectionHead
        title={t("refunds.title")}
        onRefresh={() => {
          refunds.reload();
          onChanged();
        }}
      />
      <ErrorNote error={refunds.error} />
      {refunds.data && collected ? (
        <p data-testid="refund-left">
          {t("refunds.left", {
            amount: formatAmount(language, left, payment.currency),
            refunded: formatAmount(language, payment.amountRefunded, payment.currency),
          })}
        </p>
      ) : null}
      {list.length > 0 ? (
        <ListTable
          columns={[
            { label: t("payments.created") },
            { label: t("payments.amount") },
            { label: t("payments.state") },
            { label: t("refunds.reason"), wide: true },
          ]}
        >
          {list.map((item) => (
            <tr key={item.id} data-refund-id={item.id} data-state={item.state}>
              <CreatedAmountState createdAt={item.createdAt} amount={item.amount} currency={item.currency} state={item.state} detail={item.failureCode} />
              <td class="wide-only">{item.reason ?? "—"}</td>
            </tr>
          ))}
        </ListTable>
      ) : null}
      {offered ? (
        <form class="inline-form" onSubmit={refund} key={left}>
          <label>
            {t("refunds.amount")}
            <input name="amount" type="number" inputMode="numeric" min={1} max={left} step={1} required defaultValue={String(left)} />
          </label>
          <label>
            {t("refunds.reason")}
            <input name="reason" maxLength={255} />
          </label>
          <button type="submit" class="danger" disabled={action.busy}>
            {t("refunds.submit")}
          </button>
        </form>
      ) : null}
      <ErrorNote error={action.error} />
      {codeOf(action.error) === "insufficient_balance" ? (
        <p class="hint" data-testid="insufficient-hint">
          {t("refunds.insufficientHint")}
        </p>
      ) : null}
    </div>
  );
}
