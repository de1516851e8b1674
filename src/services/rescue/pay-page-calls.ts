/**
 * The pay page's calls (`/pay/{id}/…`) for either id it is opened with: a payment link's (`pl_…`) or a rescue's
 * (`rs_…`, issue 31 point 3). The page is the same; each id reaches its own link or payment only.
 *
 * @module
 */
import type { Environment } from "../../config.ts";
import { NotFoundError, ValidationError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import type { RequestKey } from "../payments/payment-key.ts";
import { isLinkId } from "../payment-links/links.ts";
import { type LinkPaymentRequest, linkPayment, payThroughLink, type PublicLinkView, type PublicPaymentView, publicPaymentLink } from "../payment-links/pay.ts";
import { isRescueId } from "./offer.ts";
import { payThroughRescue, publicRescue, rescuePayment } from "./rescue-page.ts";

/** The tenant and environment a pay page's id acts for (its `Idempotency-Key`s are theirs); 404 for an id that names nothing. */
export async function payPageOwner(deps: Pick<Deps, "db">, id: string): Promise<{ tenantId: string; environment: Environment }> {
  const table = isRescueId(id) ? "payment_rescues" : isLinkId(id) ? "payment_links" : undefined;
  const row = table ? await deps.db.selectFrom(table).select(["tenant_id", "environment"]).where("id", "=", id).executeTakeFirst() : undefined;
  if (!row) throw new NotFoundError("Payment link not found");
  return { tenantId: row.tenant_id, environment: row.environment };
}

/** What the page shows for `id`: a link's public face, or a rescue's. */
export function payPageFace(deps: Deps, id: string): Promise<PublicLinkView> {
  return isRescueId(id) ? publicRescue(deps, id) : publicPaymentLink(deps, id);
}

/**
 * A payment through a link, or a try through a rescue (whose amount is its payment's). A link's payment keeps the
 * page's `Idempotency-Key` (`payments/payment-key.ts`); a rescue try is one more attempt of its payment, which the
 * offer takes once (a second run of the same try is 409, never a second push).
 */
export async function payPagePay(deps: Deps, id: string, input: LinkPaymentRequest, idempotency?: RequestKey): Promise<PublicPaymentView> {
  if (!isRescueId(id)) return payThroughLink(deps, id, input, idempotency);
  if (input.amount !== undefined) throw new ValidationError(["amount is the payment's: a rescue try takes none"]);
  const { amount: _none, ...wallet } = input;
  return payThroughRescue(deps, id, wallet);
}

/** A payment through the link, or the rescue's payment: 404 for any other. */
export function payPagePayment(deps: Deps, id: string, paymentId: string): Promise<PublicPaymentView> {
  return isRescueId(id) ? rescuePayment(deps, id, paymentId) : linkPayment(deps, id, paymentId);
}
