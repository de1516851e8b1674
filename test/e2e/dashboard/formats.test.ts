/**
 * What the dashboard shows a merchant, as plain functions (issue 17 point 4): amounts per currency
 * (`5 000 FCFA`, GNF), the language a browser gets first, and the hash routes' round trip. The
 * catalogues' keys are checked by the type checker (messages-en.ts is typed by messages-fr.ts).
 */
import { describe, expect, it } from "bun:test";
import { fill, formatAmount, formatDateTime, initialLanguage, rememberLanguage } from "../../../dashboard/src/i18n.ts";
import { en } from "../../../dashboard/src/messages-en.ts";
import { fr } from "../../../dashboard/src/messages-fr.ts";
import { navigationOf } from "../../../dashboard/src/navigation.ts";
import { type Ability, may, mayRead, type Reading } from "../../../dashboard/src/permissions.ts";
import { hashOf, parseRoute, type Route } from "../../../dashboard/src/routes.ts";
import type { Session } from "../../../dashboard/src/session.ts";
import { browserOf } from "../../../dashboard/src/screens/profile.tsx";
import { areaOf } from "../../../src/routers/access.ts";
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
  // Each ability of the dashboard is what a procedure's area allows a role to change.
  const ABILITY_AREAS: Record<Ability, Area> = {
    team: "team",
    money: "money",
    keys: "keys",
    webhooks: "webhooks",
    routing: "routing",
    credentials: "credentials",
    operator: "operator-write",
  };
  // Each reading, what a procedure's area allows a role to read.
  const READING_AREAS: Record<Reading, Area> = { team: "team", audit: "audit", operator: "operator-read" };
  const ROLES = ["owner", "developer", "finance", "viewer", "admin", "support"] as const;
  const sessionOf = (personRole: Session["personRole"], role?: Session["role"]): Session => ({
    token: personRole ? null : "token",
    role: role ?? (personRole === "admin" || personRole === "support" ? "admin" : "tenant"),
    tenantId: null,
    environment: "sandbox",
    subject: "someone",
    expiresAt: "2099-01-01T00:00:00Z",
    personRole,
  });

  it("is what the API lets the role do (src/services/people/roles.ts), for every role and ability", () => {
    const disagreements: string[] = [];
    for (const role of ROLES)
      for (const [ability, area] of Object.entries(ABILITY_AREAS) as [Ability, Area][])
        if (may(sessionOf(role), ability) !== roleMay(role, area, "mutation")) disagreements.push(`${role} ${ability}`);
    expect(disagreements).toEqual([]);
  });

  it("reads what the API lets the role read, for every role and reading", () => {
    const disagreements: string[] = [];
    for (const role of ROLES)
      for (const [reading, area] of Object.entries(READING_AREAS) as [Reading, Area][])
        if (mayRead(sessionOf(role), reading) !== roleMay(role, area, "query")) disagreements.push(`${role} ${reading}`);
    expect(disagreements).toEqual([]);
  });

  it("is everything for a token's session (an admin token, a developer's API key), the operator's lists an admin token's alone", () => {
    for (const ability of Object.keys(ABILITY_AREAS) as Ability[]) expect(may(sessionOf(undefined), ability)).toBe(true);
    for (const reading of ["team", "audit"] as const) expect(mayRead(sessionOf(undefined), reading)).toBe(true);
    expect(mayRead(sessionOf(undefined, "admin"), "operator")).toBe(true);
    expect(mayRead(sessionOf(undefined, "tenant"), "operator")).toBe(false);
  });

  // The procedures each screen of the navigation loads to show itself (a screen's changes are offered apart, by ability).
  const SCREEN_READS: Partial<Record<Route["screen"], readonly string[]>> = {
    home: ["reports.overview", "balance.get", "reports.onboarding"],
    payments: ["payments.list"],
    links: ["paymentLinks.list"],
    permits: ["permits.list"],
    money: ["balance.get", "balance.entries", "payouts.list", "payouts.allRefunds"],
    reports: ["balance.reconciliation", "balance.differences"],
    routing: ["routing.get", "routing.stats", "routing.paymentMethods"],
    webhooks: ["webhooks.list"],
    events: ["events.list"],
    apiKeys: ["apiKeys.list"],
    settings: ["providers.credentials", "credentials.providerA.get", "credentials.providerA.versions"],
    team: ["people.members", "people.invitations"],
    auditLog: ["auditLog.list"],
    tenants: ["tenants.list"],
    stuck: ["admin.stuckPayments"],
    allReports: ["balance.allReconciliation", "balance.allDifferences"],
    allAuditLog: ["admin.auditLog"],
    profile: ["me.me", "me.sessions", "me.signIns"],
  };
  const SHOP_SCREENS: readonly Route["screen"][] = [
    "home",
    "payments",
    "links",
    "permits",
    "money",
    "reports",
    "routing",
    "webhooks",
    "events",
    "apiKeys",
    "settings",
    "team",
    "auditLog",
  ];
  const OPERATOR_SCREENS: readonly Route["screen"][] = ["tenants", "stuck", "allReports", "allAuditLog"];

  it("offers in the navigation every screen the API lets the role read, and no other, for every role", () => {
    const readable = (role: (typeof ROLES)[number], screens: readonly Route["screen"][]) =>
      screens.filter((screen) => SCREEN_READS[screen]!.every((procedure) => roleMay(role, areaOf(procedure)!, "query")));
    const offered = (session: Session, actingFor?: { tenantId: string; name: string }) => navigationOf(session, actingFor).map((link) => link.route.screen);
    for (const role of ["owner", "developer", "finance", "viewer"] as const)
      expect({ role, screens: offered(sessionOf(role)) }).toEqual({ role, screens: [...readable(role, SHOP_SCREENS), "profile"] });
    for (const role of ["admin", "support"] as const) {
      expect({ role, screens: offered(sessionOf(role)) }).toEqual({ role, screens: [...readable(role, OPERATOR_SCREENS), "profile"] });
      // Working a shop: the shop's screens it may read, then the operator's.
      expect({ role, screens: offered(sessionOf(role), { tenantId: "ten_1", name: "Boutique" }) }).toEqual({
        role,
        screens: [...readable(role, SHOP_SCREENS), ...readable(role, OPERATOR_SCREENS), "profile"],
      });
    }
    // The support staff reads the team and the audit log of the shop it works, as the API lets it.
    expect(offered(sessionOf("support"), { tenantId: "ten_1", name: "Boutique" })).toContain("team");
    // A person who must set up two-factor sign-in first has the Profile alone.
    expect(navigationOf({ ...sessionOf("support"), mustEnrol: true }, undefined).map((link) => link.route.screen)).toEqual(["profile"]);
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
