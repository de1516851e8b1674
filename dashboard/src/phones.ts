/**
 * Phone numbers as people type and read them (issue 29 point 4): a number typed the local way with its country
 * chosen (`97 00 00 01`, Benin) is the international one the API takes (`+22997000001`), and an international
 * number is shown in groups (`+229 97 00 00 01`). The countries and their calling codes are the gateway's own
 * table (`src/services/countries.ts`), bundled into the page.
 *
 * @example
 * ```ts
 * internationalNumberOf("97 00 00 01", "bj"); // "+22997000001"
 * internationalNumberOf("0022997000001", "bj"); // "+22997000001"
 * formatPhone("+221770000008"); // "+221 77 000 00 08"
 * ```
 */
import { CALLING_CODES, type Country, countryOfNumber } from "../../src/services/countries.ts";

/** The countries a phone can be typed for, in the contract's order. */
export const PHONE_COUNTRIES = Object.keys(CALLING_CODES) as Country[];

/**
 * The international form of a number typed any way: spaces, dots, dashes and brackets dropped; `00` read as `+`;
 * a number without either is the chosen country's (its calling code put first, unless it is already there).
 */
export function internationalNumberOf(typed: string, country: string): string {
  const digits = typed.replace(/[\s.()-]/g, "");
  if (digits === "" || digits.startsWith("+")) return digits;
  if (digits.startsWith("00")) return `+${digits.slice(2)}`;
  const code = (CALLING_CODES as Record<string, string>)[country];
  if (code === undefined) return digits;
  // "22997000001" typed without its +: the calling code is already there when the rest is a whole national number.
  if (digits.startsWith(code) && digits.length - code.length >= 8) return `+${digits}`;
  return `+${code}${digits}`;
}

/** Groups of a national number as the country writes it: pairs; Senegal 2-3-2-2; another odd length 3 then pairs. */
function groupsOf(national: string, country: Country): string[] {
  const groups: string[] = [];
  let rest = national;
  if (national.length % 2 === 1) {
    const head = country === "sn" ? 2 : 3;
    groups.push(rest.slice(0, head));
    rest = rest.slice(head);
    if (country === "sn") {
      groups.push(rest.slice(0, 3));
      rest = rest.slice(3);
    }
  }
  for (let index = 0; index < rest.length; index += 2) groups.push(rest.slice(index, index + 2));
  return groups;
}

/** An international number in groups (`+229 97 00 00 01`); a number of another country, or not international, as it is. */
export function formatPhone(number: string | null | undefined): string | undefined {
  if (!number) return undefined;
  const country = /^\+\d+$/.test(number) ? countryOfNumber(number) : undefined;
  if (!country) return number;
  const code = CALLING_CODES[country];
  return [`+${code}`, ...groupsOf(number.slice(code.length + 1), country)].join(" ");
}
