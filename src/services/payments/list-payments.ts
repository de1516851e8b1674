/**
 * The tenant's payments of every kind, newest first, in pages (contract §6, `GET /payments`).
 */
import { type Kysely, sql } from "kysely";
import { PHONE_KEY_SQL } from "../../db/migrations/0013_payment_phone_search.ts";
import type { Database, Environment, PaymentKind, PaymentState } from "../../db/schema.ts";
import { ValidationError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { decodeCursor, toPage } from "../paging.ts";
import { assertKnownProvider, toPaymentView, type PaymentView } from "./payment-view.ts";

export interface ListPaymentsInput {
  tenantId: string;
  environment: Environment;
  /** Page size, 1–100 (the router enforces it). */
  limit: number;
  /** A `nextCursor` from the page before; absent for the first page. */
  cursor?: string;
  provider?: string;
  kind?: PaymentKind;
  state?: PaymentState;
  providerTransactionId?: string;
  reference?: string;
  /** The operator a routed payment was made to. */
  operator?: string;
  /** The merchant's own reference, exactly. */
  merchantReference?: string;
  /** Text in the description or the customer's names, any case. */
  q?: string;
  /** Created at or after. */
  from?: Date;
  /** Created before. */
  to?: Date;
  /** At least this amount (whole units). */
  amountMin?: number;
  /** At most this amount (whole units). */
  amountMax?: number;
  /** The customer's phone, as a person types it: matched on its digits ({@link phoneDigits}). */
  phone?: string;
}

export interface PaymentPage {
  data: PaymentView[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

/**
 * One page of a tenant's payments in one environment, newest first, optionally filtered. Paging is by
 * keyset on the id, so rows created meanwhile never shift a page: no duplicates, no gaps.
 *
 * @example
 * ```ts
 * let page = await listPayments(deps, { tenantId, environment: "sandbox", limit: 20, state: "succeeded" });
 * while (page.nextCursor) page = await listPayments(deps, { tenantId, environment: "sandbox", limit: 20, state: "succeeded", cursor: page.nextCursor });
 * ```
 * @throws {ValidationError} for a cursor this list did not hand out, a provider the gateway does not run, an
 * empty range (`from` not before `to`, `amountMin` over `amountMax`) or a phone with fewer than
 * {@link MIN_PHONE_DIGITS} digits.
 */
export async function listPayments(deps: Pick<Deps, "db" | "providers">, input: ListPaymentsInput): Promise<PaymentPage> {
  assertKnownProvider(deps, input.provider);
  assertRanges(input);
  // One row more than asked tells whether another page follows.
  const { rows, nextCursor } = toPage(
    await paymentsMatching(deps.db, input)
      .orderBy("id", "desc")
      .limit(input.limit + 1)
      .execute(),
    input.limit,
  );
  return { data: rows.map(toPaymentView), nextCursor };
}

/**
 * The payments a list's filters and cursor keep, unordered: {@link listPayments}'s statement before its
 * order and limit (a test reads its plan: a phone search is served by migration 0013's index).
 */
export function paymentsMatching(db: Kysely<Database>, input: Omit<ListPaymentsInput, "limit">) {
  const after = input.cursor === undefined ? undefined : decodeCursor("pay", input.cursor);
  let query = db.selectFrom("payments").selectAll().where("tenant_id", "=", input.tenantId).where("environment", "=", input.environment);
  if (input.provider !== undefined) query = query.where("provider", "=", input.provider);
  if (input.kind !== undefined) query = query.where("kind", "=", input.kind);
  if (input.state !== undefined) query = query.where("state", "=", input.state);
  if (input.providerTransactionId !== undefined) query = query.where("provider_transaction_id", "=", input.providerTransactionId);
  if (input.reference !== undefined) query = query.where("reference", "=", input.reference);
  if (input.operator !== undefined) query = query.where("operator", "=", input.operator);
  if (input.merchantReference !== undefined) query = query.where("merchant_reference", "=", input.merchantReference);
  if (input.q !== undefined) {
    // A substring, any case, of the description or a name the customer gave (a checkout's `name`, a payment's
    // first and last names); `%`, `_` and `\` in the text are matched as themselves.
    const pattern = `%${input.q.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    query = query.where((eb) =>
      eb.or([
        eb("description", "ilike", pattern),
        sql<boolean>`(customer->>'name') ilike ${pattern}`,
        sql<boolean>`concat_ws(' ', customer->>'firstname', customer->>'lastname') ilike ${pattern}`,
      ]),
    );
  }
  if (input.from !== undefined) query = query.where("created_at", ">=", input.from);
  if (input.to !== undefined) query = query.where("created_at", "<", input.to);
  if (input.amountMin !== undefined) query = query.where("amount", ">=", input.amountMin);
  if (input.amountMax !== undefined) query = query.where("amount", "<=", input.amountMax);
  if (input.phone !== undefined) {
    // One number ends with the other: `+229 97 00 00 00` finds a checkout's `97000000` and the reverse. On
    // the reversed digits (migration 0013's index) the first is a prefix range, the second an equality with
    // one of the searched number's shorter prefixes (its suffixes of at least MIN_PHONE_DIGITS digits).
    const reversed = [...phoneDigits(input.phone)].reverse().join("");
    const shorter = Array.from({ length: reversed.length - MIN_PHONE_DIGITS }, (_, i) => reversed.slice(0, MIN_PHONE_DIGITS + i));
    const key = sql.raw(`(${PHONE_KEY_SQL})`);
    query = query.where(({ or }) =>
      or([
        sql<boolean>`(${key} ~>=~ ${reversed} and ${key} ~<~ ${`${reversed}:`})`,
        ...(shorter.length > 0 ? [sql<boolean>`${key} = any(${shorter}::text[])`] : []),
      ]),
    );
  }
  if (after !== undefined) query = query.where("id", "<", after);
  return query;
}

/** The fewest digits a phone search takes: fewer would match numbers that only share their last digits. */
export const MIN_PHONE_DIGITS = 6;

/** A phone number as typed (`+229 97-00.00 00`), reduced to its digits. */
export function phoneDigits(phone: string): string {
  return phone.replace(/[^0-9]/g, "");
}

function assertRanges(input: ListPaymentsInput): void {
  const messages: string[] = [];
  if (input.from !== undefined && input.to !== undefined && input.from >= input.to) messages.push("from must be before to");
  if (input.amountMin !== undefined && input.amountMax !== undefined && input.amountMin > input.amountMax) {
    messages.push("amountMin must not be more than amountMax");
  }
  if (input.phone !== undefined && phoneDigits(input.phone).length < MIN_PHONE_DIGITS) {
    messages.push(`phone must have at least ${MIN_PHONE_DIGITS} digits`);
  }
  if (messages.length > 0) throw new ValidationError(messages);
}
