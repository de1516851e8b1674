/**
 * What the dashboard offers a person, by their role (issue 30 point 6): what a role may read is offered, read-only
 * where the role changes nothing there; what a role cannot do is not offered — the API refuses it anyway
 * (docs/team.md's table). A token's session (an operator's admin token, a development API key) is offered
 * everything its token may do, as before roles.
 *
 * The abilities and readings follow the areas of `src/services/people/roles.ts` (`operator` is its
 * `operator-write` for an ability, its `operator-read` for a reading); a test compares the two
 * (`test/e2e/dashboard/formats.test.ts`).
 *
 * @module
 */
import type { Route } from "./routes.ts";
import type { Session } from "./session.ts";

/** The parts of the dashboard a role may change (every role reads the shop's data). */
export type Ability = "team" | "money" | "keys" | "webhooks" | "routing" | "credentials" | "operator";

/** What only some roles may read: the shop's team, its audit log, the operator's lists across shops. */
export type Reading = "team" | "audit" | "operator";

const ABILITIES: Record<string, readonly Ability[]> = {
  owner: ["team", "money", "keys", "webhooks", "routing", "credentials"],
  developer: ["keys", "webhooks", "routing"],
  finance: ["money"],
  viewer: [],
  admin: ["team", "money", "keys", "webhooks", "routing", "credentials", "operator"],
  support: [],
};

const READINGS: Record<string, readonly Reading[]> = {
  owner: ["team", "audit"],
  developer: [],
  finance: [],
  viewer: [],
  admin: ["team", "audit", "operator"],
  // Support reads everything, on every shop, and changes nothing.
  support: ["team", "audit", "operator"],
};

/** May this session's person do `ability`? A token's session may do what its token may. */
export function may(session: Session, ability: Ability): boolean {
  if (!session.personRole) return true;
  return ABILITIES[session.personRole]?.includes(ability) ?? false;
}

/** May this session's person read `reading`? A token's session reads what its token does (the operator's lists, an admin token's). */
export function mayRead(session: Session, reading: Reading): boolean {
  if (!session.personRole) return reading !== "operator" || session.role === "admin";
  return READINGS[session.personRole]?.includes(reading) ?? false;
}

/** The screens only some roles read (every other screen reads the shop's data, which every role may). */
const SCREEN_READING: Partial<Record<Route["screen"], Reading>> = {
  team: "team",
  auditLog: "audit",
  tenants: "operator",
  stuck: "operator",
  allReports: "operator",
  allAuditLog: "operator",
};

/** Is the screen offered to this session (read-only where its role changes nothing there)? */
export function offers(session: Session, screen: Route["screen"]): boolean {
  const needed = SCREEN_READING[screen];
  return needed === undefined || mayRead(session, needed);
}
