/**
 * The navigation: the screens offered to a session (`permissions.ts`), in their order. A shop's session has the
 * shop's screens; the operator's has its own, and the shop's too while it works one (`actingFor`); a person has
 * their Profile last. A person who must set up two-factor sign-in first has the Profile alone.
 */
import type { MessageKey } from "./i18n.ts";
import { offers } from "./permissions.ts";
import type { Route } from "./routes.ts";
import type { ActingFor, Session } from "./session.ts";

export interface NavLink {
  route: Route;
  label: MessageKey;
}

const TENANT_LINKS = [
  { route: { screen: "home" }, label: "nav.home" },
  { route: { screen: "payments" }, label: "nav.payments" },
  { route: { screen: "links" }, label: "nav.links" },
  { route: { screen: "permits" }, label: "nav.permits" },
  { route: { screen: "money" }, label: "nav.money" },
  { route: { screen: "reports" }, label: "nav.reports" },
  { route: { screen: "routing" }, label: "nav.routing" },
  { route: { screen: "webhooks" }, label: "nav.webhooks" },
  { route: { screen: "events" }, label: "nav.events" },
  { route: { screen: "apiKeys" }, label: "nav.apiKeys" },
  { route: { screen: "settings" }, label: "nav.settings" },
  { route: { screen: "team" }, label: "nav.team" },
  { route: { screen: "auditLog" }, label: "nav.auditLog" },
] as const satisfies readonly NavLink[];

const OPERATOR_LINKS = [
  { route: { screen: "tenants" }, label: "nav.tenants" },
  { route: { screen: "stuck" }, label: "nav.stuck" },
  { route: { screen: "allReports" }, label: "nav.reports" },
  { route: { screen: "allAuditLog" }, label: "nav.auditLog" },
] as const satisfies readonly NavLink[];

const PROFILE_LINK = { route: { screen: "profile" }, label: "nav.profile" } as const satisfies NavLink;

/** The links of the session's navigation. */
export function navigationOf(session: Session, actingFor: ActingFor | undefined): readonly NavLink[] {
  // A person's own profile (password, two-factor sign-in, sessions); a token's session has none.
  const profile = session.personRole ? [PROFILE_LINK] : [];
  if (session.mustEnrol) return profile;
  const screens = session.role !== "admin" ? TENANT_LINKS : actingFor ? [...TENANT_LINKS, ...OPERATOR_LINKS] : OPERATOR_LINKS;
  return [...screens.filter((link) => offers(session, link.route.screen)), ...profile];
}
