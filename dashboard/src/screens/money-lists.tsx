/**
 * The money that went out and the ledger, on Balance & payouts: the payouts, the refunds and the balance's
 * entries, one list at a time (`#/money?list=refunds`), each filtered (payouts and refunds by state and the days
 * they were made on, entries by the payment, payout or refund that moved the money) and paged with the API's
 * cursors (`payouts.list`, `payouts.allRefunds`, `balance.entries`). The list, its filters and its page live in
 * the address: Back, a reload, a bookmark or a shared link shows the same list. Every row opens its record (a
 * payout's or refund's page, an entry's payment, payout or refund). The three lists as CSV files keep the filters.
 */
import type { Outputs } from "../api.ts";
import { Amount, CreatedAmountState, DateTime, ErrorNote, SectionHead, useAction } from "../components.tsx";
import { useDashboard } from "../context.ts";
import { dayValue, endOfDay, startOfDay } from "../days.ts";
import { downloadCsv } from "../download.ts";
import type { MessageKey } from "../i18n.ts";
import { AnySelect, cursorOf, FoldedFilters, ListStates, ListTable, Pager, useAddress, usePages } from "../lists.tsx";
import { formatPhone } from "../phones.ts";
import { operatorName } from "../wallets.ts";

type Payout = Outputs["payouts"]["get"];
type Refund = Outputs["payouts"]["getRefund"];

const PAYOUT_STATES = ["pending", "sent", "failed"] as const satisfies readonly Payout["state"][];
const REFUND_STATES = ["pending", "succeeded", "failed"] as const satisfies readonly Refund["state"][];

/** The lists, in their tabs' order: each one's API path (its CSV file) and words. */
const LISTS = [
  { name: "payouts", path: "/payouts", label: "money.payouts", file: "money.filePayouts" },
  { name: "refunds", path: "/refunds", label: "refunds.title", file: "money.fileRefunds" },
  { name: "entries", path: "/balance/entries", label: "money.entries", file: "money.fileEntries" },
] as const satisfies readonly { name: string; path: string; label: MessageKey; file: MessageKey }[];
type ListName = (typeof LISTS)[number]["name"];

const PAGE_SIZE = 20;

/** The page of a payment, payout or refund, by its id's prefix (an entry's subject). */
export function recordHref(id: string): string {
  return id.startsWith("pay_") ? `#/payments/${encodeURIComponent(id)}` : `#/money/${encodeURIComponent(id)}`;
}

/** The API's filters of the list's address: state and days (payouts, refunds), or the subject (entries). */
function filtersOf(list: ListName, query: URLSearchParams): Record<string, string> {
  const filters: Record<string, string> = {};
  if (list === "entries") {
    const subject = query.get("subject")?.trim();
    if (subject) filters.subjectId = subject;
    return filters;
  }
  const state = query.get("state");
  const from = query.get("from");
  const to = query.get("to");
  if (state) filters.state = state;
  if (from) filters.from = startOfDay(from);
  if (to) filters.to = endOfDay(to);
  return filters;
}

export function MoneyLists({ refreshed, onRefresh }: { refreshed: number; onRefresh: () => void }) {
  const { t } = useDashboard();
  const address = useAddress("#/money");
  const list: ListName = LISTS.find((entry) => entry.name === address.query.get("list"))?.name ?? "payouts";
  const shown = LISTS.find((entry) => entry.name === list)!;
  return (
    <>
      <SectionHead title={t(shown.label)} onRefresh={onRefresh} />
      <nav class="tabs-nav" aria-label={t("money.lists")}>
        {LISTS.map((entry) => (
          <a key={entry.name} href={`#/money?list=${entry.name}`} aria-current={entry.name === list ? "page" : undefined}>
            {t(entry.label)}
          </a>
        ))}
      </nav>
      {/* One list's state per list: another list's rows are never drawn as this one's while it loads. */}
      <MoneyList key={list} list={list} refreshed={refreshed} />
    </>
  );
}

function MoneyList({ list, refreshed }: { list: ListName; refreshed: number }) {
  const { api, t, session, sessionEnded, tenantId } = useDashboard();
  const address = useAddress("#/money");
  const filters = filtersOf(list, address.query);
  const key = `${list}?${new URLSearchParams(filters).toString()}`;
  const page = usePages(
    (cursor): Promise<{ data: unknown[]; nextCursor: string | null }> => {
      const input = { limit: PAGE_SIZE, ...filters, ...cursorOf(cursor) } as never;
      if (list === "refunds") return api.payouts.allRefunds.query(input);
      if (list === "entries") return api.balance.entries.query(input);
      return api.payouts.list.query(input);
    },
    [key, refreshed],
    address.pages(),
  );
  const downloading = useAction();
  const today = dayValue(new Date());

  const apply = (event: SubmitEvent) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const value = (name: string) => String(form.get(name) ?? "").trim() || undefined;
    address.set({ state: value("state"), from: value("from"), to: value("to"), subject: value("subject"), page: undefined });
  };

  const download = (file: (typeof LISTS)[number]) =>
    downloading.run(() => {
      // Each file keeps the filters of its list when that list is shown (the others: every item).
      const query = file.name === list ? new URLSearchParams(filters).toString() : "";
      return downloadCsv({
        path: query ? `${file.path}?${query}` : file.path,
        token: session.token,
        tenantId,
        onUnauthorized: sessionEnded,
        filename: `${file.name === "entries" ? "balance-entries" : file.name}-${dayValue(new Date())}.csv`,
      });
    });

  return (
    <>
      <FoldedFilters>
        <form class="filters" onSubmit={apply} aria-label={t("payments.filters")} key={`${list}?${address.query.toString()}`}>
          {list === "entries" ? (
            <label class="grow">
              {t("money.subject")}
              <input name="subject" spellcheck={false} autoComplete="off" placeholder="pay_… po_… rf_…" defaultValue={address.query.get("subject") ?? ""} />
            </label>
          ) : (
            <>
              <AnySelect
                label={t("payments.state")}
                name="state"
                values={list === "refunds" ? REFUND_STATES : PAYOUT_STATES}
                labelOf={(value) => t(`state.${value}`)}
                initial={address.query.get("state")}
              />
              <label>
                {t("payments.from")}
                <input name="from" type="date" max={today} defaultValue={address.query.get("from") ?? ""} />
              </label>
              <label>
                {t("payments.to")}
                <input name="to" type="date" max={today} defaultValue={address.query.get("to") ?? ""} />
              </label>
            </>
          )}
          <button type="submit">{t("filters.apply")}</button>
        </form>
      </FoldedFilters>
      <ListStates
        loaded={page}
        items={(answer) => answer.data}
        empty={t(list === "payouts" ? "money.noPayouts" : list === "refunds" ? "money.noRefunds" : "money.noEntries")}
      >
        {(items) =>
          list === "refunds" ? (
            <RefundTable refunds={items as Refund[]} />
          ) : list === "entries" ? (
            <EntryTable entries={items as Outputs["balance"]["entries"]["data"]} />
          ) : (
            <PayoutTable payouts={items as Payout[]} />
          )
        }
      </ListStates>
      <Pager pages={page} />

      <h2>{t("money.files")}</h2>
      <p class="hint">{t("money.filesHint")}</p>
      <div class="actions">
        {LISTS.map((file) => (
          <button type="button" class="secondary" key={file.name} disabled={downloading.busy} onClick={() => download(file)}>
            {t(file.file)}
          </button>
        ))}
      </div>
      <ErrorNote error={downloading.error} />
    </>
  );
}

function PayoutTable({ payouts }: { payouts: Payout[] }) {
  const { t } = useDashboard();
  return (
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
      {payouts.map((payout) => (
        <tr key={payout.id} data-payout-id={payout.id} data-state={payout.state}>
          <CreatedAmountState createdAt={payout.createdAt} amount={payout.amount} currency={payout.currency} state={payout.state} detail={payout.failureCode} />
          <td>
            <a href={recordHref(payout.id)} data-open class="nowrap">
              {formatPhone(payout.recipient.phone.number)}
            </a>{" "}
            · {operatorName(payout.recipient.operator)}
          </td>
          <td class="wide-only">{payout.description}</td>
        </tr>
      ))}
    </ListTable>
  );
}

function RefundTable({ refunds }: { refunds: Refund[] }) {
  const { t } = useDashboard();
  return (
    <ListTable
      testid="refunds"
      columns={[
        { label: t("payments.created") },
        { label: t("payments.amount") },
        { label: t("payments.state") },
        { label: t("refunds.reason"), wide: true },
        { label: t("refunds.payment") },
      ]}
    >
      {refunds.map((refund) => (
        <tr key={refund.id} data-refund-id={refund.id} data-state={refund.state}>
          <CreatedAmountState createdAt={refund.createdAt} amount={refund.amount} currency={refund.currency} state={refund.state} detail={refund.failureCode} />
          <td class="wide-only">{refund.reason ?? "—"}</td>
          <td>
            <a href={recordHref(refund.paymentId)} data-open class="mono id" title={refund.paymentId}>
              {refund.paymentId}
            </a>
          </td>
        </tr>
      ))}
    </ListTable>
  );
}

type Entry = Outputs["balance"]["entries"]["data"][number];

/** A ledger entry's first three cells: when, how much, and on which of the tenant's accounts (in words). */
export function EntryCells({ entry }: { entry: Entry }) {
  const { t } = useDashboard();
  return (
    <>
      <td>
        <DateTime iso={entry.createdAt} />
      </td>
      <td>
        <Amount amount={entry.amount} currency={entry.currency} />
      </td>
      <td>{t(`money.entryAccount.${entry.account.startsWith("provider:") ? "provider" : entry.account}` as MessageKey)}</td>
    </>
  );
}

function EntryTable({ entries }: { entries: Outputs["balance"]["entries"]["data"] }) {
  const { t } = useDashboard();
  return (
    <ListTable
      testid="entries"
      columns={[
        { label: t("payments.created") },
        { label: t("payments.amount") },
        { label: t("money.entryAccount") },
        { label: t("money.entryKind"), wide: true },
        { label: t("money.subject") },
      ]}
    >
      {entries.map((entry) => (
        <tr key={entry.id} data-entry-id={entry.id}>
          <EntryCells entry={entry} />
          <td class="wide-only">{t(`money.entryKind.${entry.kind}`)}</td>
          <td>
            <a href={recordHref(entry.subjectId)} data-open class="mono id" title={entry.subjectId}>
              {entry.subjectId}
            </a>
          </td>
        </tr>
      ))}
    </ListTable>
  );
}
