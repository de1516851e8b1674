/**
 * Payments: the tenant's payments in the session's environment, newest first, filtered by state,
 * provider, kind, the days they were created on, an amount range and the customer's phone, searched by id,
 * reference or provider transaction id, paged with the API's cursors, which keep the filters
 * (`payments.list`). A filter the API refuses (an empty range, too short a phone) is its message.
 */
import { useState } from "preact/hooks";
import type { Inputs, Payment } from "../../api.ts";
import { CreatedAmountState, providerLabel } from "../../components.tsx";
import { AnySelect, cursorOf, ListStates, ListTable, Pager, usePages } from "../../lists.tsx";
import { useDashboard } from "../../context.ts";
import { dayValue, endOfDay, startOfDay } from "../../days.ts";
import { TestCheckout } from "./test-checkout.tsx";

type Filters = Omit<Inputs["payments"]["list"], "limit" | "cursor">;

/** The states a payment may be in, in the contract's order (checked against the API's type). */
export const PAYMENT_STATES = ["pending", "succeeded", "failed", "cancelled", "refunded"] as const satisfies readonly Payment["state"][];
const PAYMENT_KINDS = ["direct_payment", "checkout", "permit_charge"] as const satisfies readonly Payment["kind"][];
const PROVIDERS = ["providerA", "providerB"] as const;
const PAGE_SIZE = 20;

type SearchField = "paymentId" | "reference" | "providerTransactionId";

function filtersFrom(form: FormData): { filters: Filters; paymentId?: string } {
  const filters: Filters = {};
  const state = String(form.get("state") ?? "");
  const provider = String(form.get("provider") ?? "");
  const kind = String(form.get("kind") ?? "");
  if (state) filters.state = state as Filters["state"];
  if (provider) filters.provider = provider;
  if (kind) filters.kind = kind as Filters["kind"];
  const from = String(form.get("from") ?? "");
  const to = String(form.get("to") ?? "");
  if (from) filters.from = startOfDay(from);
  if (to) filters.to = endOfDay(to);
  const amountMin = String(form.get("amountMin") ?? "").trim();
  const amountMax = String(form.get("amountMax") ?? "").trim();
  if (amountMin) filters.amountMin = Number(amountMin);
  if (amountMax) filters.amountMax = Number(amountMax);
  const phone = String(form.get("phone") ?? "").trim();
  if (phone) filters.phone = phone;
  const search = String(form.get("search") ?? "").trim();
  const field = String(form.get("searchBy") ?? "paymentId") as SearchField;
  if (!search) return { filters };
  if (field === "paymentId") return { filters, paymentId: search };
  return { filters: { ...filters, [field]: search } };
}

export function PaymentsScreen() {
  const { api, t, navigate } = useDashboard();
  const [filters, setFilters] = useState<Filters>({});
  const page = usePages((cursor) => api.payments.list.query({ ...filters, limit: PAGE_SIZE, ...cursorOf(cursor) }), [JSON.stringify(filters)]);

  const apply = (event: SubmitEvent) => {
    event.preventDefault();
    const { filters: next, paymentId } = filtersFrom(new FormData(event.currentTarget as HTMLFormElement));
    if (paymentId) return navigate(`#/payments/${encodeURIComponent(paymentId)}`);
    // Applying the same filters again reads the list again (a payment's state may have moved on).
    page.restart();
    setFilters(next);
    page.reload();
  };

  const clear = (event: Event) => {
    (event.currentTarget as HTMLButtonElement).form?.reset();
    page.restart();
    setFilters({});
    page.reload();
  };
  const today = dayValue(new Date());

  return (
    <section aria-labelledby="payments-title">
      <h1 id="payments-title">{t("payments.title")}</h1>
      <TestCheckout onCreated={page.reload} />
      <form class="filters" onSubmit={apply} aria-label={t("payments.filters")}>
        <AnySelect label={t("payments.state")} name="state" values={PAYMENT_STATES} labelOf={(state) => t(`state.${state}`)} />
        <AnySelect label={t("payments.provider")} name="provider" values={PROVIDERS} labelOf={providerLabel} />
        <AnySelect label={t("payments.kind")} name="kind" values={PAYMENT_KINDS} labelOf={(kind) => t(`kind.${kind}`)} />
        <label>
          {t("payments.searchBy")}
          <select name="searchBy">
            <option value="paymentId">{t("payments.searchBy.paymentId")}</option>
            <option value="reference">{t("payments.searchBy.reference")}</option>
            <option value="providerTransactionId">{t("payments.searchBy.providerTransactionId")}</option>
          </select>
        </label>
        <label class="grow">
          {t("payments.search")}
          <input name="search" type="search" spellcheck={false} />
        </label>
        <label>
          {t("payments.from")}
          <input name="from" type="date" max={today} />
        </label>
        <label>
          {t("payments.to")}
          <input name="to" type="date" max={today} />
        </label>
        <label>
          {t("payments.amountMin")}
          <input name="amountMin" type="number" inputMode="numeric" min={1} step={1} />
        </label>
        <label>
          {t("payments.amountMax")}
          <input name="amountMax" type="number" inputMode="numeric" min={1} step={1} />
        </label>
        <label class="grow">
          {t("payments.phone")}
          <input name="phone" type="tel" autoComplete="off" placeholder="+229 97 00 00 00" aria-describedby="phone-hint" />
          <span class="muted" id="phone-hint">
            {t("payments.phoneHint")}
          </span>
        </label>
        <button type="submit">{t("filters.apply")}</button>
        <button type="button" class="secondary" onClick={clear}>
          {t("payments.clear")}
        </button>
      </form>
      <ListStates
        loaded={page}
        items={(answer) => answer.data}
        empty={!page.first || Object.keys(filters).length > 0 ? t("payments.noneMatch") : t("payments.none")}
      >
        {(payments) => <PaymentTable payments={payments} />}
      </ListStates>
      <Pager pages={page} />
    </section>
  );
}

function PaymentTable({ payments }: { payments: Payment[] }) {
  const { t } = useDashboard();
  return (
    <ListTable
      testid="payments"
      columns={[
        { label: t("payments.created") },
        { label: t("payments.amount") },
        { label: t("payments.state") },
        { label: t("payments.provider"), wide: true },
        { label: t("payments.description"), wide: true },
        { label: t("payment.customer"), wide: true },
        { label: t("payments.id") },
      ]}
    >
      {payments.map((payment) => (
        <tr key={payment.id} data-payment-id={payment.id} data-state={payment.state}>
          <CreatedAmountState createdAt={payment.createdAt} amount={payment.amount} currency={payment.currency} state={payment.state} />
          <td class="wide-only">{providerLabel(payment.provider)}</td>
          <td class="wide-only">{payment.description}</td>
          <td class="wide-only mono">{payment.customer?.phone ?? "—"}</td>
          <td>
            <a href={`#/payments/${encodeURIComponent(payment.id)}`} class="mono">
              {payment.id}
            </a>
          </td>
        </tr>
      ))}
    </ListTable>
  );
}
