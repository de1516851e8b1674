/**
 * A test payment, in sandbox only: a provider B checkout made from the dashboard (`providerB.checkout`,
 * with the tenant's sandbox credentials), so a merchant can see a payment go through — pay it on the
 * sandbox page it opens — before writing any code.
 */
import { useState } from "preact/hooks";
import { ErrorNote, StatusNote, useAction } from "../../components.tsx";
import { useDashboard } from "../../context.ts";

export function TestCheckout({ onCreated }: { onCreated: () => void }) {
  const { api, session, t } = useDashboard();
  const [created, setCreated] = useState<{ paymentId: string; pageUrl: string } | undefined>();
  const action = useAction();
  if (session.environment !== "sandbox") return null;

  const create = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const back = `${location.origin}/dashboard`;
    setCreated(undefined);
    await action.run(async () => {
      const answer = await api.providerB.checkout.mutate({
        amount: Number(form.get("amount")),
        description: String(form.get("description") ?? "").trim(),
        returnUrl: back,
        cancelUrl: back,
        customer: { name: String(form.get("customer") ?? "").trim() },
      });
      setCreated({ paymentId: answer.paymentId, pageUrl: answer.response_text });
      onCreated();
    });
  };

  return (
    <details class="card test-checkout">
      <summary>{t("testCheckout.title")}</summary>
      <p class="hint">{t("testCheckout.hint")}</p>
      <form class="inline-form" onSubmit={create}>
        <label>
          {t("testCheckout.amount")}
          <input name="amount" type="number" inputMode="numeric" min={1} step={1} required defaultValue="5000" />
        </label>
        <label>
          {t("payments.description")}
          <input name="description" required maxLength={255} defaultValue={t("testCheckout.defaultDescription")} />
        </label>
        <label>
          {t("payment.customer")}
          <input name="customer" required maxLength={255} defaultValue="Awa Diop" />
        </label>
        <button type="submit" disabled={action.busy}>
          {t("testCheckout.submit")}
        </button>
      </form>
      <ErrorNote error={action.error} />
      {created ? (
        <StatusNote>
          {t("testCheckout.created")}{" "}
          <a href={created.pageUrl} target="_blank" rel="noopener noreferrer" data-testid="checkout-page">
            {t("testCheckout.open")}
          </a>{" "}
          · <a href={`#/payments/${encodeURIComponent(created.paymentId)}`}>{t("testCheckout.follow")}</a>
        </StatusNote>
      ) : null}
    </details>
  );
}
