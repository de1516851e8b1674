/**
 * Balance and payouts: the tenant's balance, in total and per holding account, beside what a provider
 * reports for the tenant's own account there (`balance.get`, shown by `holding-accounts.tsx`); a form that
 * sends money to a mobile-money wallet (`payouts.create`; a local number is the chosen country's); then the
 * payouts, refunds and balance entries, their filters and page in the address, and their CSV files
 * (`money-lists.tsx`). A refusal (a provider's limit, the balance held where the payout leaves from) is the
 * API's message.
 */
import { useState } from "preact/hooks";
import { CALLING_CODES } from "../../../src/services/countries.ts";
import { codeOf } from "../api.ts";
import { ErrorNote, ReadOnlyNote, StatusNote, useAction, useLoad } from "../components.tsx";
import { useDashboard } from "../context.ts";
import { countryName, formatAmount } from "../i18n.ts";
import { may } from "../permissions.ts";
import { formatPhone, internationalNumberOf, PHONE_COUNTRIES } from "../phones.ts";
import { BalanceSection } from "./holding-accounts.tsx";
import { MoneyLists } from "./money-lists.tsx";

const OPERATORS = ["mtn", "moov", "celtiis", "togocel", "orange", "wave", "free", "expresso"] as const;

export function MoneyScreen() {
  const { api, language, session, t, navigate } = useDashboard();
  const balance = useLoad(() => api.balance.get.query({}), []);
  // Bumped to read the lists again (a payout sent, Refresh).
  const [refreshed, setRefreshed] = useState(0);
  const action = useAction();
  const [sent, setSent] = useState<string | undefined>();

  const send = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const amount = Number(form.get("amount"));
    // A local number is the chosen country's: its calling code goes first (`97 00 00 01` in Benin: +22997000001).
    const country = String(form.get("country"));
    const phone = internationalNumberOf(String(form.get("phone") ?? ""), country);
    if (!confirm(t("money.confirm", { amount: formatAmount(language, amount, "XOF"), phone: formatPhone(phone) ?? phone }))) return;
    setSent(undefined);
    await action.run(async () => {
      const payout = await api.payouts.create.mutate({
        amount,
        description: String(form.get("description") ?? "").trim(),
        recipient: {
          phone: { number: phone, country },
          operator: String(form.get("operator") ?? "")
            .trim()
            .toLowerCase(),
        },
      });
      setSent(t("money.sent", { id: payout.id }));
      formElement.reset();
      // The new payout is on the first page of the payouts, unfiltered.
      if (location.hash !== "#/money") navigate("#/money");
      setRefreshed((value) => value + 1);
      balance.reload();
    });
  };

  return (
    <section aria-labelledby="money-title">
      <h1 id="money-title">{t("money.title")}</h1>
      <BalanceSection balance={balance} />

      <ReadOnlyNote ability="money" />
      {may(session, "money") ? (
        <>
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
                {PHONE_COUNTRIES.map((country) => (
                  <option key={country} value={country}>
                    {countryName(language, country)} (+{CALLING_CODES[country]})
                  </option>
                ))}
              </select>
            </label>
            <label>
              {t("money.phone")}
              <input name="phone" type="tel" required placeholder="97 00 00 00" autoComplete="off" aria-describedby="payout-phone-hint" />
              <span class="muted" id="payout-phone-hint">
                {t("money.phoneHint")}
              </span>
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
            <button type="submit" disabled={action.busy}>
              {t("money.sendSubmit")}
            </button>
          </form>
          <StatusNote>{sent}</StatusNote>
          <ErrorNote error={action.error} />
          {codeOf(action.error) === "insufficient_balance" ? (
            <p class="hint" data-testid="insufficient-hint">
              {t("money.insufficientHint")}
            </p>
          ) : null}
        </>
      ) : null}

      <MoneyLists
        refreshed={refreshed}
        onRefresh={() => {
          setRefreshed(refreshed + 1);
          balance.reload();
        }}
      />
    </section>
  );
}
