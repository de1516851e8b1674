/**
 * The simulated merchant's balances: one per country, as at provider B, where a payment credits only the
 * account of its own country. A new account opens with a sandbox float in each (`OPENING_BALANCE`); a
 * completed payment (a checkout or a permit charge) credits its channel's country; a submitted disbursement
 * takes its amount from its withdraw mode's country and gives it back if it fails.
 */
import type { MerchantAccount } from "../store.ts";

/** The withdraw modes the simulator sends to, with the country whose balance pays them (providers-money-out.md). */
export const WITHDRAW_MODE_COUNTRIES: Readonly<Record<string, string>> = {
  "orange-money-senegal": "SN",
  "free-money-senegal": "SN",
  "expresso-senegal": "SN",
  "wave-senegal": "SN",
  "mtn-benin": "BJ",
  "moov-benin": "BJ",
  "mtn-ci": "CI",
  "orange-money-ci": "CI",
  "moov-ci": "CI",
  "wave-ci": "CI",
  "t-money-togo": "TG",
  "moov-togo": "TG",
  "orange-money-mali": "ML",
  "orange-money-burkina": "BF",
};

const COUNTRY_OF_SUFFIX: readonly [string, string][] = [
  ["-senegal", "SN"],
  ["-ci", "CI"],
  ["-benin", "BJ"],
  ["-togo", "TG"],
  ["-mali", "ML"],
  ["-burkina", "BF"],
];

/** The country a payment's channel credits (`wave_ci` → `CI`); a card or an unknown channel credits Senegal's. */
export function countryOfChannel(channel: string | null): string {
  const name = (channel ?? "").toLowerCase().replaceAll("_", "-");
  return COUNTRY_OF_SUFFIX.find(([suffix]) => name.endsWith(suffix))?.[1] ?? "SN";
}

/** Adds `amount` (negative to take) to the account's balance in `country`. */
export function moveBalance(account: MerchantAccount, country: string, amount: number): void {
  account.balances[country] = (account.balances[country] ?? 0) + amount;
}

/** `738612` → `"738612.00 XOF"`, the way check-balance writes a balance. */
export function balanceText(amount: number): string {
  return `${amount.toFixed(2)} XOF`;
}
