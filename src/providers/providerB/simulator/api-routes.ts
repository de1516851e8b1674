/**
 * The provider's API, served twice: `/sandbox-api/v1/…` is mode `test`, `/api/v1/…` is mode `live`.
 * Every route checks the key headers first (`merchantRoute`), then its body against the wire schema.
 */
import { Elysia } from "elysia";
import { authenticateMerchant } from "./authenticate.ts";
import type { SimulatorContext } from "./context.ts";
import { createInvoice, findInvoice, invoiceConfirmation, invoicePageUrl } from "./invoices.ts";
import { chargePermit, createPermit, findPermit, permitConfirmation, permitPageUrl, transitionPermit } from "./permits.ts";
import type { MerchantAccount, Mode } from "./store.ts";
import {
  checkoutInvoiceCreateBody,
  permitChargeBody,
  permitCreateBody,
  permitRevokeBody,
  providerAnswer,
  readWireBody,
  refusal,
  RESPONSE_CODES,
} from "./wire.ts";

/** Where each mode's API lives under the simulator. */
export const API_PREFIX: Record<Mode, string> = { test: "/sandbox-api/v1", live: "/api/v1" };

interface MerchantRequest {
  account: MerchantAccount;
  request: Request;
  params: Record<string, string>;
}

/** Wraps a handler so that it runs only for a request whose key headers name an account. */
function merchantRoute(sim: SimulatorContext, handler: (input: MerchantRequest) => Response | Promise<Response>) {
  return ({ request, params }: { request: Request; params: Record<string, string> }) => {
    const { account, refused } = authenticateMerchant(sim.store, request.headers);
    return refused ?? handler({ account, request, params });
  };
}

/** The API routes of one mode, as an Elysia plugin under that mode's prefix. */
export function providerApiRoutes(sim: SimulatorContext, mode: Mode) {
  const owner = (account: MerchantAccount) => ({ account, mode });
  const noParse = { parse: "none" } as const;

  return new Elysia({ prefix: API_PREFIX[mode] })
    .post(
      "/checkout-invoice/create",
      merchantRoute(sim, async ({ account, request }) => {
        const { value, refused } = await readWireBody(checkoutInvoiceCreateBody, request);
        if (refused) return refused;
        const invoice = createInvoice(sim, { account, mode, baseUrl: sim.baseUrlOf(request), body: value });
        return providerAnswer(200, {
          response_code: RESPONSE_CODES.success,
          response_text: invoicePageUrl(invoice),
          description: "Checkout Invoice Created",
          token: invoice.token,
        });
      }),
      noParse,
    )
    .get(
      "/checkout-invoice/confirm/:token",
      merchantRoute(sim, ({ account, params }) => {
        const invoice = findInvoice(sim, params.token ?? "", owner(account));
        if (!invoice) return refusal(404, RESPONSE_CODES.notFound, "Invoice Not Found");
        return providerAnswer(200, invoiceConfirmation(invoice));
      }),
    )
    .post(
      "/permit/create",
      merchantRoute(sim, async ({ account, request }) => {
        const { value, refused } = await readWireBody(permitCreateBody, request);
        if (refused) return refused;
        const permit = createPermit(sim, { account, mode, baseUrl: sim.baseUrlOf(request), body: value });
        return providerAnswer(200, {
          response_code: RESPONSE_CODES.success,
          response_text: permitPageUrl(permit),
          description: "Permit Created",
          token: permit.token,
        });
      }),
      noParse,
    )
    .get(
      "/permit/confirm/:token",
      merchantRoute(sim, ({ account, params }) => {
        const permit = findPermit(sim, params.token ?? "", owner(account));
        if (!permit) return refusal(404, RESPONSE_CODES.notFound, "Permit Not Found");
        return providerAnswer(200, permitConfirmation(permit));
      }),
    )
    .post(
      "/permit/charge",
      merchantRoute(sim, async ({ account, request }) => {
        const { value, refused } = await readWireBody(permitChargeBody, request);
        if (refused) return refused;
        const charge = chargePermit(sim, { account, mode, body: value });
        if (charge.refused) return refusal(charge.refused.status, charge.refused.code, charge.refused.text);
        return providerAnswer(200, { ...charge.answer });
      }),
      noParse,
    )
    .post(
      "/permit/revoke",
      merchantRoute(sim, async ({ account, request }) => {
        const { value, refused } = await readWireBody(permitRevokeBody, request);
        if (refused) return refused;
        const permit = findPermit(sim, value.permit_token, owner(account));
        if (!permit) return refusal(404, RESPONSE_CODES.notFound, "Permit Not Found");
        const moved = transitionPermit(sim, permit, "revoke");
        if (!moved.ok) return refusal(409, RESPONSE_CODES.permitNotActive, moved.reason);
        return providerAnswer(200, { response_code: RESPONSE_CODES.success, response_text: "Permit Revoked", status: permit.status });
      }),
      noParse,
    );
}
