/**
 * The operator's staff (issue 30 point 4): people with an operator role (`admin`, or `support`, which reads
 * only), invited by an operator like a shop's people, who sign in to the operator's side of the dashboard. The
 * admin token stays for programs (`passerelle token --admin`).
 *
 * @module
 */
import type { OperatorRole } from "../../db/schema.ts";
import { NotFoundError } from "../../errors.ts";
import type { Deps } from "../deps.ts";

export interface StaffView {
  id: string;
  email: string;
  name: string | null;
  role: OperatorRole;
}

/** The operator's staff, by e-mail address. */
export async function listStaff(deps: Pick<Deps, "db">): Promise<StaffView[]> {
  const rows = await deps.db
    .selectFrom("people")
    .select(["id", "email", "name", "operator_role"])
    .where("operator_role", "is not", null)
    .orderBy("email")
    .execute();
  return rows.map((row) => ({ id: row.id, email: row.email, name: row.name, role: row.operator_role! }));
}

/** Takes a person off the operator's staff and ends their sessions on the operator's side, in one transaction. 404 when not of the staff. */
export async function removeStaff(deps: Pick<Deps, "db" | "now">, personId: string): Promise<{ id: string; removedAt: string }> {
  const now = deps.now();
  return deps.db.transaction().execute(async (tx) => {
    const row = await tx
      .updateTable("people")
      .set({ operator_role: null, updated_at: now })
      .where("id", "=", personId)
      .where("operator_role", "is not", null)
      .returning("id")
      .executeTakeFirst();
    if (!row) throw new NotFoundError("Person not found");
    await tx
      .updateTable("sessions")
      .set({ ended_at: now })
      .where("person_id", "=", personId)
      .where("tenant_id", "is", null)
      .where("ended_at", "is", null)
      .execute();
    return { id: row.id, removedAt: now.toISOString() };
  });
}
