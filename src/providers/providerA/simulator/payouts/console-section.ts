/**
 * The payouts part of the sandbox console (`GET /console`): payouts waiting (created but not started, or
 * started and not ended) with Send and Fail buttons for those started, and the recently ended ones. Plain
 * forms posting to `_sim/payouts/{id}/send|fail`, relative like the rest of the page.
 */
import { escapeHtml } from "../console-page.ts";
import type { SimPayout } from "./ledger.ts";
import { IN_FLIGHT } from "./ledger.ts";

function actionForm(payout: SimPayout, action: "send" | "fail", label: string): string {
  return (
    `<form method="post" action="_sim/payouts/${payout.id}/${action}">` +
    `<button type="submit" class="${action === "send" ? "approve" : "decline"}" name="action" value="${action}" ` +
    `data-action="${action}" data-payout-id="${payout.id}">${label}</button></form>`
  );
}

function row(payout: SimPayout, withActions: boolean): string {
  const actions = withActions && IN_FLIGHT.includes(payout.status) ? `${actionForm(payout, "send", "Send")}${actionForm(payout, "fail", "Fail")}` : "";
  return `<tr id="payout-${payout.id}" data-payout-id="${payout.id}" data-status="${escapeHtml(payout.status)}">
  <td>${payout.id}</td>
  <td><code>${escapeHtml(payout.merchantReference ?? "")}</code></td>
  <td class="amount">${payout.amount.toLocaleString("en-US")} ${escapeHtml(payout.currencyIso)}</td>
  <td><code>${escapeHtml(payout.mode)}</code></td>
  <td>${escapeHtml(`${payout.phone.number} (${payout.phone.country})`)}</td>
  <td><span class="status ${escapeHtml(payout.status)}">${escapeHtml(payout.status)}</span></td>
  <td>${escapeHtml(payout.lastErrorCode ?? "")}</td>
  <td class="actions">${actions}</td>
</tr>`;
}

function table(id: string, payouts: SimPayout[], withActions: boolean, empty: string): string {
  if (payouts.length === 0) return `<p id="${id}" class="empty">${empty}</p>`;
  return (
    `<table id="${id}"><thead><tr><th>ID</th><th>Merchant reference</th><th>Amount</th><th>Mode</th><th>Phone</th>` +
    `<th>Status</th><th>Error code</th><th></th></tr></thead>
<tbody>${payouts.map((payout) => row(payout, withActions)).join("\n")}</tbody></table>`
  );
}

/** The payouts' HTML on the console: `open` (not ended, oldest first) and `recent` (ended, newest first). */
export function renderPayoutsSection(input: { open: SimPayout[]; recent: SimPayout[]; approveDelayMs: number }): string {
  return `<h2>Payouts</h2>
<p class="hint">Sandbox rules for payouts, once started: below 1000 sent after ${input.approveDelayMs} ms; 1000 to 5000 wait here for Send or Fail; above 5000 failed.</p>
${table("payouts-open", input.open, true, "No payout waiting.")}
<h2>Recently ended payouts</h2>
${table("payouts-recent", input.recent, false, "No payout ended yet.")}`;
}
