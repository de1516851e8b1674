/**
 * Payments: the tenant's payments in the session's environment, newest first, filtered by state,
 * provider, kind, the days they were created on, an amount range and the customer's phone, searched by id,
 * text (description, customer's name), the merchant's own reference, provider A's reference or provider
 * transaction id, paged with the API's cursors, which keep the filters (`payments.list`). The filters live in
 * the address (`#/payments?state=failed`), so Back, a bookmark or a shared link shows the same list; Download
 * CSV saves every payment the filters keep (`GET /payments` as `text/csv`). A filter the API refuses (an
 * empty range, too short a phone) is its message.
 */
import type { Inputs, Payment } from "../../api.ts";
import { CreatedAmountState, ErrorNote, providerLabel, useAction } from "../../components.tsx";
import { AnySelect, cursorOf, FoldedFilters, ListStates, ListTable, Pager, useAddress, usePages } from "../../lists.tsx";
import { useDashboard } from "../../context.ts";
import { dayValue, endOfDay, startOfDay } from "../../days.ts";
import { downloadCsv } from "../../download.ts";
import { formatPhone } from "../../phones.ts";
import { OPERATORS, operatorName, walletName } from "../../wallets.ts";
import { may } from "../../permissions.ts";
import { TestCheckout } from "./test-checkout.tsx";

type Filters = Omit<Inputs["payments"]["list"], "limit" | "cursor">;

/** The states a payment may be in, in the contract's order (checked against the API's type). */
export const PAYMENT_STATES = ["pending", "succeeded", "failed", "cancelled", "refunded"] as const satisfies readonly Payment["state"][];
const PAYMENT_KINDS = ["direct_payment", "checkout", "permit_charge"] as const satisfies readonly Payment["kind"][];
const PROVIDERS = ["providerA", "providerB"] as const;
const PAGE_SIZE = 20;

type SearchField = "paymentId" | "q" | "merchantReference" | "reference" | "providerTransactionId";
const SEARCH_FIELDS: readonly SearchField[] = ["paymentId", "q", "merchantReference", "reference", "providerTransactionId"];
/** The fields kept in the address as they are (the days are kept as days, `from`/`to`). */
const PLAIN_FIELDS = [
  "state",
  "provider",
  "kind",
  "operator",
  "amountMin",
  "amountMax",
  "phone",
  "q",
  "merchantReference",
  "reference",
  "providerTransactionId",
] as const;

/** The address's query of what the form holds: what a bookmark or a shared link keeps (days as days). */
function queryOf(form: FormData): { query: string; paymentId?: string } {
  const query = new URLSearchParams();
  for (const name of ["state", "provider", "kind", "operator", "from", "to", "amountMin", "amountMax", "phone"]) {
    const value = String(form.get(name) ?? "").trim();
    if (value) query.set(name, value);
  }
  const search = String(form.get("search") ?? "").trim();
  const field = String(form.get("searchBy") ?? "paymentId") as SearchField;
  if (search && field === "paymentId") return { query: query.toString(), paymentId: search };
  if (search) query.set(field, search);
  return { query: query.toString() };
}

/** The API's filters of an address's query. */
function filtersOf(query: URLSearchParams): Filters {
  const filters: Record<string, unknown> = {};
  for (const name of PLAIN_FIELDS) {
    const value = query.get(name);
    if (value) filters[name] = name === "amountMin" || name === "amountMax" ? Number(value) : value;
  }
  const from = query.get("from");
  const to = query.get("to");
  if (from) filters.from = startOfDay(from);
  if (to) filters.to = endOfDay(to);
  return filters as Filters;
}

/** The API's filters as a query string, for the CSV download of the same list. */
function apiQueryOf(filters: Filters): string {
  const query = new URLSearchParams();
  for (const [name, value] of Object.entries(filters)) if (value !== undefined) query.set(name, String(value));
  return query.toString();
}

export function PaymentsScreen({ filters: inAddress }: { filters: string }) {
  const { api, t, navigate, session, sessionEnded, tenantId } = useDashboard();
  // The address holds the filters and the page (`page`, the cursors gone through): the filters alone key the list.
  const query = new URLSearchParams(inAddress);
  query.delete("page");
  const address = query.toString();
  const filters = filtersOf(query);
  const page = usePages(
    (cursor) => api.payments.list.query({ ...filters, limit: PAGE_SIZE, ...cursorOf(cursor) }),
    [address],
    useAddress("#/payments").pages(),
  );
  const downloading = useAction();
  const searchBy = SEARCH_FIELDS.find((field) => field !== "paymentId" && query.get(field)) ?? "paymentId";

  const apply = (event: SubmitEvent) => {
    event.preventDefault();
    const next = queryOf(new FormData(event.currentTarget as HTMLFormElement));
    if (next.paymentId) return navigate(`#/payments/${encodeURIComponent(next.paymentId)}`);
    // Applying the same filters again reads the list again (a payment's state may have moved on).
    if (next.query === address) {
      if (page.first) page.reload();
      else page.restart();
      return;
    }
    navigate(next.query ? `#/payments?${next.query}` : "#/payments");
  };

  const clear = (event: Event) => {
    (event.currentTarget as HTMLButtonElement).form?.reset();
    if (inAddress) navigate("#/payments");
    else page.reload();
  };

  const download = () =>
    downloading.run(() =>
      downloadCsv({
        path: `/payments?${apiQueryOf(filters)}`,
        token: session.token,
        tenantId,
        onUnauthorized: sessionEnded,
        filename: `payments-${dayValue(new Date())}.csv`,
      }),
    );
  const today = dayValue(new Date());

  return (
    <section aria-labelledby="payments-title">
      <h1 id="payments-title">{t("payments.title")}</h1>
      {may(session, "money") ? <TestCheckout onCreated={page.reload} /> : null}
      <FoldedFilters>
        <form class="filters" onSubmit={apply} aria-label={t("payments.filters")} key={address}>
          <AnySelect label={t("payments.state")} name="state" values={PAYMENT_STATES} labelOf={(state) => t(`state.${state}`)} initial={query.get("state")} />
          <AnySelect label={t("payments.provider")} name="provider" values={PROVIDERS} labelOf={providerLabel} initial={query.get("provider")} />
          <AnySelect label={t("payments.wallet")} name="operator" values={OPERATORS} labelOf={operatorName} initial={query.get("operator")} />
          <AnySelect label={t("payments.kind")} name="kind" values={PAYMENT_KINDS} labelOf={(kind) => t(`kind.${kind}`)} initial={query.get("kind")} />
          <label>
            {t("payments.searchBy")}
            <select name="searchBy">
              {SEARCH_FIELDS.map((field) => (
                <option key={field} value={field} selected={field === searchBy}>
                  {t(`payments.searchBy.${field}`)}
                </option>
              ))}
            </select>
          </label>
          <label class="grow">
            {t("payments.search")}
            <input name="search" type="search" spellcheck={false} defaultValue={searchBy === "paymentId" ? "" : (query.get(searchBy) ?? "")} />
          </label>
          <label>
            {t("payments.from")}
            <input name="from" type="date" max={today} defaultValue={query.get("from") ?? ""} />
          </label>
          <label>
            {t("payments.to")}
            <input name="to" type="date" max={today} defaultValue={query.get("to") ?? ""} />
          </label>
          <label>
            {t("payments.amountMin")}
            <input name="amountMin" type="number" inputMode="numeric" min={1} step={1} defaultValue={query.get("amountMin") ?? ""} />
          </label>
          <label>
            {t("payments.amountMax")}
            <input name="amountMax" type="number" inputMode="numeric" min={1} step={1} defaultValue={query.get("amountMax") ?? ""} />
          </label>
          <label class="grow">
            {t("payments.phone")}
            <input
              name="phone"
              type="tel"
              autoComplete="off"
              placeholder="+229 97 00 00 00"
              aria-describedby="phone-hint"
              defaultValue={query.get("phone") ?? ""}
            />
            <span class="muted" id="phone-hint">
              {t("payments.phoneHint")}
            </span>
          </label>
          <button type="submit">{t("filters.apply")}</button>
          <button type="button" class="secondary" onClick={clear}>
            {t("payments.clear")}
          </button>
          <button type="button" class="secondary" onClick={download} disabled={downloading.busy}>
            {t("reconciliation.download")}
          </button>
        </form>
      </FoldedFilters>
      <ErrorNote error={downloading.error} />
      <ListStates loaded={page} items={(answer) => answer.data} empty={!page.first || address ? t("payments.noneMatch") : t("payments.none")}>
        {(payments) => <PaymentTable payments={payments} />}
      </ListStates>
      <Pager pages={page} />
    </section>
  );
}

function PaymentTable({ payments }: { payments: Payment[] }) {
  const { t, language } = useDashboard();
  return (
    <ListTable
      testid="payments"
      columns={[
        { label: t("payments.created") },
        { label: t("payments.amount") },
        { label: t("payments.state") },
        { label: t("payments.wallet") },
        { label: t("payments.provider"), wide: true },
        { label: t("payments.description"), wide: true },
        { label: t("payment.customer"), wide: true },
        { label: t("payments.id") },
      ]}
    >
      {payments.map((payment) => (
        <tr key={payment.id} data-payment-id={payment.id} data-state={payment.state}>
          <CreatedAmountState createdAt={payment.createdAt} amount={payment.amount} currency={payment.currency} state={payment.state} />
          <td data-wallet={payment.operator ?? ""}>{walletName(language, payment.operator, payment.customer?.country) ?? "—"}</td>
          <td class="wide-only">{providerLabel(payment.provider)}</td>
          <td class="wide-only">{payment.description}</td>
          <td class="wide-only mono nowrap">{formatPhone(payment.customer?.phone) ?? "—"}</td>
          <td>
            <a href={`#/payments/${encodeURIComponent(payment.id)}`} class="mono id" title={payment.id} data-open>
              {payment.id}
            </a>
          </td>
        </tr>
      ))}
    </ListTable>
  );
}
