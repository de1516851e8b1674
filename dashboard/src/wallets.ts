/**
 * Wallets by the names their customers know (docs/routing.md): an operator's code (`mtn`) becomes
 * "MTN Mobile Money", and with the payer's country "MTN Mobile Money · Bénin". Another operator's code is shown
 * as it is.
 */
import { countryName, type Language } from "./i18n.ts";

const OPERATOR_NAMES: Record<string, string> = {
  mtn: "MTN Mobile Money",
  moov: "Moov Money (Flooz)",
  celtiis: "Celtiis Cash",
  togocel: "T-Money (Togocel)",
  airtel: "Airtel Money",
  free: "Free Money",
  orange: "Orange Money",
  wave: "Wave",
  expresso: "E-Money (Expresso)",
};

/** The operators a merchant may filter on, in the order of their names. */
export const OPERATORS = Object.keys(OPERATOR_NAMES).sort((a, b) => OPERATOR_NAMES[a]!.localeCompare(OPERATOR_NAMES[b]!));

export function operatorName(operator: string): string {
  return OPERATOR_NAMES[operator] ?? operator;
}

/** The wallet a payment was made from: its operator's name, and the country when it is known. */
export function walletName(language: Language, operator: string | null, country: string | undefined): string | undefined {
  if (!operator) return undefined;
  return country ? `${operatorName(operator)} · ${countryName(language, country)}` : operatorName(operator);
}
