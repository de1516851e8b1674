/**
 * Balance and payouts: the tenant's balance, in total and per holding account, beside what a provider
 * reports for the tenant's own account there (`balance.get`, shown by `holding-accounts.tsx`); its payouts,
 * filtered by state and paged with the API's cursors (`payouts.list`); and a form that sends one to a
 * mobile-money wallet (`payouts.create`); the payouts, the refunds and the ledger's entries saved as CSV files
 * (`GET /payouts`, `/refunds`, `/balance/entries` as `text/csv`). A refusal (a provider's limit, the balance held where the payout
 * leaves from) is the API's message.
 */
import { useState } from "preact/hooks";
import { codeOf, type Outputs } from "../api.ts";
import { CreatedAmountState, ErrorNote, SectionHead, StatusNote, useAction, useLoad } from "../components.tsx";
import { BalanceSection } from "./holding-accounts.tsx";
import { AnySelect, cursorOf, ListStates, ListTable, Pager, usePages } from "../lists.tsx";
import { useDashboard } from "../context.ts";
import { dayValue } from "../days.ts";
import { downloadCsv } from "../download.ts";
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

/** The lists saved as CSV files from this screen: each is every item of the API's list (`Accept: text/csv`). */
const FILES = [
  { path: "/payouts", name: "payouts", label: "money.filePayouts" },
  { path: "/refunds", name: "refunds", label: "money.fileRefunds" },
  { path: "/balance/entries", name: "balance-entries", label: "money.fileEntries" },
] as const;

export function MoneyScreen() {
  const { api, language, t, session, sessionEnded, tenantId } = useDashboard();
  const downloading = useAction();
  const balance = useLoad(() => api.balance.get.query({}), []);
  const [state, setState] = useState<Payout["state"] | "">("");
  const payouts = usePages((cursor) => api.payouts.list.query({ limit: 20, ...(state ? { state } : {}), ...cursorOf(cursor) }), [state]);
  const action = useAction();
  const [sent, setSent] = useState<string | undefined>();

  const send = async (event: SubmitEvent) => {
    event.preventDefault();
    const formElement = event.currentTarget as HTMLFormElement;
    const form = new FormData(formElement);
    const amount = Number(form.get("amount"));
    // A local number is the chosen country's: its dialling code goes first (`97 00 00 01` in Benin: +22997000001).
    const typed = String(form.get("phone") ?? "").replace(/[\s.()-]/g, "");
    const country = String(form.get("country"));
    const prefix = COUNTRIES.find((entry) => entry.code === country)?.prefix ?? "";
    const phone = typed.startsWith("+") || typed === "" ? typed : typed.startsWith("00") ? `+${typed.slice(2)}` : `${prefix}${typed}`;
    if (!confirm(t("money.confirm", { amount: formatAmount(language, amount, "XOF"), phone }))) return;
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
      payouts.restart();
      payouts.reload();
      balance.reload();
    });
  };

  return (
    <section aria-labelledby="money-title">
      <h1 id="money-title">{t("money.title")}</h1>
      <BalanceSection balance={balance} />

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

      <SectionHead
        title={t("money.payouts")}
        onRefresh={() => {
          payouts.reload();
          balance.reload();
        }}
      />
      <div class="filters">
        <AnySelect
          label={t("payments.state")}
          name="payoutState"
          values={PAYOUT_STATES}
          labelOf={(value) => t(`state.${value}`)}
          onChange={(value) => {
            payouts.restart();
            setState(value);
          }}
        />
      </div>
      <ListStates loaded={payouts} items={(page) => page.data} empty={t("money.noPayouts")} quiet>
        {(list) => (
          <ListTable
            testid="payouts"
            columns={[
              { label: t("payments.created") },
              { label: t("payments.amount") },
              { label: t("payments.state") },
              { label: t("money.recipient") },
              { label: t("payments.description"), wide: true },
            ]}
          >
            {list.map((payout) => (
              <tr key={payout.id} data-payout-id={payout.id} data-state={payout.state}>
                <CreatedAmountState
                  createdAt={payout.createdAt}
                  amount={payout.amount}
                  currency={payout.currency}
                  state={payout.state}
                  detail={payout.failureCode}
                />
                <td class="mono">
                  {payout.recipient.phone.number} · {payout.recipient.operator}
                </td>
                <td class="wide-only">{payout.description}</td>
              </tr>
            ))}
          </ListTable>
        )}
      </ListStates>
      <Pager pages={payouts} />

      <h2>{t("money.files")}</h2>
      <p class="hint">{t("money.filesHint")}</p>
      <div class="actions">
        {FILES.map((file) => (
          <button
            type="button"
            class="secondary"
            key={file.name}
            disabled={downloading.busy}
            onClick={() =>
              downloading.run(() =>
                downloadCsv({
                  // The payouts' file keeps the state chosen above.
                  path: file.name === "payouts" && state ? `${file.path}?state=${state}` : file.path,
                  token: session.token,
                  tenantId,
                  onUnauthorized: sessionEnded,
                  filename: `${file.name}-${dayValue(new Date())}.csv`,
                }),
              )
            }
          >
            {t(file.label)}
          </button>
        ))}
      </div>
      <ErrorNote error={downloading.error} />
    </section>
  );
}
