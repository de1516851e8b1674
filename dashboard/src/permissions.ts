/**
 * What the dashboard offers a person, by their role (issue 30 point 6): what a role cannot do is not offered —
 * the API refuses it anyway (docs/team.md's table). A token's session (an operator's admin token, a development
 * API key) is offered everything its token may do, as before roles.
 *
 * The abilities follow the areas of `src/services/people/roles.ts` (`operator` is its `operator-write`: creating,
 * disabling a shop and letting it go live, the operator's admin only); a test compares the two
 * (`test/e2e/dashboard/formats.test.ts`).
 *
 * @module
 */
import type { Route } from "./routes.ts";
import type { Session } from "./session.ts";

/** The parts of the dashboard a role may use beyond reading. */
export type Ability = "team" | "audit" | "money" | "keys" | "webhooks" | "routing" | "credentials" | "operator";

const ABILITIES: Record<string, readonly Ability[]> = {
  owner: ["team", "audit", "money", "keys", "webhooks", "routing", "credentials"],
  developer: ["keys", "webhooks", "routing"],
  finance: ["money"],
  viewer: [],
  admin: ["team", "audit", "money", "keys", "webhooks", "routing", "credentials", "operator"],
  support: ["audit"],
};

/** May this session's person do `ability`? A token's session may do what its token may. */
export function may(session: Session, ability: Ability): boolean {
  if (!session.personRole) return true;
  return ABILITIES[session.personRole]?.includes(ability) ?? false;
}

/** The screens only some roles see (every other screen reads, which every role may). */
const SCREEN_ABILITY: Partial<Record<Route["screen"], Ability>> = { team: "team", auditLog: "audit" };

/** Is the screen offered to this session? */
export function offers(session: Session, screen: Route["screen"]): boolean {
  const needed = SCREEN_ABILITY[screen];
  return needed === undefined || may(session, needed);
}
