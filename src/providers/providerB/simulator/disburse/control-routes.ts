/**
 * The disbursements' control surface: the console page and its Send / Fail buttons, the list tests read,
 * an account's balances, and the fault that loses the next submit's answer after it acted. No
 * authentication: a development tool.
 *
 * | Route | Does |
 * |---|---|
 * | `GET /console` | the sandbox console (`console-page.ts`) |
 * | `GET /_sim/disbursements` | every disbursement: `{ disbursements: [{ token, disburse_id, status, amount, submits, … }] }` |
 * | `POST /_sim/disbursements/{token}/send`, `…/fail` | ends a pending one and sends its callback (a form post is redirected to the console) |
 * | `POST /_sim/disburse/next-submit` | `{ "answer": "server_error" }` (a 502) or `{ "answer": "timeout", "delayMs": 30000 }`: the next submit acts, then its answer is lost |
 * | `GET`, `PUT /_sim/accounts/{masterKey}/balances` | an account's balances per country; `PUT { "SN": 0 }` sets some |
 */
import { Elysia } from "elysia";
import type { SimulatorContext } from "../context.ts";
import type { Disbursement } from "../store.ts";
import { renderConsolePage } from "./console-page.ts";
import { findDisbursement, settleDisbursement } from "./disbursements.ts";
import { softpayPayments } from "../softpay.ts";

const jsonError = (status: number, error: string) => Response.json({ error }, { status });

/** A disbursement as the control surface shows it. */
function disbursementView(disbursement: Disbursement) {
  return {
    token: disbursement.token,
    disburse_id: disbursement.disburseId,
    status: disbursement.status,
    amount: disbursement.amount,
    withdraw_mode: disbursement.withdrawMode,
    account_alias: disbursement.accountAlias,
    country: disbursement.country,
    submits: disbursement.submits,
    awaiting_console: disbursement.awaitingConsole,
    callback_url: disbursement.callbackUrl,
  };
}

const isForm = (request: Request) => (request.headers.get("content-type") ?? "").startsWith("application/x-www-form-urlencoded");

// Relative to `/_sim/disbursements/{token}/{verb}`, so it lands on the console wherever the simulator is mounted.
const consoleRedirect = (query: string) => new Response(null, { status: 303, headers: { location: `../../../console?${query}` } });

function noticeOf(query: URLSearchParams): { kind: "ok" | "error"; text: string } | undefined {
  const token = query.get("token") ?? "";
  if (query.has("done")) return { kind: "ok", text: `Disbursement ${token} is ${query.get("done")}.` };
  if (query.has("failed")) return { kind: "error", text: `Disbursement ${token}: ${query.get("failed")}` };
  // A SoftPay button's (`../softpay-routes.ts`).
  if (query.has("paid")) return { kind: "ok", text: `Payment ${token} is ${query.get("paid")}.` };
  if (query.has("unpaid")) return { kind: "error", text: `Payment ${token}: ${query.get("unpaid")}` };
  return undefined;
}

/** The console and the `/_sim/…` routes of disbursements. */
export function disburseControlRoutes(sim: SimulatorContext) {
  const app = new Elysia()
    .get(
      "/console",
      ({ request }) =>
        new Response(
          renderConsolePage({
            disbursements: [...sim.store.disbursements.values()],
            accounts: [...sim.store.accounts.values()],
            delayMs: sim.disburse.delayMs,
            softpays: softpayPayments(sim),
            notice: noticeOf(new URL(request.url).searchParams),
          }),
          { headers: { "content-type": "text/html; charset=utf-8" } },
        ),
    )
    .get("/_sim/disbursements", () => Response.json({ disbursements: [...sim.store.disbursements.values()].map(disbursementView) }))
    .post("/_sim/disburse/next-submit", ({ body }) => {
      const input = (typeof body === "object" && body !== null ? body : {}) as { answer?: unknown; delayMs?: unknown };
      if (input.answer === "server_error") sim.store.submitFault = { answer: "server_error" };
      else if (input.answer === "timeout")
        sim.store.submitFault = { answer: "timeout", delayMs: typeof input.delayMs === "number" && input.delayMs >= 0 ? input.delayMs : 30_000 };
      else return jsonError(400, 'answer must be "server_error" or "timeout"');
      return Response.json({ nextSubmit: sim.store.submitFault });
    })
    .get("/_sim/accounts/:masterKey/balances", ({ params }) => {
      const account = sim.store.accounts.get(params.masterKey);
      return account ? Response.json({ balances: account.balances }) : jsonError(404, "Account not found");
    })
    .put("/_sim/accounts/:masterKey/balances", ({ params, body }) => {
      const account = sim.store.accounts.get(params.masterKey);
      if (!account) return jsonError(404, "Account not found");
      const entries = Object.entries(typeof body === "object" && body !== null ? body : {});
      if (entries.some(([country, amount]) => !/^[A-Z]{2}$/.test(country) || typeof amount !== "number" || !Number.isInteger(amount)))
        return jsonError(400, 'The body must map countries to whole amounts: { "SN": 5000 }');
      for (const [country, amount] of entries) account.balances[country] = amount as number;
      return Response.json({ balances: account.balances });
    });

  for (const [verb, outcome] of [
    ["send", "success"],
    ["fail", "failed"],
  ] as const) {
    app.post(
      `/_sim/disbursements/:token/${verb}`,
      ({ params, request }) => {
        const disbursement = findDisbursement(sim, params.token);
        const form = isForm(request);
        if (!disbursement)
          return form ? consoleRedirect(`failed=not+found&token=${encodeURIComponent(params.token)}`) : jsonError(404, "Disbursement not found");
        const settled = settleDisbursement(sim, disbursement, outcome);
        const token = encodeURIComponent(disbursement.token);
        if (form) return consoleRedirect(settled.ok ? `done=${outcome}&token=${token}` : `failed=${encodeURIComponent(settled.reason)}&token=${token}`);
        return settled.ok ? Response.json(disbursementView(disbursement)) : jsonError(409, settled.reason);
      },
      { parse: "none" },
    );
  }
  return app;
}
