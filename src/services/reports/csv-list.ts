/**
 * A list of the API (payments, refunds, payouts, ledger entries) as CSV: one column per field of the item's
 * schema, nested objects flattened with dots (`customer.phone`, `recipient.phone.number`), lists and free
 * maps (`metadata`, `legs`) as JSON text in one cell. The columns come from the schema, not from the rows, so
 * every export of a list has the same header, an empty one included.
 *
 * The REST bridge streams such a list page by page (`http/rest-bridge.ts`), so an export of 100,000 rows
 * never holds more than one page in memory. Cells are written by csv-stringify; a text
 * cell beginning with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'`, so a spreadsheet
 * never runs what a customer typed in a description. A signed number written as text (`+22997000001`) is left
 * as it is: as a formula it is only that number.
 *
 * @example
 * ```ts
 * const csv = csvListOf(payoutSchema);
 * csv.header;                // "id,state,description,metadata,provider,…,recipient.phone.number,…\n"
 * csv.rows([payoutView]);    // "po_01J…,sent,Supplier,,providerA,…\n"
 * ```
 * @module
 */
import { stringify } from "csv-stringify/sync";
import type { z } from "zod";

/** The sentence a list's OpenAPI description ends with when its route answers CSV too. */
export const CSV_NOTE =
  " Send `Accept: text/csv` for every matching item as CSV (one column per field, nested ones named with dots), streamed: `limit` is ignored.";

/** How a list's items become CSV. */
export interface CsvList {
  /** The header line, ending with a line break. */
  header: string;
  /** The lines of these items, each ending with a line break ("" for none). */
  rows(items: readonly unknown[]): string;
}

interface ZodInternals {
  _zod: { def: { type: string; innerType?: ZodInternals; shape?: Record<string, ZodInternals> } };
}

/** The field's schema under optional/nullable/default wrappers. */
function unwrap(schema: ZodInternals): ZodInternals {
  let current = schema;
  while (current._zod.def.innerType) current = current._zod.def.innerType;
  return current;
}

/** Each column's name and its path into an item. */
function columnsOf(schema: ZodInternals, prefix: string[] = []): string[][] {
  const shape = unwrap(schema)._zod.def.shape ?? {};
  const columns: string[][] = [];
  for (const [key, field] of Object.entries(shape)) {
    const inner = unwrap(field);
    if (inner._zod.def.type === "object") columns.push(...columnsOf(inner, [...prefix, key]));
    else columns.push([...prefix, key]);
  }
  return columns;
}

function cell(item: unknown, path: readonly string[]): unknown {
  let value: unknown = item;
  for (const key of path) {
    if (value === null || typeof value !== "object") return null;
    value = (value as Record<string, unknown>)[key];
  }
  if (value === undefined || value === null) return null;
  if (typeof value === "object") return JSON.stringify(value);
  return value;
}

/** A signed number written as text (a phone number `+22997000001`, an amount `-300`): a formula of nothing but a number, harmless. */
const SIGNED_NUMBER = /^[+-]\d[\d .]*$/;
/** What a spreadsheet may take for the start of a formula: OWASP's list, and its full-width forms (as csv-stringify's `escape_formulas`). */
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

const OPTIONS = {
  // A cell holding `;` is quoted: a spreadsheet that splits on `;` cannot open a cell inside it.
  quoted_match: ";",
  cast: {
    boolean: (value: boolean) => String(value),
    // csv-stringify's `escape_formulas`, but leaving a signed number as it is: a phone number keeps its `+`.
    string: (value: string) => (FORMULA_START.test(value) && !SIGNED_NUMBER.test(value) ? `'${value}` : value),
  },
} as const;

/** The CSV form of a list whose items follow `item` (a `z.object`). */
export function csvListOf(item: z.ZodType): CsvList {
  const columns = columnsOf(item as unknown as ZodInternals);
  return {
    header: stringify([columns.map((path) => path.join("."))], OPTIONS),
    rows: (items) =>
      items.length === 0
        ? ""
        : stringify(
            items.map((entry) => columns.map((path) => cell(entry, path))),
            OPTIONS,
          ),
  };
}
