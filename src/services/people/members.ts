/** A shop's people (issue 30 point 1): who belongs to it, as what, and removing one. */
import { sql } from "kysely";
import type { MembershipRole } from "../../db/schema.ts";
import { ForbiddenError, NotFoundError } from "../../errors.ts";
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
    .orderBy(sql`memberships.role = 'owner'`, "desc")
    .orderBy("people.email")
    .execute();
  return rows.map((row) => ({ id: row.id, email: row.email, name: row.name, role: row.role, joinedAt: row.created_at.toISOString() }));
}

/**
 * Changes a person's role in a shop (issue 30 point 4). The shop's own people (its owner) give and change the
 * roles but the owner's: making someone an owner, or changing an owner's role, is the operator's (`byOperator`).
 * 404 when the person does not belong to the shop. Their sessions take the new role at their next call.
 */
export async function changeRole(
  deps: Pick<Deps, "db">,
  input: { tenantId: string; personId: string; role: MembershipRole; byOperator: boolean },
): Promise<{ id: string; role: MembershipRole; previousRole: MembershipRole }> {
  return deps.db.transaction().execute(async (tx) => {
    const row = await tx
      .selectFrom("memberships")
      .select("role")
      .where("tenant_id", "=", input.tenantId)
      .where("person_id", "=", input.personId)
      .forUpdate()
      .executeTakeFirst();
    if (!row) throw new NotFoundError("Person not found");
    if (!input.byOperator && (row.role === "owner" || input.role === "owner"))
      throw new ForbiddenError("Only an operator makes someone a shop's owner or changes an owner's role");
    await tx.updateTable("memberships").set({ role: input.role }).where("tenant_id", "=", input.tenantId).where("person_id", "=", input.personId).execute();
    return { id: input.personId, role: input.role, previousRole: row.role };
  });
}

/**
 * Removes a person from a shop, and ends their sessions in it, in one transaction (the person keeps their other
 * shops). 404 when they do not belong to it; an owner is removed by an operator only (`byOperator`).
 */
export async function removeMember(
  deps: Pick<Deps, "db" | "now">,
  tenantId: string,
  personId: string,
  byOperator = true,
): Promise<{ id: string; removedAt: string }> {
  const now = deps.now();
  return deps.db.transaction().execute(async (tx) => {
    const row = await tx
      .deleteFrom("memberships")
      .where("tenant_id", "=", tenantId)
      .where("person_id", "=", personId)
      .returning(["person_id", "role"])
      .executeTakeFirst();
    if (!row) throw new NotFoundError("Person not found");
    // Thrown inside the transaction: the deletion is rolled back.
    if (row.role === "owner" && !byOperator) throw new ForbiddenError("Only an operator removes a shop's owner");
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
