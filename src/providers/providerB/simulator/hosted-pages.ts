/**
 * The provider's hosted pages, server-rendered and offline (no script, no external asset): the checkout
 * page with Pay / Fail / Cancel, the receipt, the PERMIT authorisation page with Authorise / Decline, and
 * the result page the buttons fall back to when the merchant gave no URL to return to.
 *
 * The buttons are plain form posts to `/_sim/…` with relative actions, so the pages work under any mount
 * prefix and behind any host name.
 */
import { Elysia } from "elysia";
import type { SimulatorContext } from "./context.ts";
import { findInvoice, providerDate, SANDBOX_PAYMENT_METHODS } from "./invoices.ts";
import { findPermit } from "./permits.ts";
import type { Invoice, Mode, Permit } from "./store.ts";

/** Escapes text for HTML content and attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? "").replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

/** `5000` → `"5 000"`, the way amounts in FCFA are written. */
export function formatAmount(amount: number): string {
  return String(amount).replace(/\B(?=(\d{3})+(?!\d))/g, " ");
}

const STYLE = `
  body { font-family: system-ui, sans-serif; background: #f3f5f8; margin: 0; padding: 2rem 1rem; color: #1d2733; }
  main { max-width: 28rem; margin: auto; background: #fff; border-radius: 12px; padding: 1.5rem; box-shadow: 0 2px 12px #0002; }
  .mode { display: inline-block; font-size: .75rem; font-weight: 600; padding: .2rem .6rem; border-radius: 99px; background: #ffe9b3; }
  .mode.live { background: #cdeccf; }
  .amount { font-size: 2rem; font-weight: 700; margin: .5rem 0; }
  label { display: block; margin: .5rem 0; font-size: .9rem; }
  input, select { width: 100%; box-sizing: border-box; padding: .4rem; }
  .buttons { display: flex; gap: .5rem; margin-top: 1rem; }
  button { flex: 1; padding: .7rem; border: 0; border-radius: 8px; font-size: 1rem; cursor: pointer; color: #fff; }
  .pay, .authorize { background: #1f8a4c; } .fail { background: #b3261e; } .cancel, .decline { background: #5c6773; }
  table { width: 100%; border-collapse: collapse; font-size: .9rem; } td { padding: .2rem 0; } td.num { text-align: right; }
`;

export function htmlPage(title: string, body: string, status = 200): Response {
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>${body}</main></body></html>`;
  return new Response(html, { status, headers: { "content-type": "text/html; charset=utf-8" } });
}

export const modeBadge = (mode: Mode) => (mode === "test" ? `<span class="mode">Sandbox</span>` : `<span class="mode live">Live (simulated)</span>`);

/** A short page saying what happened, with an optional link onwards. */
export function resultPage(title: string, message: string, link?: { href: string; text: string }, status = 200): Response {
  const onwards = link ? `<p><a href="${escapeHtml(link.href)}">${escapeHtml(link.text)}</a></p>` : "";
  return htmlPage(title, `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>${onwards}`, status);
}

function itemRows(invoice: Invoice): string {
  return Object.values(invoice.items)
    .map((item) => {
      const line = item as { name?: unknown; quantity?: unknown; total_price?: unknown };
      const total = Number(line.total_price);
      const amount = Number.isFinite(total) ? formatAmount(total) : "";
      return `<tr><td>${escapeHtml(line.name)} × ${escapeHtml(line.quantity ?? 1)}</td><td class="num">${amount}</td></tr>`;
    })
    .join("");
}

function checkoutPage(invoice: Invoice): Response {
  const header = `${modeBadge(invoice.mode)}<h1>${escapeHtml(invoice.storeName || "Payment")}</h1>
<p class="amount">${formatAmount(invoice.totalAmount)} FCFA</p><p class="description">${escapeHtml(invoice.description)}</p>
${Object.keys(invoice.items).length > 0 ? `<table>${itemRows(invoice)}</table>` : ""}`;
  if (invoice.status === "completed") {
    const receipt = `../receipt/${encodeURIComponent(invoice.token)}`;
    return htmlPage("Invoice paid", `${header}<p class="status">Paid with ${escapeHtml(invoice.paymentMethod)}.</p><p><a href="${receipt}">Receipt</a></p>`);
  }
  const action = (verb: string) => `../../_sim/invoices/${encodeURIComponent(invoice.token)}/${verb}`;
  const methods = SANDBOX_PAYMENT_METHODS.map((method) => `<option value="${method}">${method}</option>`).join("");
  const earlier = invoice.status === "pending" ? "" : `<p class="status">This invoice is ${escapeHtml(invoice.status)}; it can still be paid.</p>`;
  const form = `<form method="post" action="${action("pay")}">
<label>Name <input name="customer_name" value="${escapeHtml(invoice.customer.name)}"></label>
<label>Phone <input name="customer_phone" value="${escapeHtml(invoice.customer.phone)}"></label>
<label>Email <input name="customer_email" value="${escapeHtml(invoice.customer.email)}"></label>
<label>Payment method <select name="payment_method">${methods}</select></label>
<div class="buttons">
<button type="submit" class="pay" formaction="${action("pay")}">Pay</button>
<button type="submit" class="fail" formaction="${action("fail")}">Fail</button>
<button type="submit" class="cancel" formaction="${action("cancel")}">Cancel</button>
</div></form>`;
  return htmlPage(`Pay ${invoice.storeName}`, `${header}${earlier}${form}`);
}

function receiptPage(invoice: Invoice): Response {
  const rows: [string, string][] = [
    ["Store", invoice.storeName],
    ["Amount", `${formatAmount(invoice.totalAmount)} FCFA`],
    ["Description", invoice.description],
    ["Paid by", invoice.customer.name ?? ""],
    ["Payment method", invoice.paymentMethod ?? ""],
    ["Receipt", invoice.receiptIdentifier ?? ""],
    ["Reference", invoice.providerReference ?? ""],
    ["Invoice", invoice.token],
  ];
  const table = rows.map(([name, value]) => `<tr><td>${name}</td><td class="num">${escapeHtml(value)}</td></tr>`).join("");
  return htmlPage("Receipt", `${modeBadge(invoice.mode)}<h1>Receipt</h1><table>${table}</table>`);
}

function permitPage(permit: Permit): Response {
  const limit = permit.maxAmount === null ? "no limit set" : `up to ${formatAmount(permit.maxAmount)} FCFA per charge`;
  const header =
    `${modeBadge(permit.mode)}<h1>Authorise recurring payments</h1>
<p class="description">${escapeHtml(permit.description)}</p>` +
    `<p>${escapeHtml(permit.customer.name)} · ${escapeHtml(permit.customer.phone)} · ${escapeHtml(limit)}</p>
<p class="status">Created ${providerDate(permit.createdAt)} UTC · ${escapeHtml(permit.status)}</p>`;
  if (permit.status !== "pending") return htmlPage("Permit", `${header}<p>This permit is ${escapeHtml(permit.status)}.</p>`);
  const action = (verb: string) => `../../_sim/permits/${encodeURIComponent(permit.token)}/${verb}`;
  const methods = SANDBOX_PAYMENT_METHODS.map((method) => `<option value="${method}">${method}</option>`).join("");
  const form = `<form method="post" action="${action("authorize")}">
<label>Payment method <select name="payment_method">${methods}</select></label>
<div class="buttons">
<button type="submit" class="authorize" formaction="${action("authorize")}">Authorise</button>
<button type="submit" class="decline" formaction="${action("decline")}">Decline</button>
</div></form>`;
  return htmlPage("Authorise recurring payments", `${header}${form}`);
}

/** The GET routes of the hosted pages. */
export function hostedPageRoutes(sim: SimulatorContext) {
  const app = new Elysia();
  for (const mode of ["test", "live"] as const) {
    const base = mode === "test" ? "/sandbox-checkout" : "/checkout";
    const invoiceIn = (token: string | undefined) => {
      const invoice = findInvoice(sim, token ?? "");
      return invoice?.mode === mode ? invoice : undefined;
    };
    app
      .get(`${base}/invoice/:token`, ({ params }) => {
        const invoice = invoiceIn(params.token);
        return invoice ? checkoutPage(invoice) : resultPage("Invoice not found", "No invoice has this token.", undefined, 404);
      })
      .get(`${base}/receipt/:token`, ({ params }) => {
        const invoice = invoiceIn(params.token);
        if (invoice?.status !== "completed") return resultPage("Receipt not found", "No paid invoice has this token.", undefined, 404);
        return receiptPage(invoice);
      });
  }
  return app.get("/permit/authorize/:token", ({ params }) => {
    const permit = findPermit(sim, params.token ?? "");
    return permit ? permitPage(permit) : resultPage("Permit not found", "No permit has this token.", undefined, 404);
  });
}
