/**
 * The countries the gateway's providers reach, by lower-case ISO 3166 code, and their international calling
 * codes: the one table every rule about a phone number reads (a payment's, a payout's, a refund's, a
 * schedule's default time zone). A provider's own number format stays in its folder.
 *
 * @example
 * ```ts
 * callingCodeOf("bj");                           // "229"
 * countryOfNumber("+22997000001");               // "bj"
 * nationalNumber("+22997000001", "bj");          // "97000001"
 * phonePrefixProblem("customer.phone.number", "+22897000001", "bj");
 * // "customer.phone.number must start with +229 for country bj"
 * ```
 *
 * @module
 */

/** Calling codes (without `+`) of the countries the gateway knows, in the contract's order. */
export const CALLING_CODES = { bj: "229", tg: "228", gn: "224", ci: "225", ne: "227", sn: "221", ml: "223", bf: "226" } as const;

export type Country = keyof typeof CALLING_CODES;

/** The calling code of `country`, or undefined for a country the gateway does not know. */
export function callingCodeOf(country: string): string | undefined {
  return Object.hasOwn(CALLING_CODES, country) ? CALLING_CODES[country as Country] : undefined;
}

/** The country of an international number (`+229…` → `bj`), or undefined. */
export function countryOfNumber(international: string): Country | undefined {
  const code = /^\+(\d{3})/.exec(international)?.[1];
  return (Object.keys(CALLING_CODES) as Country[]).find((country) => CALLING_CODES[country] === code);
}

/** The national part of an international number (`+22997000001` in bj → `97000001`); without a known prefix, the digits as given. */
export function nationalNumber(international: string, country: string): string {
  const code = callingCodeOf(country);
  return code !== undefined && international.startsWith(`+${code}`) ? international.slice(code.length + 1) : international.replace(/^\+/, "");
}

/** An international number for a wallet given in either form (`97000001` in bj → `+22997000001`). */
export function internationalNumber(number: string, country: string): string {
  const code = callingCodeOf(country);
  return number.startsWith("+") || code === undefined ? number : `+${code}${number}`;
}

/**
 * The 400 message when `number` is not an international number of `country`; undefined when it is, or when
 * the country is not one the gateway knows (the caller's own rule names the countries it takes).
 */
export function phonePrefixProblem(field: string, number: string, country: string): string | undefined {
  const code = callingCodeOf(country);
  return code === undefined || number.startsWith(`+${code}`) ? undefined : `${field} must start with +${code} for country ${country}`;
}
