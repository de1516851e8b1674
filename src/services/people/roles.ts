/**
 * Roles (issue 30 point 4): what each person may do, by area. A procedure belongs to one area
 * (`routers/access.ts`); a role holds some areas. Programs (API keys, tokens) are not people and keep acting as
 * before: a shop's token does everything on its shop but the operator's calls, an admin token everything.
 *
 * | role        | side     | areas                                                                       |
 * |-------------|----------|-----------------------------------------------------------------------------|
 * | `owner`     | shop     | everything of the shop: its team and audit log, keys, provider credentials  |
 * | `developer` | shop     | keys (API keys, the callback secret), webhooks, routing, reads              |
 * | `finance`   | shop     | money (payments, refunds, payouts, links, permits), reads                   |
 * | `viewer`    | shop     | reads                                                                       |
 * | `admin`     | operator | everything, on every shop (naming it with `x-tenant-id`)                    |
 * | `support`   | operator | every read, on every shop, the operator's lists and the audit log included  |
 *
 * @module
 */
import type { MembershipRole, OperatorRole } from "../../db/schema.ts";

/** What a procedure is about, for the roles. */
export type Area =
  /** Reading the shop's data (payments, balance, settings as masked, keys as prefixes…). */
  | "read"
  /** The shop's people: invitations, roles, removals, the two-factor rule. */
  | "team"
  /** The shop's audit log. */
  | "audit"
  /** API keys and the callback signing secret. */
  | "keys"
  /** Provider credentials. */
  | "credentials"
  | "webhooks"
  | "routing"
  /** Moving money: payments, checkouts, links, permits and their charges, refunds, payouts. */
  | "money"
  /** A person's own calls (`/people/me…`, `whoami`). */
  | "self"
  /** The operator's reads across shops (`GET /tenants`, `/admin/…`). */
  | "operator-read"
  /** The operator's changes (creating and changing shops, the operator's staff). */
  | "operator-write";

export const SHOP_ROLES = ["owner", "developer", "finance", "viewer"] as const satisfies readonly MembershipRole[];
export const OPERATOR_ROLES = ["admin", "support"] as const satisfies readonly OperatorRole[];
export type PersonRole = MembershipRole | OperatorRole;

const SHOP_AREAS: Record<MembershipRole, readonly Area[]> = {
  owner: ["read", "team", "audit", "keys", "credentials", "webhooks", "routing", "money", "self"],
  developer: ["read", "keys", "webhooks", "routing", "self"],
  finance: ["read", "money", "self"],
  viewer: ["read", "self"],
};

/** Is `role` an operator's? */
export function isOperatorRole(role: string): role is OperatorRole {
  return role === "admin" || role === "support";
}

/**
 * May a person with `role` call a procedure of `area` (`type` its tRPC call type)? `support` reads everything
 * and changes nothing but its own settings (sign-out, two-factor).
 */
export function roleMay(role: PersonRole, area: Area, type: "query" | "mutation" | "subscription"): boolean {
  if (role === "admin") return true;
  if (role === "support") return area === "self" || area === "read" || type === "query";
  return SHOP_AREAS[role].includes(area);
}
