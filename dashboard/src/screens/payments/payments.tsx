/**
 * Payments: the tenant's payments in the session's environment, newest first, filtered by state,
 * provider, kind, the days they were created on, an amount range and the customer's phone, searched by id,
 * reference or provider transaction id, paged with the API's cursors, which keep the filters
 * (`payments.list`). A filter the API refuses (an empty range, too short a phone) is its message.
 */
import { useState } from "preact/hooks";
import type { Inputs, Payment } from "../../api.ts";
import { Amount, DateTime, Empty, ErrorNote, Loading, providerLabel, StateBadge, useLoad } from "../../components.tsx";
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
  // The cursors of the pages before this one: the first page has none.
  const [cursors, setCursors] = useState<string[]>([]);
  const cursor = cursors.at(-1);
  const page = useLoad(() => api.payments.list.query({ ...filters, limit: PAGE_SIZE, ...(cursor ? { cursor } : {}) }), [JSON.stringify(filters), cursor]);

  const apply = (event: SubmitEvent) => {
    event.preventDefault();
    const { filters: next, paymentId } = filtersFrom(new FormData(event.currentTarget as HTMLFormElement));
    if (paymentId) return navigate(`#/payments/${encodeURIComponent(paymentId)}`);
    // Applying the same filters again reads the list again (a payment's state may have moved on).
    setCursors([]);
    setFilters(next);
    page.reload();
  };

  const clear = (event: Event) => {
    (event.currentTarget as HTMLButtonElement).form?.reset();
    setCursors([]);
    setFilters({});
    page.reload();
  };
  const today = dayValue(new Date());

  return (
    <section aria-labelledby="payments-title">
      <h1 id="payments-title">{t("payments.title")}</h1>
      <TestCheckout onCreated={page.reload} />
      <form class="filters" onSubmit={apply} aria-label={t("payments.filters")}>
        <label>
          {t("payments.state")}
          <select name="state">
            <option value="">{t("filters.any")}</option>
            {PAYMENT_STATES.map((state) => (
              <option key={state} value={state}>
                {t(`state.${state}`)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t("payments.provider")}
          <select name="provider">
            <option value="">{t("filters.any")}</option>
            {PROVIDERS.map((provider) => (
              <option key={provider} value={provider}>
                {providerLabel(provider)}
              </option>
            ))}
          </select>
        </label>
        <label>
          {t("payments.kind")}
          <select name="kind">
            <option value="">{t("filters.any")}</option>
            {PAYMENT_KINDS.map((kind) => (
              <option key={kind} value={kind}>
                {t(`kind.${kind}`)}
              </option>
            ))}
          </select>
        </label>
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
      {page.error ? <ErrorNote error={page.error} /> : null}
      {page.loading && !page.data ? <Loading /> : null}
      {page.data && page.data.data.length === 0 ? (
        <Empty>{cursors.length > 0 || Object.keys(filters).length > 0 ? t("payments.noneMatch") : t("payments.none")}</Empty>
      ) : null}
      {page.data && page.data.data.length > 0 ? <PaymentTable payments={page.data.data} /> : null}
      <div class="pager">
        <button type="button" class="secondary" disabled={cursors.length === 0} onClick={() => setCursors(cursors.slice(0, -1))}>
          {t("pager.previous")}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={!page.data?.nextCursor}
          onClick={() => page.data?.nextCursor && setCursors([...cursors, page.data.nextCursor])}
        >
          {t("pager.next")}
        </button>
      </div>
    </section>
  );
}

function PaymentTable({ payments }: { payments: Payment[] }) {
  const { t } = useDashboard();
  return (
    <div class="table-wrap">
      <table class="list" data-testid="payments">
        <thead>
          <tr>
            <th scope="col">{t("payments.created")}</th>
            <th scope="col">{t("payments.amount")}</th>
            <th scope="col">{t("payments.state")}</th>
            <th scope="col" class="wide-only">
              {t("payments.provider")}
            </th>
            <th scope="col" class="wide-only">
              {t("payments.description")}
            </th>
            <th scope="col" class="wide-only">
              {t("payment.customer")}
            </th>
            <th scope="col">{t("payments.id")}</th>
          </tr>
        </thead>
        <tbody>
          {payments.map((payment) => (
            <tr key={payment.id} data-payment-id={payment.id} data-state={payment.state}>
              <td>
                <DateTime iso={payment.createdAt} />
              </td>
              <td>
                <Amount amount={payment.amount} currency={payment.currency} />
              </td>
              <td>
                <StateBadge state={payment.state} />
              </td>
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
        </tbody>
      </table>
    </div>
  );
}
