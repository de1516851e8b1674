/**
 * Balance and payouts: the tenant's balance per currency (available, on its way) beside what each
 * provider reports for the tenant's own account (`balance.get`); its payouts, filtered by state and paged
 * with the API's cursors (`payouts.list`); and a form that sends one to a mobile-money wallet
 * (`payouts.create`). A refusal (a provider's limit, the balance) is the API's message.
 */
import { useState } from "preact/hooks";
import type { Outputs } from "../api.ts";
import { Amount, DateTime, Empty, ErrorNote, Loading, providerLabel, StateBadge, useLoad } from "../components.tsx";
import { useDashboard } from "../context.ts";
import { formatAmount } from "../i18n.ts";

type Payout = Outputs["payouts"]["get"];

/** A payout's states (checked against the API's type). */
const PAYOUT_STATES = ["pending", "sent", "failed"] as const satisfies readonly Payout["state"][];

/** The countries the providers serve, with their dialling codes (a hint for the phone field). */
const COUNTRIES = [
  { code: "bj", prefix: "+229" },
  { code: "sn", prefix: "+221" },
  { code: "ci", prefix: "+225" },
  { code: "tg", prefix: "+228" },
  { code: "bf", prefix: "+226" },
  { code: "ml", prefix: "+223" },
  { code: "gn", prefix: "+224" },
  { code: "ne", prefix: "+227" },
  { code: "cm", prefix: "+237" },
] as const;

const OPERATORS = ["mtn", "moov", "celtiis", "togocel", "orange", "wave", "free", "expresso"] as const;

export function MoneyScreen() {
  const { api, language, t } = useDashboard();
  const balance = useLoad(() => api.balance.get.query({}), []);
  const [state, setState] = useState<Payout["state"] | "">("");
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const payouts = useLoad(() => api.payouts.list.query({ limit: 20, ...(state ? { state } : {}), ...(cursor ? { cursor } : {}) }), [state, cursor]);
  const [error, setError] = useState<unknown>();
  const [sent, setSent] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);

  const send = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const amount = Number(form.get("amount"));
    const phone = String(form.get("phone") ?? "").replace(/[\s.-]/g, "");
    if (!confirm(t("money.confirm", { amount: formatAmount(language, amount, "XOF"), phone }))) return;
    setBusy(true);
    setError(undefined);
    setSent(undefined);
    try {
      const payout = await api.payouts.create.mutate({
        amount,
        description: String(form.get("description") ?? "").trim(),
        recipient: {
          phone: { number: phone, country: String(form.get("country")) },
          operator: String(form.get("operator") ?? "")
            .trim()
            .toLowerCase(),
        },
      });
      setSent(t("money.sent", { id: payout.id }));
      formElement.reset();
      setCursors([]);
      payouts.reload();
      balance.reload();
    } catch (caught) {
      setError(caught);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="money-title">
      <h1 id="money-title">{t("money.title")}</h1>
      <h2>{t("money.balance")}</h2>
      <ErrorNote error={balance.error} />
      {balance.loading && !balance.data ? <Loading /> : null}
      {balance.data && balance.data.balances.length === 0 ? <Empty>{t("money.noBalance")}</Empty> : null}
      {balance.data && balance.data.balances.length > 0 ? (
        <dl class="facts card" data-testid="balance">
          {balance.data.balances.map((line) => (
            <>
              <dt key={`${line.currency}-available`}>{t("money.available", { currency: line.currency })}</dt>
              <dd key={`${line.currency}-available-value`} data-currency={line.currency}>
                <Amount amount={line.available} currency={line.currency} />
              </dd>
              <dt key={`${line.currency}-pending`}>{t("money.pending")}</dt>
              <dd key={`${line.currency}-pending-value`}>
                <Amount amount={line.pending} currency={line.currency} />
              </dd>
            </>
          ))}
        </dl>
      ) : null}
      {balance.data?.providers.map((provider) => (
        <p key={provider.provider} class="hint">
          {t("money.atProvider", { provider: providerLabel(provider.provider) })}{" "}
          {provider.error
            ? provider.error
            : provider.balances.map((line) => `${formatAmount(language, line.amount, line.currency)}${line.label ? ` (${line.label})` : ""}`).join(" · ") ||
              "—"}
        </p>
      ))}

      <h2>{t("money.send")}</h2>
      <form class="inline-form card" onSubmit={send}>
        <label>
          {t("money.amount")}
          <input name="amount" type="number" inputMode="numeric" min={1} step={1} required />
        </label>
        <label>
          {t("payments.description")}
          <input name="description" required maxLength={255} />
        </label>
        <label>
          {t("money.country")}
          <select name="country">
            {COUNTRIES.map((country) => (
              <option key={country.code} value={country.code}>
                {country.code.toUpperCase()} ({country.prefix})
              </option>
            ))}
          </select>
        </label>
        <label>
          {t("money.phone")}
          <input name="phone" type="tel" required placeholder="+229 97 00 00 00" autoComplete="off" />
        </label>
        <label>
          {t("money.operator")}
          <input name="operator" required list="operators" autoComplete="off" spellcheck={false} />
          <datalist id="operators">
            {OPERATORS.map((operator) => (
              <option key={operator} value={operator} />
            ))}
          </datalist>
        </label>
        <button type="submit" disabled={busy}>
          {t("money.sendSubmit")}
        </button>
      </form>
      {sent ? (
        <p class="notice" role="status">
          {sent}
        </p>
      ) : null}
      <ErrorNote error={error} />

      <div class="section-head">
        <h2>{t("money.payouts")}</h2>
        <button
          type="button"
          class="secondary"
          onClick={() => {
            payouts.reload();
            balance.reload();
          }}
        >
          {t("refresh")}
        </button>
      </div>
      <div class="filters">
        <label>
          {t("payments.state")}
          <select
            name="payoutState"
            onChange={(event) => {
              setCursors([]);
              setState((event.currentTarget as HTMLSelectElement).value as Payout["state"] | "");
            }}
          >
            <option value="">{t("filters.any")}</option>
            {PAYOUT_STATES.map((value) => (
              <option key={value} value={value}>
                {t(`state.${value}`)}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorNote error={payouts.error} />
      {payouts.data && payouts.data.data.length === 0 ? <Empty>{t("money.noPayouts")}</Empty> : null}
      {payouts.data && payouts.data.data.length > 0 ? (
        <div class="table-wrap">
          <table class="list" data-testid="payouts">
            <thead>
              <tr>
                <th scope="col">{t("payments.created")}</th>
                <th scope="col">{t("payments.amount")}</th>
                <th scope="col">{t("payments.state")}</th>
                <th scope="col">{t("money.recipient")}</th>
                <th scope="col" class="wide-only">
                  {t("payments.description")}
                </th>
              </tr>
            </thead>
            <tbody>
              {payouts.data.data.map((payout) => (
                <tr key={payout.id} data-payout-id={payout.id} data-state={payout.state}>
                  <td>
                    <DateTime iso={payout.createdAt} />
                  </td>
                  <td>
                    <Amount amount={payout.amount} currency={payout.currency} />
                  </td>
                  <td>
                    <StateBadge state={payout.state} />
                    {payout.failureCode ? <div class="muted">{payout.failureCode}</div> : null}
                  </td>
                  <td class="mono">
                    {payout.recipient.phone.number} · {payout.recipient.operator}
                  </td>
                  <td class="wide-only">{payout.description}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <div class="pager">
        <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          {t("pager.previous")}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={!payouts.data?.nextCursor}
          onClick={() => payouts.data?.nextCursor && setCursors([...cursors, payouts.data.nextCursor])}
        >
          {t("pager.next")}
        </button>
      </div>
    </section>
  );
}
