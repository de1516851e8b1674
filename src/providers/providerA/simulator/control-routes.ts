/**
 * The simulator's own control surface (providers.md, "The simulators' own control surface"): test
 * accounts and their webhook target, the console page, and the actions behind its buttons. No
 * authentication: these are development tools, mounted only where the simulators are.
 */
import { Elysia } from "elysia";
import { renderConsolePage } from "./console-page.ts";
import { IN_FLIGHT } from "./payouts/ledger.ts";
import { renderPayoutsSection } from "./payouts/console-section.ts";
import type { SimulatorContext } from "./context.ts";
import type { SettledStatus, SimAccount, SimTransaction } from "./ledger.ts";
import { isFormPost, parseWith, readJson } from "./request-body.ts";
import { renderTransaction } from "./render.ts";
import { createAccountSchema, declineSchema, ProviderAError, repeatTransactionIdSchema, transactionIdFrom, webhookTargetSchema } from "./wire.ts";

const RECENT_ON_CONSOLE = 20;

/** The `last_error_code` of a console decline: our choice (the provider documents no list); JSON callers may send their own. */
const CONSOLE_DECLINE_CODE = "DECLINED_BY_CUSTOMER";

const ACTIONS = {
  approve: "approved",
  decline: "declined",
  cancel: "canceled",
  refund: "refunded",
  "partial-refund": "approved_partially_refunded",
} as const satisfies Record<string, SettledStatus>;

type ConsoleAction = keyof typeof ACTIONS;

// Relative to `/_sim/transactions/{id}/{action}`, so it lands on the console wherever the simulator is mounted.
const consoleRedirect = (query: string) => new Response(null, { status: 303, headers: { location: `../../../console?${query}` } });

/** The `/_sim/…` routes and `/console` of one simulator. */
export function controlRoutes(ctx: SimulatorContext) {
  const { ledger, webhooks } = ctx;

  function anyTransaction(rawId: string): SimTransaction {
    const id = transactionIdFrom(rawId);
    const trx = id === undefined ? undefined : ledger.transaction(id);
    if (!trx) throw new ProviderAError(404, `Transaction ${rawId} not found`);
    return trx;
  }

  function account(secretKey: string): SimAccount {
    const found = ledger.accountByKey(secretKey);
    if (!found) throw new ProviderAError(404, "Account not found");
    return found;
  }

  /** A console action: JSON in and out for tests, or a form post answered with a redirect to the console. */
  async function settleFromConsole(request: Request, rawId: string, action: ConsoleAction): Promise<Response> {
    const form = isFormPost(request);
    try {
      const trx = anyTransaction(rawId);
      const status = ACTIONS[action];
      let errorCode: string | null = null;
      if (status === "declined") {
        const chosen = form ? undefined : parseWith(declineSchema, await readJson(request), "Invalid decline").last_error_code;
        errorCode = chosen ?? CONSOLE_DECLINE_CODE;
      }
      ledger.settle(trx, status, errorCode);
      if (form) return consoleRedirect(`done=${status}&id=${trx.id}`);
      return Response.json({ "v1/transaction": renderTransaction(trx) });
    } catch (error) {
      if (form && error instanceof ProviderAError) return consoleRedirect(`failed=${ACTIONS[action]}&id=${encodeURIComponent(rawId)}`);
      throw error;
    }
  }

  function consoleNotice(query: URLSearchParams): { kind: "ok" | "error"; text: string } | undefined {
    const rawId = query.get("id") ?? "";
    const id = transactionIdFrom(rawId);
    const done = query.get("done");
    const failed = query.get("failed");
    if (id === undefined) return undefined;
    const payoutDone = query.get("payout_done");
    const payoutFailed = query.get("payout_failed");
    if (payoutDone === "sent" || payoutDone === "failed") return { kind: "ok", text: `Payout ${id} ${payoutDone}.` };
    if (payoutFailed === "sent" || payoutFailed === "failed") {
      const payout = ctx.payouts.payout(id);
      return { kind: "error", text: payout ? `Payout ${id} is ${payout.status}: it cannot be ${payoutFailed}.` : `Payout ${id} not found.` };
    }
    if (done && Object.values(ACTIONS).includes(done as SettledStatus)) return { kind: "ok", text: `Transaction ${id} ${done}.` };
    if (failed && Object.values(ACTIONS).includes(failed as SettledStatus)) {
      const trx = ledger.transaction(id);
      return { kind: "error", text: trx ? `Transaction ${id} is ${trx.status}: it cannot be ${failed}.` : `Transaction ${id} not found.` };
    }
    return undefined;
  }

  return new Elysia({ name: "simulator-providerA-control" })
    .get("/_sim/health", () => Response.json({ status: "ok", simulator: "providerA" }))
    .post(
      "/_sim/accounts",
      async ({ request }) => {
        const { environment, secretKey, webhookSecret } = parseWith(createAccountSchema, await readJson(request), "Invalid account");
        const keys = secretKey !== undefined && webhookSecret !== undefined ? { secretKey, webhookSecret } : undefined;
        // Given keys already known: the same account again (200), unless they name it otherwise.
        const known = keys ? ledger.accountByKey(keys.secretKey) : undefined;
        if (known && (known.webhookSecret !== keys?.webhookSecret || known.environment !== environment))
          throw new ProviderAError(409, "An account with this secret key exists with another webhook secret or environment");
        const account = known ?? ledger.createAccount(environment, keys);
        return Response.json({ secretKey: account.secretKey, webhookSecret: account.webhookSecret }, { status: known ? 200 : 201 });
      },
      { parse: "none" },
    )
    .put(
      "/_sim/accounts/:secretKey/webhook",
      async ({ params, request }) => {
        const target = account(params.secretKey);
        target.webhookUrl = parseWith(webhookTargetSchema, await readJson(request), "Invalid webhook target").url;
        return Response.json({ url: target.webhookUrl });
      },
      { parse: "none" },
    )
    .get("/_sim/accounts/:secretKey/webhook", ({ params }) => {
      const target = account(params.secretKey);
      return Response.json({ url: target.webhookUrl, deliveries: webhooks.deliveriesOf(target.id) });
    })
    .post(
      "/_sim/faults/repeat-transaction-id",
      async ({ request }) => {
        const { id } = parseWith(repeatTransactionIdSchema, await readJson(request), "Invalid fault");
        ledger.repeatTransactionId(id);
        return Response.json({ nextTransactionId: id });
      },
      { parse: "none" },
    )
    .get("/_sim/transactions", ({ query }) => {
      const all = [...ledger.pending(), ...ledger.recentlySettled(Number.MAX_SAFE_INTEGER)];
      const listed = query.status ? all.filter((trx) => trx.status === query.status) : all;
      return Response.json({
        transactions: listed.map((trx) => ({
          ...renderTransaction(trx),
          phone_number: trx.push?.phone ?? trx.customer?.phone ?? null,
          push_sent: trx.push !== null,
        })),
      });
    })
    .get(
      "/console",
      ({ request }) =>
        new Response(
          renderConsolePage({
            pending: ledger.pending(),
            recent: ledger.recentlySettled(RECENT_ON_CONSOLE),
            notice: consoleNotice(new URL(request.url).searchParams),
            approveDelayMs: ctx.approveDelayMs,
            payoutsSection: renderPayoutsSection({
              open: ctx.payouts
                .all()
                .filter((payout) => payout.status === "pending" || IN_FLIGHT.includes(payout.status))
                .reverse(),
              recent: ctx.payouts
                .all()
                .filter((payout) => payout.status === "sent" || payout.status === "failed")
                .slice(0, RECENT_ON_CONSOLE),
              approveDelayMs: ctx.approveDelayMs,
            }),
          }),
          { headers: { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" } },
        ),
    )
    .post("/_sim/transactions/:id/approve", ({ params, request }) => settleFromConsole(request, params.id, "approve"), { parse: "none" })
    .post("/_sim/transactions/:id/decline", ({ params, request }) => settleFromConsole(request, params.id, "decline"), { parse: "none" })
    .post("/_sim/transactions/:id/cancel", ({ params, request }) => settleFromConsole(request, params.id, "cancel"), { parse: "none" })
    .post("/_sim/transactions/:id/refund", ({ params, request }) => settleFromConsole(request, params.id, "refund"), { parse: "none" })
    .post("/_sim/transactions/:id/partial-refund", ({ params, request }) => settleFromConsole(request, params.id, "partial-refund"), { parse: "none" });
}
