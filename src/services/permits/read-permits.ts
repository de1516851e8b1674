/**
 * Reading permits and their charges, always scoped by the caller's tenant and environment: another
 * tenant's permit (or one of another environment) is 404, as if it did not exist.
 */
import type { Environment } from "../../config.ts";
import type { Permit, PermitStatus } from "../../db/schema.ts";
import { NotFoundError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { isId } from "../ids.ts";
import { decodeCursor, toPage } from "../paging.ts";
import { chargeView, permitView, type ChargeView, type PermitView } from "./permit-view.ts";

export interface PermitScope {
  tenantId: string;
  environment: Environment;
}

/** The caller's permit row, or 404. */
export async function findPermit(deps: Pick<Deps, "db">, scope: PermitScope, permitId: string): Promise<Permit> {
  const row = isId("prm", permitId)
    ? await deps.db
        .selectFrom("permits")
        .selectAll()
        .where("id", "=", permitId)
        .where("tenant_id", "=", scope.tenantId)
        .where("environment", "=", scope.environment)
        .executeTakeFirst()
    : undefined;
  if (!row) throw new NotFoundError("Permit not found");
  return row;
}

export async function getPermit(deps: Pick<Deps, "db">, scope: PermitScope, permitId: string): Promise<PermitView> {
  return permitView(await findPermit(deps, scope, permitId));
}

/** One page of the caller's permits, newest first, optionally of one status. */
export async function listPermits(
  deps: Pick<Deps, "db">,
  scope: PermitScope,
  input: { limit: number; cursor?: string; status?: PermitStatus },
): Promise<{ data: PermitView[]; nextCursor: string | null }> {
  let query = deps.db.selectFrom("permits").selectAll().where("tenant_id", "=", scope.tenantId).where("environment", "=", scope.environment);
  if (input.status) query = query.where("status", "=", input.status);
  if (input.cursor !== undefined) query = query.where("id", "<", decodeCursor("prm", input.cursor));
  const page = toPage(
    await query
      .orderBy("id", "desc")
      .limit(input.limit + 1)
      .execute(),
    input.limit,
  );
  return { data: page.rows.map(permitView), nextCursor: page.nextCursor };
}

/** One page of a permit's charges, newest first. */
export async function listCharges(
  deps: Pick<Deps, "db">,
  scope: PermitScope,
  input: { permitId: string; limit: number; cursor?: string },
): Promise<{ data: ChargeView[]; nextCursor: string | null }> {
  const permit = await findPermit(deps, scope, input.permitId);
  let query = deps.db.selectFrom("permit_charges").selectAll().where("permit_id", "=", permit.id).where("tenant_id", "=", scope.tenantId);
  if (input.cursor !== undefined) query = query.where("id", "<", decodeCursor("chg", input.cursor));
  const page = toPage(
    await query
      .orderBy("id", "desc")
      .limit(input.limit + 1)
      .execute(),
    input.limit,
  );
  return { data: page.rows.map((row) => chargeView(row, permit.currency)), nextCursor: page.nextCursor };
}
