/**
 * Amounts as the API shows them: whole units of a currency. A stored amount is at most 2^53 − 1 (migration
 * 0014's checks), but a sum of many is not, nor is a row written before those checks: a JSON number carries
 * either, and {@link wholeUnits} accepts any whole number, so a report or a balance never fails its own
 * output validation whatever the database holds (issue 24). Sums stay exact up to 2^53 − 1 (9 × 10^15,
 * far beyond any real balance); beyond it they are the nearest number JSON can carry.
 *
 * @module
 */
import { z } from "zod";

/** An output field of whole units (an amount, or a sum of amounts). */
export function wholeUnits(description: string) {
  return z
    .number()
    .refine(Number.isInteger, { error: "must be a whole number" })
    .meta({ description, override: { type: "integer" } });
}

/** A sum or amount as the database drivers read it (int8 or numeric: a number or its digits; null: none). */
export function amountFrom(value: string | number | bigint | null | undefined): number {
  return value === null || value === undefined ? 0 : Number(value);
}

/**
 * The `maximum` the OpenAPI document shows for amounts the gateway bounds by `MAX_AMOUNT`: that setting's
 * default (`config.ts`; a test keeps them equal). The schemas do not enforce it — the services check the
 * configured value, which an operator may set otherwise — so it is metadata only:
 *
 * ```ts
 * amount: z.number().int().min(1).meta({ example: 500, maximum: DOCUMENTED_MAX_AMOUNT })
 * ```
 */
export const DOCUMENTED_MAX_AMOUNT = 10_000_000;
