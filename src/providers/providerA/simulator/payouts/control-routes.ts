/**
 * The payouts' part of the simulator's control surface: the list of every payout, the console's Send and
 * Fail actions (JSON for tests, a form post answered with a redirect to the console), and crediting a
 * balance by hand. No authentication, like the rest of `/_sim`.
 */
import { Elysia } from "elysia";
import type { SimulatorContext } from "../context.ts";
import { isFormPost, parseWith, readJson } from "../request-body.ts";
import { ProviderAError, transactionIdFrom } from "../wire.ts";
import type { FinalPayoutStatus, SimPayout } from "./ledger.ts";
import { renderPayout } from "./render.ts";
import { creditBalanceSchema, failPayoutSchema } from "./wire.ts";

/** The `last_error_code` of a console failure: our choice; JSON callers may send their own. */
const CONSOLE_FAILURE_CODE = "FAILED_FROM_CONSOLE";

// Relative to `/_sim/payouts/{id}/{action}`, so it lands on the console wherever the simulator is mounted.
const consoleRedirect = (query: string) => new Response(null, { status: 303, headers: { location: `../../../console?${query}` } });

/** The `/_sim/payouts…` and `/_sim/accounts/{secretKey}/balances` routes of one simulator. */
export function payoutControlRoutes(ctx: SimulatorContext) {
  const { ledger, payouts } = ctx;

  function anyPayout(rawId: string): SimPayout {
    const id = transactionIdFrom(rawId);
    const payout = id === undefined ? undefined : payouts.payout(id);
    if (!payout) throw new ProviderAError(404, `Payout ${rawId} not found`);
    return payout;
  }

  async function endFromConsole(request: Request, rawId: string, status: FinalPayoutStatus): Promise<Response> {
    const form = isFormPost(request);
    try {
      const payout = anyPayout(rawId);
      let errorCode: string | null = null;
      if (status === "failed") {
        const chosen = form ? undefined : parseWith(failPayoutSchema, await readJson(request), "Invalid failure").last_error_code;
        errorCode = chosen ?? CONSOLE_FAILURE_CODE;
      }
      payouts.settle(payout, status, errorCode);
      if (form) return consoleRedirect(`payout_done=${status}&id=${payout.id}`);
      return Response.json({ "v1/payout": renderPayout(payout) });
    } catch (error) {
      if (form && error instanceof ProviderAError) return consoleRedirect(`payout_failed=${status}&id=${encodeURIComponent(rawId)}`);
      throw error;
    }
  }

  return new Elysia({ name: "simulator-providerA-payout-control" })
    .get("/_sim/payouts", ({ query }) => {
      const all = payouts.all();
      const listed = query.status ? all.filter((payout) => payout.status === query.status) : all;
      return Response.json({ payouts: listed.map(renderPayout) });
    })
    .post("/_sim/payouts/:id/send", ({ params, request }) => endFromConsole(request, params.id, "sent"), { parse: "none" })
    .post("/_sim/payouts/:id/fail", ({ params, request }) => endFromConsole(request, params.id, "failed"), { parse: "none" })
    .post(
      "/_sim/accounts/:secretKey/balances",
      async ({ params, request }) => {
        const account = ledger.accountByKey(params.secretKey);
        if (!account) throw new ProviderAError(404, "Account not found");
        const input = parseWith(creditBalanceSchema, await readJson(request), "Invalid credit");
        payouts.credit(account, input.mode, input.currency, input.amount);
        return Response.json({ balances: payouts.balancesOf(account).map(({ mode, currencyIso, amount }) => ({ mode, currency: currencyIso, amount })) });
      },
      { parse: "none" },
    );
}
