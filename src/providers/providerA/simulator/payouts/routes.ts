/**
 * Provider A's payout API under `/v1` (providers-money-out.md, "A (FedaPay) payouts"): create, start, the
 * reads (by id, by `merchant_reference`, the list) and the balances, authenticated like the rest of `/v1`.
 * A create without `mode` gets the provider's blank 500; other refusals are `ProviderAError`s.
 */
import { Elysia } from "elysia";
import { accountFromAuthorization } from "../api-routes.ts";
import type { SimulatorContext } from "../context.ts";
import { parseWith, readJson } from "../request-body.ts";
import { ProviderAError, transactionIdFrom } from "../wire.ts";
import type { SimPayout } from "./ledger.ts";
import { playPayoutOutcome } from "./outcome.ts";
import { renderBalance, renderPayout } from "./render.ts";
import { createPayoutSchema, parseScheduledAt, startPayoutsSchema } from "./wire.ts";

const payoutAnswer = (payout: SimPayout) => Response.json({ "v1/payout": renderPayout(payout) });

/** Whether a create body lacks `mode`: the provider then fails with an empty 500 (third-party reports). */
function lacksMode(body: unknown): boolean {
  return body !== null && typeof body === "object" && !Array.isArray(body) && !(body as { mode?: unknown }).mode;
}

/** The `/v1/payouts…` and `/v1/balances…` routes of one simulator. */
export function payoutRoutes(ctx: SimulatorContext) {
  const { ledger, payouts } = ctx;

  return new Elysia({ name: "simulator-providerA-payouts", prefix: "/v1" })
    .resolve(({ headers }) => ({ account: accountFromAuthorization(ledger, headers.authorization) }))
    .post(
      "/payouts",
      async ({ account, request }) => {
        const body = await readJson(request);
        if (lacksMode(body)) return new Response(null, { status: 500 });
        return payoutAnswer(payouts.create(account, parseWith(createPayoutSchema, body, "Payout could not be created")));
      },
      { parse: "none" },
    )
    .put(
      "/payouts/start",
      async ({ account, request }) => {
        const input = parseWith(startPayoutsSchema, await readJson(request), "The payouts could not be started");
        const scheduled = input.payouts.map((item, index) => {
          const at = parseScheduledAt(item.scheduled_at);
          if (at === null) throw new ProviderAError(422, "The payouts could not be started", { [`payouts.${index}.scheduled_at`]: ["is not a valid date"] });
          return at;
        });
        const started = payouts.start(account, input.payouts, scheduled);
        for (const payout of started) playPayoutOutcome(ctx, payout);
        return Response.json({ "v1/payouts": started.map(renderPayout) });
      },
      { parse: "none" },
    )
    .get("/payouts/merchant/:reference", ({ account, params }) => {
      const payout = payouts.byMerchantReference(account, params.reference);
      if (!payout) throw new ProviderAError(404, `Payout with merchant reference ${params.reference} not found`);
      return payoutAnswer(payout);
    })
    .get("/payouts/:id", ({ account, params }) => {
      const id = transactionIdFrom(params.id);
      const payout = id === undefined ? undefined : payouts.payoutOf(account, id);
      if (!payout) throw new ProviderAError(404, `Payout ${params.id} not found`);
      return payoutAnswer(payout);
    })
    .get("/payouts", ({ account }) => {
      const listed = payouts.listOf(account);
      return Response.json({
        "v1/payouts": listed.map(renderPayout),
        meta: { current_page: 1, next_page: null, prev_page: null, per_page: listed.length, total_pages: 1, total_count: listed.length },
      });
    })
    .get("/balances", ({ account }) => Response.json({ "v1/balances": payouts.balancesOf(account).map((balance) => renderBalance(balance, ctx.now())) }))
    .get("/balances/:id", ({ account, params }) => {
      const balance = payouts.balancesOf(account).find((candidate) => String(candidate.id) === params.id);
      if (!balance) throw new ProviderAError(404, `Balance ${params.id} not found`);
      return Response.json({ "v1/balance": renderBalance(balance, ctx.now()) });
    });
}
