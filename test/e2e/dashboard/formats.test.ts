/**
 * What the dashboard shows a merchant, as plain functions (issue 17 point 4): amounts per currency
 * (`5 000 FCFA`, GNF), the language a browser gets first, and the hash routes' round trip. The
 * catalogues' keys are checked by the type checker (messages-en.ts is typed by messages-fr.ts).
 */
import { describe, expect, it } from "bun:test";
import { fill, formatAmount, formatDateTime, initialLanguage, rememberLanguage } from "../../../dashboard/src/i18n.ts";
import { en } from "../../../dashboard/src/messages-en.ts";
import { fr } from "../../../dashboard/src/messages-fr.ts";
import { hashOf, parseRoute, type Route } from "../../../dashboard/src/routes.ts";
import { ERROR_CODES } from "../../../src/errors.ts";

/** A Storage over a Map, as sessionStorage behaves. */
function memoryStorage(): Storage {
  const items = new Map<string, string>();
  return {
    get length() {
      return items.size;
    },
    clear: () => items.clear(),
    getItem: (key) => items.get(key) ?? null,
    key: (index) => [...items.keys()][index] ?? null,
    removeItem: (key) => void items.delete(key),
    setItem: (key, value) => void items.set(key, String(value)),
  };
}

describe("amounts", () => {
  it("groups thousands with a space in French and names the CFA franc FCFA", () => {
    expect(formatAmount("fr", 5000, "XOF")).toBe("5\u00a0000\u00a0FCFA");
    expect(formatAmount("fr", 1_250_000, "XOF")).toBe("1\u00a0250\u00a0000\u00a0FCFA");
    expect(formatAmount("fr", 250_000, "GNF")).toBe("250\u00a0000\u00a0GNF");
  });

  it("groups with a comma in English, with no minor unit", () => {
    expect(formatAmount("en", 5000, "XOF")).toBe("5,000\u00a0FCFA");
    expect(formatAmount("en", 999, "GNF")).toBe("999\u00a0GNF");
  });
});

describe("dates", () => {
  it("shows a date and time in each language", () => {
    expect(formatDateTime("fr", "2026-11-26T14:05:00Z")).toMatch(/2026/);
    expect(formatDateTime("en", "2026-11-26T14:05:00Z")).toMatch(/Nov 2026/);
  });
});

describe("the first language", () => {
  it("is French when the browser's first preference is French, English otherwise", () => {
    expect(initialLanguage(memoryStorage(), ["fr-SN", "en"])).toBe("fr");
    expect(initialLanguage(memoryStorage(), ["fr"])).toBe("fr");
    expect(initialLanguage(memoryStorage(), ["en-GB", "fr"])).toBe("en");
    expect(initialLanguage(memoryStorage(), [])).toBe("en");
  });

  it("is the one chosen earlier in the tab", () => {
    const storage = memoryStorage();
    rememberLanguage(storage, "en");
    expect(initialLanguage(storage, ["fr-FR"])).toBe("en");
  });
});

describe("messages", () => {
  it("have the same keys in both languages, and fill their placeholders", () => {
    expect(Object.keys(en).sort()).toEqual(Object.keys(fr).sort());
    expect(fill(fr["deliveries.attempts"], { count: 2 })).toBe("2 tentative(s)");
    expect(fill("{missing} stays", {})).toBe("{missing} stays");
  });
});

describe("hash routes", () => {
  const home: Route = { screen: "payments" };
  it("read back what they write", () => {
    const routes: Route[] = [
      { screen: "home" },
      { screen: "payments" },
      { screen: "payments", filters: "state=failed&q=awa+diallo" },
      { screen: "payment", paymentId: "pay_01ABC" },
      { screen: "permits" },
      { screen: "permit", permitId: "prm_01ABC" },
      { screen: "webhooks" },
      { screen: "webhook", webhookId: "we_01ABC" },
      { screen: "events" },
      { screen: "money" },
      { screen: "reports" },
      { screen: "routing" },
      { screen: "allReports" },
      { screen: "apiKeys" },
      { screen: "settings" },
      { screen: "settings", version: "providerB-sandbox-v1" },
      { screen: "tenants" },
      { screen: "stuck" },
    ];
    for (const route of routes) expect(parseRoute(hashOf(route), home)).toEqual(route);
  });

  it("send an empty hash home and an unknown one to the not-found screen", () => {
    expect(parseRoute("", home)).toEqual(home);
    expect(parseRoute("#/", home)).toEqual(home);
    expect(parseRoute("#/nowhere", home)).toEqual({ screen: "notFound" });
  });
});

describe("refusals in words", () => {
  it("has a sentence in each language for every error code of the contract", () => {
    const worded = (catalogue: Record<string, string>) =>
      Object.keys(catalogue)
        .filter((key) => key.startsWith("error.code."))
        .map((key) => key.slice("error.code.".length))
        .sort();
    expect(worded(en)).toEqual([...ERROR_CODES].sort());
    expect(worded(fr)).toEqual([...ERROR_CODES].sort());
    for (const code of ERROR_CODES) {
      expect(en[`error.code.${code}` as keyof typeof en]).toBeString();
      expect(fr[`error.code.${code}` as keyof typeof fr]).toBeString();
      expect(en[`error.code.${code}` as keyof typeof en]).not.toBe(fr[`error.code.${code}` as keyof typeof fr]);
    }
  });
});
