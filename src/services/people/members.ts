/** A shop's people (issue 30 point 1): who belongs to it, as what, and removing one. */
import type { MembershipRole } from "../../db/schema.ts";
import { NotFoundError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { endSessionsOf } from "./sessions.ts";

export interface MemberView {
  id: string;
  email: string;
  name: string | null;
  role: MembershipRole;
  joinedAt: string;
}

/** The people of a shop, owners first, then by e-mail address. */
export async function listMembers(deps: Pick<Deps, "db">, tenantId: string): Promise<MemberView[]> {
  const rows = await deps.db
    .selectFrom("memberships")
    .innerJoin("people", "people.id", "memberships.person_id")
    .select(["people.id", "people.email", "people.name", "memberships.role", "memberships.created_at"])
    .where("memberships.tenant_id", "=", tenantId)
    .orderBy("memberships.role", "desc")
    .orderBy("people.email")
    .execute();
  return rows.map((row) => ({ id: row.id, email: row.email, name: row.name, role: row.role, joinedAt: row.created_at.toISOString() }));
}

/**
 * Removes a person from a shop, and ends their sessions in it, in one transaction (the person keeps their other
 * shops). 404 when they do not belong to it.
 */
export async function removeMember(deps: Pick<Deps, "db" | "now">, tenantId: string, personId: string): Promise<{ id: string; removedAt: string }> {
  const now = deps.now();
  return deps.db.transaction().execute(async (tx) => {
    const row = await tx
      .deleteFrom("memberships")
      .where("tenant_id", "=", tenantId)
      .where("person_id", "=", personId)
      .returning("person_id")
      .executeTakeFirst();
    if (!row) throw new NotFoundError("Person not found");
    await endSessionsOf(tx, now, personId, tenantId);
    return { id: row.person_id, removedAt: now.toISOString() };
  });
}

/** Sets whether a shop's people must sign in with a two-factor code. */
export async function setTwoFactorRequired(deps: Pick<Deps, "db" | "now">, tenantId: string, required: boolean): Promise<{ requireTwoFactor: boolean }> {
  await deps.db.updateTable("tenants").set({ require_two_factor: required, updated_at: deps.now() }).where("id", "=", tenantId).execute();
  return { requireTwoFactor: required };
}

/** Does a shop require two-factor sign-in? */
export async function twoFactorRequired(deps: Pick<Deps, "db">, tenantId: string): Promise<boolean> {
  const row = await deps.db.selectFrom("tenants").select("require_two_factor").where("id", "=", tenantId).executeTakeFirst();
  return row?.require_two_factor ?? false;
}
