/**
 * The sandbox console (`GET /console`): the page where a developer pushes pending payments (and payouts) along, as on
 * the provider's dashboard. Server-rendered, no script and no external asset, so it works offline. Its
 * buttons are plain forms posting to `_sim/transactions/{id}/approve|decline`; the links are relative so
 * the page works both standalone (`/console`) and under the gateway's mount (`/sandbox/providerA/console`).
 * A payment's mode is shown as the merchant's `payment_method` (`mnoA_open`, …), the name the developer sent.
 */
import { METHOD_WIRE } from "../map.ts";
import type { SimTransaction } from "./ledger.ts";

/**
 * Wire mode → the spec's `payment_method`, read from the gateway's own mapping (a table of constants: the
 * import is one-way, the gateway never loads simulator code) so the two can never disagree.
 */
const PAYMENT_METHOD_OF_MODE: ReadonlyMap<string, string> = new Map(Object.entries(METHOD_WIRE).map(([method, { mode }]) => [mode, method]));

/** Text made safe inside HTML text and attribute values. */
export function escapeHtml(value: unknown): string {
  return String(value ?? "")
    .replaceAll("&", "&amp;")
    .replaceAll("<", "&lt;")
    .replaceAll(">", "&gt;")
    .replaceAll('"', "&quot;")
    .replaceAll("'", "&#39;");
}

function phoneOf(trx: SimTransaction): string {
  const phone = trx.push?.phone ?? trx.customer?.phone;
  return phone ? `${phone.number} (${phone.country})` : "—";
}

/** The merchant's `payment_method` of a payment; a mode the gateway never sends (a direct API call) as it is. */
function paymentMethodOf(trx: SimTransaction): string {
  if (!trx.mode) return "—";
  return PAYMENT_METHOD_OF_MODE.get(trx.mode) ?? trx.mode;
}

function actionForm(trx: SimTransaction, action: "approve" | "decline", label: string): string {
  return (
    `<form method="post" action="_sim/transactions/${trx.id}/${action}">` +
    `<button type="submit" class="${action}" name="action" value="${action}" data-action="${action}" data-transaction-id="${trx.id}">${label}</button>` +
    `</form>`
  );
}

function pendingRow(trx: SimTransaction): string {
  return `<tr id="trx-${trx.id}" data-transaction-id="${trx.id}">
  <td>${trx.id}</td>
  <td><code>${escapeHtml(trx.reference)}</code></td>
  <td class="amount">${trx.amount.toLocaleString("en-US")} ${escapeHtml(trx.currencyIso)}</td>
  <td class="payment-method"><code>${escapeHtml(paymentMethodOf(trx))}</code></td>
  <td>${escapeHtml(phoneOf(trx))}</td>
  <td>${escapeHtml(trx.description)}</td>
  <td>${trx.push ? "sent" : "not sent"}</td>
  <td class="actions">${actionForm(trx, "approve", "Approve")}${actionForm(trx, "decline", "Decline")}</td>
</tr>`;
}

function settledRow(trx: SimTransaction): string {
  return `<tr id="trx-${trx.id}" data-transaction-id="${trx.id}" data-status="${escapeHtml(trx.status)}">
  <td>${trx.id}</td>
  <td class="amount">${trx.amount.toLocaleString("en-US")} ${escapeHtml(trx.currencyIso)}</td>
  <td class="payment-method"><code>${escapeHtml(paymentMethodOf(trx))}</code></td>
  <td><span class="status ${escapeHtml(trx.status)}">${escapeHtml(trx.status)}</span></td>
  <td>${escapeHtml(trx.lastErrorCode ?? "")}</td>
  <td>${escapeHtml(trx.updatedAt.toISOString())}</td>
</tr>`;
}

export interface ConsolePageInput {
  pending: SimTransaction[];
  recent: SimTransaction[];
  /** A line about the last action, from the redirect that followed it. */
  notice?: { kind: "ok" | "error"; text: string };
  approveDelayMs: number;
  /** The payouts' part of the page (`payouts/console-section.ts`), already rendered. */
  payoutsSection?: string;
}

/** The console's HTML. */
export function renderConsolePage(input: ConsolePageInput): string {
  const rules =
    `Sandbox rules by amount: below 1000 approved automatically after ${input.approveDelayMs} ms; ` +
    "1000 to 5000 wait here for Approve or Decline; above 5000 declined.";
  const notice = input.notice ? `<p class="notice ${input.notice.kind}" role="status">${escapeHtml(input.notice.text)}</p>` : "";
  const pending = input.pending.length
    ? `<table id="pending"><thead><tr><th>ID</th><th>Reference</th><th>Amount</th><th>Payment method</th>` +
      `<th>Phone</th><th>Description</th><th>USSD push</th><th></th></tr></thead>
<tbody>${input.pending.map(pendingRow).join("\n")}</tbody></table>`
    : `<p id="pending" class="empty">No pending payment.</p>`;
  const recent = input.recent.length
    ? `<table id="recent"><thead><tr><th>ID</th><th>Amount</th><th>Payment method</th><th>Status</th><th>Error code</th><th>Updated</th></tr></thead>
<tbody>${input.recent.map(settledRow).join("\n")}</tbody></table>`
    : `<p id="recent" class="empty">Nothing settled yet.</p>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Provider A sandbox console</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; margin: 2rem; color: #1d2430; }
  h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #d9dee7; vertical-align: middle; }
  td.amount { white-space: nowrap; font-variant-numeric: tabular-nums; }
  td.actions { white-space: nowrap; } td.actions form { display: inline; margin-right: .3rem; }
  button { font: inherit; padding: .25rem .8rem; border-radius: 4px; border: 1px solid #8893a5; cursor: pointer; }
  button.approve { background: #e3f6e8; border-color: #3a9b57; } button.decline { background: #fbe7e7; border-color: #c24545; }
  .notice { padding: .5rem .8rem; border-radius: 4px; } .notice.ok { background: #e3f6e8; } .notice.error { background: #fbe7e7; }
  .status.approved { color: #23763f; } .status.declined, .status.canceled { color: #a33131; }
  .hint { color: #5b6578; }
</style>
</head>
<body>
<h1>Provider A sandbox console</h1>
<p class="hint">${rules} <a href="console">Refresh</a></p>
${notice}
<h2>Pending payments</h2>
${pending}
<h2>Recently settled</h2>
${recent}
${input.payoutsSection ?? ""}
</body>
</html>
`;
}
