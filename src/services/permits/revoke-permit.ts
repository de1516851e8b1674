/**
 * `DELETE /providerB/permits/{permit_id}` (contract §5): revoke at provider B first, then locally — status
 * `revoked`, `permit.revoked`, and the permit's schedule cancelled, in one transaction. Provider B down
 * (502/504) changes nothing here: the customer's authorisation still stands there, so we do not pretend it
 * ended. An already ended permit answers as it is.
 */
import { AppError, NotConfiguredError } from "../../errors.ts";
import { PERMIT_NOT_ACTIVE_CODE } from "../../providers/providerB/permit.ts";
import type { Deps } from "../deps.ts";
import { applyPermitStatus, ENDED_STATUSES, permitMismatchOf } from "./apply-permit-status.ts";
import { openPermitAccount } from "./permit-account.ts";
import { findPermit, type PermitScope } from "./read-permits.ts";
import { permitView, type PermitView } from "./permit-view.ts";

/**
 * Revokes the caller's permit and returns it as it now stands.
 *
 * @example
 * ```ts
 * const permit = await revokePermit(deps, { tenantId, environment: "sandbox" }, "prm_…"); // permit.status === "revoked"
 * ```
 */
export async function revokePermit(deps: Deps, scope: PermitScope, permitId: string): Promise<PermitView> {
  const permit = await findPermit(deps, scope, permitId);
  if (ENDED_STATUSES.includes(permit.status)) return permitView(permit);
  const account = await openPermitAccount(deps, { tenantId: permit.tenant_id, environment: permit.environment, version: permit.credential_version });
  if (!account) throw new NotConfiguredError(`The provider B credentials this permit was made with are gone (${permit.environment})`);
  try {
    await account.permits.revokePermit(permit.token);
    await applyPermitStatus(deps, permit.id, "revoked");
  } catch (error) {
    // Provider B will not move it to revoked: it ended there already (expired, declined, revoked). Learn how.
    if (!(error instanceof AppError && error.status === 422 && error.extras.providerResponseCode === PERMIT_NOT_ACTIVE_CODE)) throw error;
    const confirmation = await account.permits.confirmPermit(permit.token);
    if (permitMismatchOf(permit, confirmation) !== null || !ENDED_STATUSES.includes(confirmation.status)) throw error;
    await applyPermitStatus(deps, permit.id, confirmation.status);
  }
  return permitView(await findPermit(deps, scope, permitId));
}
