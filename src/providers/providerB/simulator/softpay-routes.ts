/**
 * SoftPay's routes in the simulator (`softpay.ts` holds the rules):
 *
 * | Route | Does |
 * |---|---|
 * | `POST /sandbox-api/v1/softpay/{slug}`, `POST /api/v1/softpay/{slug}` | an operator's payment of an invoice (both modes, unlike the real sandbox) |
 * | `POST /sandbox-api/v1/softpay/checkout/make-payment` (and under `/api/v1`) | the sandbox's one SoftPay call |
 * | `GET /softpay/pay/{token}` | the page a URL operator's customer opens (Wave, Orange Money QR): Pay / Fail |
 * | `GET /_sim/softpay` | every SoftPay payment: `{ payments: [{ token, slug, flow, status, amount, awaiting_console, custom_data, … }] }` |
 * | `POST /_sim/softpay/{token}/approve`, `…/fail` | the console's buttons for a payment of 1000 to 5000 (a form post goes back to the console) |
 * | `POST /_sim/softpay/next` | `{ "answer": "refuse" \| "unreachable" \| "timeout_after", "delayMs"? }`: what the next SoftPay call does |
 *
 * The fault of `/_sim/softpay/next` is used once: `refuse` answers `success: false` before anything is
 * pushed; `unreachable` drops the connection before any answer, with nothing done; `timeout_after` does the
 * payment, then answers only after `delayMs` (default 30 s), past the client's timeout.
 */
import { Elysia } from "elysia";
import { authenticateMerchant } from "./authenticate.ts";
import type { SimulatorContext } from "./context.ts";
import { escapeHtml, formatAmount, htmlPage, modeBadge, resultPage } from "./hosted-pages.ts";
import { findInvoice } from "./invoices.ts";
import { makeSandboxPayment, type SoftpayResult, settleFromConsole, softpayPayments, startSoftpay } from "./softpay.ts";
import type { Mode } from "./store.ts";

/** Where each mode's API lives under the simulator. */
const API_PREFIX: Record<Mode, string> = { test: "/sandbox-api/v1", live: "/api/v1" };

/** A connection closed before any answer: the client's fetch fails as if the host were unreachable. */
function droppedConnection(): Response {
  return new Response(
    new ReadableStream({
      pull(controller) {
        controller.error(new Error("simulated unreachable provider (POST /_sim/softpay/next)"));
      },
    }),
  );
}

async function readJsonObject(request: Request): Promise<Record<string, unknown> | null> {
  try {
    const json: unknown = JSON.parse(await request.text());
    return typeof json === "object" && json !== null && !Array.isArray(json) ? (json as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

/** Runs one SoftPay call through the pending fault, if any. */
async function withFault(sim: SimulatorContext, run: () => SoftpayResult): Promise<Response> {
  const fault = sim.store.softpayFault;
  sim.store.softpayFault = null;
  if (fault?.answer === "refuse") return Response.json({ success: false, message: "The operator refused the request (simulated)" });
  if (fault?.answer === "unreachable") return droppedConnection();
  const result = run();
  if (fault?.answer === "timeout_after") await Bun.sleep(fault.delayMs);
  return Response.json(result.body, { status: result.status });
}

/** The API routes of one mode. */
function softpayApiRoutes(sim: SimulatorContext, mode: Mode) {
  const merchantCall =
    (run: (input: { account: Parameters<typeof startSoftpay>[1]["account"]; body: Record<string, unknown>; slug: string }) => SoftpayResult) =>
    async ({ request, params }: { request: Request; params?: Record<string, string> }) => {
      const { account, refused } = authenticateMerchant(sim.store, request.headers);
      if (refused) return refused;
      const body = await readJsonObject(request);
      if (!body) return Response.json({ success: false, message: "The body must be a JSON object." }, { status: 422 });
      return withFault(sim, () => run({ account, body, slug: params?.slug ?? "" }));
    };
  return new Elysia({ prefix: API_PREFIX[mode] })
    .post(
      "/softpay/checkout/make-payment",
      merchantCall(({ account, body }) => makeSandboxPayment(sim, { account, mode, body })),
      { parse: "none" },
    )
    .post(
      "/softpay/:slug",
      merchantCall(({ account, body, slug }) => startSoftpay(sim, { account, mode, slug, body })),
      { parse: "none" },
    );
}

/** The page a URL operator's customer pays on: Pay and Fail post to the invoice's buttons. */
function softpayPage(sim: SimulatorContext, token: string): Response {
  const invoice = findInvoice(sim, token);
  const payment = sim.store.softpays.get(token);
  if (!invoice || !payment) return resultPage("Payment not found", "No mobile-money payment has this token.", undefined, 404);
  const header = `${modeBadge(invoice.mode)}<h1>${escapeHtml(invoice.storeName || "Payment")}</h1>
<p class="amount">${formatAmount(invoice.totalAmount)} FCFA</p><p class="description">${escapeHtml(invoice.description)}</p>
<p>${escapeHtml(payment.slug)} · ${escapeHtml(payment.phone)}</p>`;
  if (invoice.status === "completed") return htmlPage("Paid", `${header}<p class="status">Paid.</p>`);
  const action = (verb: string) => `../../_sim/invoices/${encodeURIComponent(token)}/${verb}`;
  const form = `<form method="post" action="${action("pay")}">
<input type="hidden" name="payment_method" value="${escapeHtml(payment.slug)}">
<div class="buttons">
<button type="submit" class="pay" formaction="${action("pay")}">Pay</button>
<button type="submit" class="fail" formaction="${action("fail")}">Fail</button>
</div></form>`;
  const earlier = invoice.status === "pending" ? "" : `<p class="status">This payment is ${escapeHtml(invoice.status)}; it can still be paid.</p>`;
  return htmlPage(`Pay ${invoice.storeName}`, `${header}${earlier}${form}`);
}

const jsonError = (status: number, error: string) => Response.json({ error }, { status });
const isForm = (request: Request) => (request.headers.get("content-type") ?? "").startsWith("application/x-www-form-urlencoded");
// Relative to `/_sim/softpay/{token}/{verb}`: the console wherever the simulator is mounted.
const consoleRedirect = (query: string) => new Response(null, { status: 303, headers: { location: `../../../console?${query}` } });

/** Every SoftPay route: both modes' API, the payment page and the control surface. */
export function softpayRoutes(sim: SimulatorContext) {
  const app = new Elysia()
    .use(softpayApiRoutes(sim, "test"))
    .use(softpayApiRoutes(sim, "live"))
    .get("/softpay/pay/:token", ({ params }) => softpayPage(sim, params.token ?? ""))
    .get("/_sim/softpay", () =>
      Response.json({
        payments: softpayPayments(sim).map(({ payment, invoice }) => ({
          token: payment.token,
          slug: payment.slug,
          flow: payment.flow,
          phone: payment.phone,
          amount: invoice.totalAmount,
          mode: invoice.mode,
          status: invoice.status,
          awaiting_console: payment.awaitingConsole && invoice.status === "pending",
          custom_data: invoice.customData,
        })),
      }),
    )
    .post(
      "/_sim/softpay/next",
      async ({ request }) => {
        const input = (await readJsonObject(request)) ?? {};
        if (input.answer === "refuse" || input.answer === "unreachable") sim.store.softpayFault = { answer: input.answer };
        else if (input.answer === "timeout_after")
          sim.store.softpayFault = { answer: "timeout_after", delayMs: typeof input.delayMs === "number" && input.delayMs >= 0 ? input.delayMs : 30_000 };
        else return jsonError(400, 'answer must be "refuse", "unreachable" or "timeout_after"');
        return Response.json({ next: sim.store.softpayFault });
      },
      { parse: "none" },
    );
  for (const [verb, outcome] of [
    ["approve", "completed"],
    ["fail", "failed"],
  ] as const) {
    app.post(
      `/_sim/softpay/:token/${verb}`,
      ({ request, params }) => {
        const token = params.token ?? "";
        const settled = settleFromConsole(sim, token, outcome);
        if (isForm(request)) {
          if (!settled) return consoleRedirect(`unpaid=${encodeURIComponent("no such payment")}&token=${encodeURIComponent(token)}`);
          if (!settled.ok) return consoleRedirect(`unpaid=${encodeURIComponent(settled.reason)}&token=${encodeURIComponent(token)}`);
          return consoleRedirect(`paid=${outcome}&token=${encodeURIComponent(token)}`);
        }
        if (!settled) return jsonError(404, "Payment not found");
        if (!settled.ok) return jsonError(409, settled.reason);
        return Response.json({ token, status: findInvoice(sim, token)?.status });
      },
      { parse: "none" },
    );
  }
  return app;
}
