/**
 * The dashboard's addresses: hash routes (`#/payments/pay_…`), so `/dashboard` is the only page the
 * gateway serves and a reload keeps the screen. A list's filters ride in the hash's query
 * (`#/payments?state=failed`): Back, a bookmark or a shared link shows the same list.
 */
export type Route =
  | { screen: "home" }
  /** `filters`: the list's filters as a query string (`state=failed&from=2026-11-01`), kept in the address. */
  | { screen: "payments"; filters?: string }
  | { screen: "payment"; paymentId: string }
  | { screen: "links" }
  | { screen: "link"; linkId: string }
  | { screen: "permits" }
  | { screen: "permit"; permitId: string }
  | { screen: "webhooks" }
  | { screen: "webhook"; webhookId: string }
  | { screen: "events" }
  | { screen: "money" }
  /** One payout or refund (`po_…`, `rf_…`), opened from Balance & payouts. */
  | { screen: "moneyOut"; id: string }
  | { screen: "reports" }
  | { screen: "routing" }
  | { screen: "allReports" }
  | { screen: "apiKeys" }
  /** `version`: one stored version of the provider keys to show (`providerB-sandbox-v1`, see settings.tsx). */
  | { screen: "settings"; version?: string }
  | { screen: "tenants" }
  | { screen: "stuck" }
  | { screen: "team" }
  | { screen: "auditLog" }
  | { screen: "allAuditLog" }
  /** The signed-in person's own: password, two-factor sign-in, sessions. */
  | { screen: "profile" }
  | { screen: "notFound" };

/** The route a location hash names; `#/` and an empty hash are the session's home (`home`). */
export function parseRoute(hash: string, home: Route): Route {
  const [path = "", query = ""] = hash.split("?", 2);
  const parts = path
    .replace(/^#\/?/, "")
    .split("/")
    .filter((part) => part !== "")
    .map(decodeURIComponent);
  const [first, second] = parts;
  if (first === undefined) return home;
  if (first === "home") return { screen: "home" };
  if (first === "payments") return second ? { screen: "payment", paymentId: second } : query ? { screen: "payments", filters: query } : { screen: "payments" };
  if (first === "links") return second ? { screen: "link", linkId: second } : { screen: "links" };
  if (first === "permits") return second ? { screen: "permit", permitId: second } : { screen: "permits" };
  if (first === "webhooks") return second ? { screen: "webhook", webhookId: second } : { screen: "webhooks" };
  if (first === "events") return { screen: "events" };
  if (first === "money") return second ? { screen: "moneyOut", id: second } : { screen: "money" };
  if (first === "reports") return { screen: "reports" };
  if (first === "routing") return { screen: "routing" };
  if (first === "operator" && second === "reports") return { screen: "allReports" };
  if (first === "api-keys") return { screen: "apiKeys" };
  if (first === "settings") return second ? { screen: "settings", version: second } : { screen: "settings" };
  if (first === "operator" && second === "tenants") return { screen: "tenants" };
  if (first === "operator" && second === "stuck") return { screen: "stuck" };
  if (first === "team") return { screen: "team" };
  if (first === "audit-log") return { screen: "auditLog" };
  if (first === "operator" && second === "audit-log") return { screen: "allAuditLog" };
  if (first === "profile") return { screen: "profile" };
  return { screen: "notFound" };
}

/** The hash of a route, e.g. `#/payments/pay_01…`. */
export function hashOf(route: Route): string {
  switch (route.screen) {
    case "home":
      return "#/home";
    case "payments":
      return route.filters ? `#/payments?${route.filters}` : "#/payments";
    case "payment":
      return `#/payments/${encodeURIComponent(route.paymentId)}`;
    case "links":
      return "#/links";
    case "link":
      return `#/links/${encodeURIComponent(route.linkId)}`;
    case "permits":
      return "#/permits";
    case "permit":
      return `#/permits/${encodeURIComponent(route.permitId)}`;
    case "webhooks":
      return "#/webhooks";
    case "webhook":
      return `#/webhooks/${encodeURIComponent(route.webhookId)}`;
    case "events":
      return "#/events";
    case "money":
      return "#/money";
    case "moneyOut":
      return `#/money/${encodeURIComponent(route.id)}`;
    case "reports":
      return "#/reports";
    case "routing":
      return "#/routing";
    case "allReports":
      return "#/operator/reports";
    case "apiKeys":
      return "#/api-keys";
    case "settings":
      return route.version ? `#/settings/${encodeURIComponent(route.version)}` : "#/settings";
    case "tenants":
      return "#/operator/tenants";
    case "stuck":
      return "#/operator/stuck";
    case "team":
      return "#/team";
    case "auditLog":
      return "#/audit-log";
    case "allAuditLog":
      return "#/operator/audit-log";
    case "profile":
      return "#/profile";
    case "notFound":
      return "#/";
  }
}
