/**
 * The simulator's own control surface (providers.md, "The simulators' own control surface"): test
 * accounts, the hosted pages' buttons, the permit switches, and the IPN log. No authentication: a
 * development tool.
 *
 * A button route answers a form post (what the hosted pages send) or a call accepting `text/html` the way
 * a browser expects — 303 to the merchant's return / cancel URL with `?token=…` appended, or a result page
 * when there is none — and any other call (JSON or empty body) with JSON: `{ token, status, … }`, or
 * 404 / 409 `{ error }`.
 */
import { Elysia } from "elysia";
import type { SimulatorContext } from "./context.ts";
import { resultPage } from "./hosted-pages.ts";
import { findInvoice, invoicePageUrl, settleInvoice, type InvoiceOutcome, type SettleDetails } from "./invoices.ts";
import { findPermit, permitPageUrl, transitionPermit, type PermitTransition } from "./permits.ts";
import { createMerchantAccount, type ChargeSwitch } from "./store.ts";

type Fields = Record<string, unknown>;

/** The button's input, and whether it came from a page (a form post, or a browser asking for HTML). */
async function readButtonInput(request: Request): Promise<{ fromPage: boolean; fields: Fields } | undefined> {
  const type = request.headers.get("content-type") ?? "";
  if (type.startsWith("application/x-www-form-urlencoded") || type.startsWith("multipart/form-data")) {
    const form = await request.formData();
    const fields: Fields = {};
    for (const [name, value] of form) if (typeof value === "string") fields[name] = value;
    return { fromPage: true, fields };
  }
  const text = await request.text();
  if (text.trim() === "") return { fromPage: (request.headers.get("accept") ?? "").includes("text/html"), fields: {} };
  try {
    const json: unknown = JSON.parse(text);
    return typeof json === "object" && json !== null && !Array.isArray(json) ? { fromPage: false, fields: json as Fields } : undefined;
  } catch {
    return undefined;
  }
}

const text = (value: unknown): string | null => (typeof value === "string" && value.trim() !== "" ? value.trim() : null);

/** Form fields `customer_name`…, or JSON `{ customer: { name, phone, email }, payment_method, fail_reason }`. */
function settleDetailsOf(fields: Fields): SettleDetails {
  const customer = (typeof fields.customer === "object" && fields.customer !== null ? fields.customer : {}) as Fields;
  return {
    paymentMethod: text(fields.payment_method),
    failReason: text(fields.fail_reason),
    customer: {
      name: text(customer.name) ?? text(fields.customer_name),
      phone: text(customer.phone) ?? text(fields.customer_phone),
      email: text(customer.email) ?? text(fields.customer_email),
    },
  };
}

const jsonError = (status: number, error: string) => Response.json({ error }, { status });

function withToken(url: string, token: string): string {
  const target = new URL(url);
  target.searchParams.set("token", token);
  return target.toString();
}

const redirect = (location: string) => new Response(null, { status: 303, headers: { location } });

const INVOICE_BUTTONS: Record<string, InvoiceOutcome> = { pay: "completed", fail: "failed", cancel: "cancelled" };
const PERMIT_BUTTONS: Record<string, PermitTransition> = { authorize: "authorize", decline: "decline", revoke: "revoke", expire: "expire" };
const PERMIT_SWITCHES: Record<string, ChargeSwitch> = { "fail-next": "fail", "succeed-next": "by-amount", "pending-next": "pending" };

/** The `/_sim/…` routes. */
export function controlRoutes(sim: SimulatorContext) {
  const app = new Elysia({ prefix: "/_sim" })
    .post("/accounts", () => {
      const { masterKey, privateKey, publicKey, token } = createMerchantAccount(sim.store);
      return Response.json({ masterKey, privateKey, publicKey, token }, { status: 201 });
    })
    .get("/ipns", () => Response.json({ deliveries: sim.ipn.deliveries() }))
    // A provider notifying twice: the same body posted again to the same URL, as a new delivery.
    .post("/ipns/:id/resend", ({ params }) => {
      const delivery = sim.ipn.resend(Number(params.id));
      return delivery ? Response.json(delivery) : jsonError(404, "No kept IPN delivery has this id");
    })
    // Every invoice (checkouts, SoftPay payments, permit charges): the simulator's own books.
    .get("/invoices", () =>
      Response.json({
        invoices: [...sim.store.invoices.values()].map((invoice) => ({
          token: invoice.token,
          mode: invoice.mode,
          amount: invoice.totalAmount,
          status: invoice.status,
          permit_token: invoice.permitToken,
          custom_data: invoice.customData,
        })),
      }),
    );

  for (const [verb, outcome] of Object.entries(INVOICE_BUTTONS)) {
    app.post(
      `/invoices/:token/${verb}`,
      async ({ request, params }) => {
        const input = await readButtonInput(request);
        if (!input) return jsonError(400, "The body must be a JSON object, a form, or empty.");
        const invoice = findInvoice(sim, params.token ?? "");
        if (!invoice)
          return input.fromPage ? resultPage("Invoice not found", "No invoice has this token.", undefined, 404) : jsonError(404, "Invoice not found");
        const settled = settleInvoice(sim, invoice, outcome, settleDetailsOf(input.fields));
        if (!input.fromPage) {
          if (!settled.ok) return jsonError(409, settled.reason);
          return Response.json({ token: invoice.token, status: invoice.status, fail_reason: invoice.failReason });
        }
        if (!settled.ok) return resultPage("Already paid", settled.reason, undefined, 409);
        const { return_url: returnUrl, cancel_url: cancelUrl } = invoice.actions;
        if (outcome === "completed" && returnUrl) return redirect(withToken(returnUrl, invoice.token));
        if (outcome === "cancelled" && cancelUrl) return redirect(withToken(cancelUrl, invoice.token));
        if (outcome === "failed")
          return resultPage("Payment failed", `The payment did not go through (${invoice.failReason}).`, { href: invoicePageUrl(invoice), text: "Try again" });
        return resultPage(outcome === "completed" ? "Payment completed" : "Payment cancelled", `Invoice ${invoice.token} is ${invoice.status}.`);
      },
      { parse: "none" },
    );
  }

  for (const [verb, transition] of Object.entries(PERMIT_BUTTONS)) {
    app.post(
      `/permits/:token/${verb}`,
      async ({ request, params }) => {
        const input = await readButtonInput(request);
        if (!input) return jsonError(400, "The body must be a JSON object, a form, or empty.");
        const permit = findPermit(sim, params.token ?? "");
        if (!permit) return input.fromPage ? resultPage("Permit not found", "No permit has this token.", undefined, 404) : jsonError(404, "Permit not found");
        const moved = transitionPermit(sim, permit, transition, { paymentMethod: text(input.fields.payment_method) });
        if (!input.fromPage) return moved.ok ? Response.json({ token: permit.token, status: permit.status }) : jsonError(409, moved.reason);
        if (!moved.ok) return resultPage("Not possible", moved.reason, { href: permitPageUrl(permit), text: "Back" }, 409);
        const { return_url: returnUrl, cancel_url: cancelUrl } = permit.actions;
        if (permit.status === "active" && returnUrl) return redirect(withToken(returnUrl, permit.token));
        if (permit.status === "declined" && cancelUrl) return redirect(withToken(cancelUrl, permit.token));
        return resultPage(`Permit ${permit.status}`, `Permit ${permit.token} is ${permit.status}.`);
      },
      { parse: "none" },
    );
  }

  for (const [verb, chargeSwitch] of Object.entries(PERMIT_SWITCHES)) {
    app.post(`/permits/:token/${verb}`, ({ params }) => {
      const permit = findPermit(sim, params.token ?? "");
      if (!permit) return jsonError(404, "Permit not found");
      permit.chargeSwitch = chargeSwitch;
      return Response.json({ token: permit.token, charges: chargeSwitch });
    });
  }
  return app;
}
