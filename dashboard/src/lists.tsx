/**
 * The scaffolding of the dashboard's lists: a list paged with the API's cursors and its Previous / Next
 * buttons, the loading, empty and error states around a list, a table with its column heads, and a filter's
 * select with its "any" option.
 */
import type { ComponentChildren } from "preact";
import { useId, useLayoutEffect, useRef, useState } from "preact/hooks";
import { Empty, ErrorNote, type Loaded, Loading, useLoad } from "./components.tsx";
import { useDashboard } from "./context.ts";

/** A page of a list as the API answers it: its items and the cursor of the next page, if any. */
export interface Page<T> {
  data: T[];
  nextCursor?: string | null;
}

export interface Pages<P> extends Loaded<P> {
  /** True on the first page (no cursor). */
  first: boolean;
  /** Back to the first page (a filter changed). */
  restart: () => void;
  previous: () => void;
  next: () => void;
}

/** The `cursor` of a list call: none on the first page. */
export function cursorOf(cursor: string | undefined): { cursor?: string } {
  return cursor ? { cursor } : {};
}

/** Where a list keeps the cursors of the pages it went through (the last is the page shown). */
export interface PageCursors {
  cursors: string[];
  go: (cursors: string[]) => void;
}

/**
 * A list paged with the API's cursors: `load` is called with the cursor of the page shown (undefined for the
 * first), again whenever `keys` change; Previous goes back through the cursors seen. With `kept` (from
 * `useAddress`), the cursors live in the address, so Back, a reload, a bookmark or a shared link shows the same page.
 */
export function usePages<P extends { nextCursor?: string | null }>(
  load: (cursor: string | undefined) => Promise<P>,
  keys: readonly unknown[],
  kept?: PageCursors,
): Pages<P> {
  // The cursors of the pages before this one: the first page has none.
  const [own, setOwn] = useState<string[]>([]);
  const cursors = kept ? kept.cursors : own;
  const setCursors = kept ? kept.go : setOwn;
  const cursor = cursors.at(-1);
  const loaded = useLoad(() => load(cursor), [...keys, cursor]);
  return {
    ...loaded,
    first: cursors.length === 0,
    restart: () => setCursors([]),
    previous: () => setCursors(cursors.slice(0, -1)),
    next: () => {
      const nextCursor = loaded.data?.nextCursor;
      if (nextCursor) setCursors([...cursors, nextCursor]);
    },
  };
}

/** A list's address: its filters and page in the hash's query, and a way to change them. */
export interface Address {
  query: URLSearchParams;
  /** Goes to the same screen with these query values changed (undefined or "" removes one): a new history entry. */
  set: (changes: Record<string, string | undefined>) => void;
  /** The page's cursors, kept under `name` (`page=c1.c2`: base64url cursors never hold a dot). */
  pages: (name?: string) => PageCursors;
}

/**
 * The query of the address (`#/money?state=sent&page=…`) of the screen at `base` (`#/money`): what a list keeps
 * there is what Back, a reload, a bookmark or a shared link brings back. Changing a filter starts again at the
 * first page (`set({ state, page: undefined })`).
 */
export function useAddress(base: string): Address {
  const { navigate } = useDashboard();
  const search = location.hash.split("?", 2)[1] ?? "";
  const query = new URLSearchParams(search);
  const set = (changes: Record<string, string | undefined>) => {
    const next = new URLSearchParams(search);
    for (const [name, value] of Object.entries(changes)) {
      if (value) next.set(name, value);
      else next.delete(name);
    }
    const text = next.toString();
    navigate(text ? `${base}?${text}` : base);
  };
  return {
    query,
    set,
    pages: (name = "page") => ({
      cursors: (query.get(name) ?? "").split(".").filter((cursor) => cursor !== ""),
      go: (cursors) => set({ [name]: cursors.join(".") }),
    }),
  };
}

/**
 * A click anywhere on a list's row (a table row or a card) opens its record: the row's element marked
 * `data-open` (its link) is clicked, so the row does what its link does. A click on another control of the row,
 * or a click that ends a text selection, is left alone; a keyboard reaches the link itself.
 */
export function openRowOnClick(event: MouseEvent): void {
  const target = event.target as Element | null;
  if (!target || target.closest("a, button, input, select, textarea, summary, label, pre")) return;
  if (getSelection()?.toString()) return;
  target.closest("tr, li")?.querySelector<HTMLElement>("[data-open]")?.click();
}

/** The Previous and Next buttons of a paged list; `oldestFirst` for a list that runs from the oldest (they say so in English). */
export function Pager({ pages, oldestFirst = false }: { pages: Pages<{ nextCursor?: string | null }>; oldestFirst?: boolean }) {
  const { t } = useDashboard();
  return (
    <div class="pager">
      <button type="button" class="secondary" disabled={pages.first} onClick={pages.previous}>
        {t(oldestFirst ? "pager.previousOlder" : "pager.previous")}
      </button>
      <button type="button" class="secondary" disabled={!pages.data?.nextCursor} onClick={pages.next}>
        {t(oldestFirst ? "pager.nextNewer" : "pager.next")}
      </button>
    </div>
  );
}

/**
 * A list's states: the API's error, "loading" until the first answer (unless `quiet`), `empty` when it has
 * no items, else `children` drawn from them.
 */
export function ListStates<P, T>({
  loaded,
  items,
  empty,
  quiet = false,
  children,
}: {
  loaded: Loaded<P>;
  items: (data: P) => T[];
  empty: ComponentChildren;
  quiet?: boolean;
  children: (items: T[]) => ComponentChildren;
}) {
  const list = loaded.data === undefined ? undefined : items(loaded.data);
  return (
    <>
      <ErrorNote error={loaded.error} />
      {!quiet && loaded.loading && !loaded.data ? <Loading /> : null}
      {list && list.length === 0 ? <Empty>{empty}</Empty> : null}
      {list && list.length > 0 ? children(list) : null}
    </>
  );
}

/** A column head: its label, and `wide` for a column shown on wide screens only. */
export interface Column {
  label: ComponentChildren;
  wide?: boolean;
}

/**
 * A list as a table, with a head row of `columns`; `children` are its rows. On a wide screen it is a table; on a
 * phone each row is a card (styles.css), each cell named by its column: every cell carries its column head's
 * words in `data-label`, set here after each render from the head row, so no screen repeats its labels.
 */
export function ListTable({
  testid,
  class: className,
  columns,
  children,
}: {
  testid?: string;
  class?: string;
  columns: Column[];
  children: ComponentChildren;
}) {
  const table = useRef<HTMLTableElement>(null);
  useLayoutEffect(() => {
    const heads = [...(table.current?.tHead?.rows[0]?.cells ?? [])].map((head) => head.textContent?.trim() ?? "");
    for (const row of table.current?.tBodies[0]?.rows ?? []) {
      for (const [index, cell] of [...row.cells].entries()) {
        const label = heads[index];
        if (label) cell.dataset.label = label;
        else delete cell.dataset.label;
      }
    }
  });
  return (
    <div class="table-wrap">
      <table class={className ? `list ${className}` : "list"} data-testid={testid} ref={table}>
        <thead>
          <tr>
            {columns.map((column, index) => (
              <th key={index} scope="col" class={column.wide ? "wide-only" : undefined}>
                {column.label}
              </th>
            ))}
          </tr>
        </thead>
        {/* biome-ignore lint/a11y/useKeyWithClickEvents: a mouse's shortcut to the row's link, which the keyboard reaches itself */}
        <tbody onClick={openRowOnClick}>{children}</tbody>
      </table>
    </div>
  );
}

/**
 * A list's filters, folded on a phone behind one button (`aria-expanded`) so that the list's first rows are on
 * the first screen; on a wide screen the button is hidden and the filters always shown (styles.css).
 */
export function FoldedFilters({ children }: { children: ComponentChildren }) {
  const { t } = useDashboard();
  const [open, setOpen] = useState(false);
  const id = useId();
  return (
    <>
      <button type="button" class="secondary filters-toggle" aria-expanded={open} aria-controls={id} onClick={() => setOpen(!open)}>
        {t("filters.toggle")}
      </button>
      <div id={id} class="folded" data-open={open}>
        {children}
      </div>
    </>
  );
}

/**
 * A filter's select: "any" first (the empty value), then `values` named by `labelOf`; `onChange` gets the
 * chosen value ("" for any). In a form, without `onChange`, the form reads it by `name`.
 */
export function AnySelect<V extends string>({
  label,
  name,
  values,
  labelOf,
  onChange,
  initial,
}: {
  label: string;
  name: string;
  values: readonly V[];
  labelOf: (value: V) => string;
  onChange?: (value: V | "") => void;
  /** The value chosen when the select appears (e.g. from the address); none: any. */
  initial?: string | null;
}) {
  const { t } = useDashboard();
  return (
    <label>
      {label}
      <select name={name} onChange={onChange ? (event) => onChange((event.currentTarget as HTMLSelectElement).value as V | "") : undefined}>
        <option value="">{t("filters.any")}</option>
        {values.map((value) => (
          <option key={value} value={value} selected={value === initial}>
            {labelOf(value)}
          </option>
        ))}
      </select>
    </label>
  );
}
