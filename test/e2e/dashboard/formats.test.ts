/**
 * What the dashboard shows a merchant, as plain functions (issue 17 point 4): amounts per currency
 * (`5 000 FCFA`, GNF), the language a browser gets first, and the hash routes' round trip. The
 * catalogues' keys are checked by the type checker (messages-en.ts is typed by messages-fr.ts).
 */
import { describe, expect, it } from "bun:test";
import { fill, formatAmount, formatDateTime, initialLanguage, rememberLanguage } from "../../../dashboard/src/i18n.ts";
import { en } from "../../../dashboard/src/messages-en.ts";
import { fr } from "../../../dashboard/src/messages-fr.ts";
import { type Ability, may } from "../../../dashboard/src/permissions.ts";
import { hashOf, parseRoute, type Route } from "../../../dashboard/src/routes.ts";
import type { Session } from "../../../dashboard/src/session.ts";
import { browserOf } from "../../../dashboard/src/screens/profile.tsx";
import { type Area, roleMay } from "../../../src/services/people/roles.ts";
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
      { screen: "team" },
      { screen: "auditLog" },
      { screen: "allAuditLog" },
      { screen: "profile" },
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

describe("what a role is offered", () => {
  // Each ability of the dashboard is what a procedure's area allows: a change, or (the audit log) a read.
  const ABILITY_AREAS: Record<Ability, { area: Area; type: "query" | "mutation" }> = {
    team: { area: "team", type: "mutation" },
    audit: { area: "audit", type: "query" },
    money: { area: "money", type: "mutation" },
    keys: { area: "keys", type: "mutation" },
    webhooks: { area: "webhooks", type: "mutation" },
    routing: { area: "routing", type: "mutation" },
    credentials: { area: "credentials", type: "mutation" },
    operator: { area: "operator-write", type: "mutation" },
  };
  const sessionOf = (personRole: Session["personRole"]): Session => ({
    token: personRole ? null : "token",
    role: personRole === "admin" || personRole === "support" ? "admin" : "tenant",
    tenantId: null,
    environment: "sandbox",
    subject: "someone",
    expiresAt: "2099-01-01T00:00:00Z",
    personRole,
  });

  it("is what the API lets the role do (src/services/people/roles.ts), for every role and ability", () => {
    const disagreements: string[] = [];
    for (const role of ["owner", "developer", "finance", "viewer", "admin", "support"] as const)
      for (const [ability, { area, type }] of Object.entries(ABILITY_AREAS) as [Ability, (typeof ABILITY_AREAS)[Ability]][])
        if (may(sessionOf(role), ability) !== roleMay(role, area, type)) disagreements.push(`${role} ${ability}`);
    expect(disagreements).toEqual([]);
  });

  it("is everything for a token's session (an admin token, a developer's API key)", () => {
    for (const ability of Object.keys(ABILITY_AREAS) as Ability[]) expect(may(sessionOf(undefined), ability)).toBe(true);
  });
});

describe("a session's browser", () => {
  it("is named as a person knows it, from its user agent", () => {
    expect(browserOf("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36")).toBe("Chrome · Linux");
    expect(
      browserOf("Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"),
    ).toBe("Safari · iOS");
    expect(browserOf("curl/8.5.0")).toBe("curl/8.5.0");
    expect(browserOf(null)).toBeUndefined();
  });
});
