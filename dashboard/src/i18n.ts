/**
 * The dashboard's words in French and English, and the formats a merchant reads: amounts as `5 000 FCFA`,
 * dates in the viewer's own time zone. French is the default when the browser prefers it (most of the
 * gateway's merchants are in francophone West Africa); the choice is kept for the tab in sessionStorage.
 */
import type { fr } from "./messages-fr.ts";

export type Language = "fr" | "en";

/** Every message key, as the French catalogue (the reference) has them. */
export type MessageKey = keyof typeof fr;

export type Messages = Record<MessageKey, string>;

const LANGUAGE_KEY = "passerelle.language";

/**
 * The language to start with: the one chosen earlier in this tab, else French when the browser's first
 * preferred language is French, else English.
 */
export function initialLanguage(storage: Storage, languages: readonly string[]): Language {
  const chosen = storage.getItem(LANGUAGE_KEY);
  if (chosen === "fr" || chosen === "en") return chosen;
  return languages[0]?.toLowerCase().startsWith("fr") ? "fr" : "en";
}

/** Keeps the language chosen for the rest of the tab's life. */
export function rememberLanguage(storage: Storage, language: Language): void {
  storage.setItem(LANGUAGE_KEY, language);
}

/** `{name}` placeholders replaced by `values`. */
export function fill(template: string, values: Record<string, string | number> = {}): string {
  return template.replace(/\{(\w+)\}/g, (whole, name: string) => (name in values ? String(values[name]) : whole));
}

const CURRENCY_LABELS: Record<string, string> = { XOF: "FCFA", XAF: "FCFA", GNF: "GNF" };

/**
 * An amount in whole units with its currency, grouped per the language: `5 000 FCFA`, `5,000 FCFA`,
 * `250 000 GNF`. The gateway's currencies have no minor unit.
 */
export function formatAmount(language: Language, amount: number, currency: string): string {
  const number = new Intl.NumberFormat(language === "fr" ? "fr-FR" : "en-GB", { maximumFractionDigits: 0 }).format(amount);
  // French groups with a narrow no-break space; a plain no-break space reads the same and copies better.
  return `${number.replace(/\u202f/g, "\u00a0")}\u00a0${CURRENCY_LABELS[currency] ?? currency}`;
}

/** A share as a percentage, whole: `67 %` (French, a no-break space before the sign), `67%` (English). */
export function formatPercent(language: Language, share: number): string {
  return new Intl.NumberFormat(language === "fr" ? "fr-FR" : "en-GB", { style: "percent", maximumFractionDigits: 0 })
    .format(share)
    .replace(/\u202f/g, "\u00a0");
}

/** A date and time in the viewer's time zone (the browser's), e.g. `26 nov. 2026, 14:05`. */
export function formatDateTime(language: Language, iso: string): string {
  return new Intl.DateTimeFormat(language === "fr" ? "fr-FR" : "en-GB", { dateStyle: "medium", timeStyle: "short" }).format(new Date(iso));
}

/** A country's name in the viewer's language (`bj` → `Bénin` / `Benin`). */
export function countryName(language: Language, country: string): string {
  try {
    return new Intl.DisplayNames([language], { type: "region" }).of(country.toUpperCase()) ?? country.toUpperCase();
  } catch {
    return country.toUpperCase();
  }
}
