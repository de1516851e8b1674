/**
 * `DELETE /providerB/permits/{permit_id}` (contract §5): revoke at provider B first, then locally — status
 * `revoked`, `permit.revoked`, and the permit's schedule cancelled, in one transaction. Provider B down
 * (502/504) changes nothing here: the customer's authorisation still stands there, so we do not pretend it
 * ended. An already ended permit answers as it is.
 */
import { NotConfiguredError } from "../../errors.ts";
import { ProviderCallError } from "../../providers/provider.ts";
import { checkoutProviderOf, providerFailure } from "../checkout/checkout-provider.ts";
import type { Deps } from "../deps.ts";
import { applyPermitStatus, authorisationOf, ENDED_STATUSES, permitMismatchOf } from "./apply-permit-status.ts";
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
  const recurring = checkoutProviderOf(deps).recurring;
  try {
    const revoked = await recurring.revoke(deps, authorisationOf(permit));
    if (revoked.outcome === "revoked") await applyPermitStatus(deps, permit.id, "revoked");
    else {
      // Provider B will not move it to revoked: it ended there already (expired, declined, revoked). Learn how.
      const report = await recurring.read(deps, authorisationOf(permit));
      if (permitMismatchOf(permit, report) !== null || !ENDED_STATUSES.includes(report.status)) throw revoked.failure;
      await applyPermitStatus(deps, permit.id, report.status);
    }
  } catch (error) {
    if (error instanceof NotConfiguredError)
      throw new NotConfiguredError(`The provider B credentials this permit was made with are gone (${permit.environment})`);
    throw error instanceof ProviderCallError ? providerFailure(error) : error;
  }
  return permitView(await findPermit(deps, scope, permitId));
}
