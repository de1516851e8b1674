/**
 * The sandbox console (`GET /console`): the direct mobile-money payments (SoftPay) waiting for a developer
 * with Approve and Fail buttons and the recent ones, the disbursements waiting for a developer (the sandbox rule of 1000 to
 * 5000) with Send and Fail buttons, the recent ones, and each account's balance per country. Server-rendered,
 * no script and no external asset; the buttons are plain forms posting to `_sim/disbursements/{token}/send|fail`
 * with relative links, so the page works standalone (`/console`) and under the gateway's mount
 * (`/sandbox/providerB/console`).
 */
import { escapeHtml, formatAmount } from "../hosted-pages.ts";
import type { Disbursement, Invoice, MerchantAccount, SoftpayPayment } from "../store.ts";
import { SANDBOX_CONSOLE_UP_TO, SANDBOX_SENT_BELOW } from "./disbursements.ts";

export interface ConsolePageInput {
  disbursements: readonly Disbursement[];
  accounts: readonly MerchantAccount[];
  delayMs: number;
  /** SoftPay payments with their invoices, oldest first. */
  softpays?: readonly { payment: SoftpayPayment; invoice: Invoice }[];
  /** A line about the last action, from the redirect that followed it. */
  notice?: { kind: "ok" | "error"; text: string };
}

/** An account named without its secret: the first characters of its master key. */
const accountName = (account: MerchantAccount) => `${account.masterKey.slice(0, 8)}…`;

function button(disbursement: Disbursement, verb: "send" | "fail", label: string): string {
  const token = encodeURIComponent(disbursement.token);
  return `<form method="post" action="_sim/disbursements/${token}/${verb}"><button type="submit" class="${verb}" data-token="${escapeHtml(disbursement.token)}">${label}</button></form>`;
}

function row(disbursement: Disbursement, actions: boolean): string {
  const cells = [
    `<code>${escapeHtml(disbursement.token)}</code>`,
    `<code>${escapeHtml(disbursement.disburseId ?? "")}</code>`,
    `${formatAmount(disbursement.amount)} XOF`,
    `<code>${escapeHtml(disbursement.withdrawMode)}</code>`,
    escapeHtml(disbursement.accountAlias),
    `<span class="status ${escapeHtml(disbursement.status)}">${escapeHtml(disbursement.status)}</span>`,
    escapeHtml(accountName(disbursement.account)),
  ];
  if (actions) cells.push(`${button(disbursement, "send", "Send")}${button(disbursement, "fail", "Fail")}`);
  return `<tr data-token="${escapeHtml(disbursement.token)}">${cells.map((cell) => `<td>${cell}</td>`).join("")}</tr>`;
}

function table(id: string, rows: readonly Disbursement[], actions: boolean, empty: string): string {
  if (rows.length === 0) return `<p id="${id}" class="empty">${empty}</p>`;
  const head = ["Token", "disburse_id", "Amount", "Withdraw mode", "To", "Status", "Account", ...(actions ? [""] : [])];
  return `<table id="${id}"><thead><tr>${head.map((name) => `<th>${name}</th>`).join("")}</tr></thead>
<tbody>${rows.map((disbursement) => row(disbursement, actions)).join("\n")}</tbody></table>`;
}

function softpayButton(token: string, verb: "approve" | "fail", label: string): string {
  const cls = verb === "approve" ? "send" : "fail";
  return `<form method="post" action="_sim/softpay/${encodeURIComponent(token)}/${verb}"><button type="submit" class="${cls}" data-token="${escapeHtml(token)}">${label}</button></form>`;
}

function softpayTable(id: string, rows: ConsolePageInput["softpays"] & {}, actions: boolean, empty: string): string {
  if (rows.length === 0) return `<p id="${id}" class="empty">${empty}</p>`;
  const head = ["Invoice", "Amount", "Operator", "Phone", "Status", "Account", ...(actions ? [""] : [])];
  const body = rows
    .map(({ payment, invoice }) => {
      const cells = [
        `<code>${escapeHtml(invoice.token)}</code>`,
        `${formatAmount(invoice.totalAmount)} XOF`,
        `<code>${escapeHtml(payment.slug)}</code>`,
        escapeHtml(payment.phone),
        `<span class="status ${escapeHtml(invoice.status)}">${escapeHtml(invoice.status)}</span>`,
        escapeHtml(accountName(invoice.account)),
      ];
      if (actions) cells.push(`${softpayButton(invoice.token, "approve", "Approve")}${softpayButton(invoice.token, "fail", "Fail")}`);
      return `<tr data-token="${escapeHtml(invoice.token)}">${cells.map((cell) => `<td>${cell}</td>`).join("")}</tr>`;
    })
    .join("\n");
  return `<table id="${id}"><thead><tr>${head.map((name) => `<th>${name}</th>`).join("")}</tr></thead>\n<tbody>${body}</tbody></table>`;
}

function balances(accounts: readonly MerchantAccount[]): string {
  if (accounts.length === 0) return `<p id="balances" class="empty">No account yet.</p>`;
  const countries = [...new Set(accounts.flatMap((account) => Object.keys(account.balances)))];
  const head = `<tr><th>Account</th>${countries.map((country) => `<th>${country}</th>`).join("")}</tr>`;
  const body = accounts
    .map(
      (account) =>
        `<tr><td>${escapeHtml(accountName(account))}</td>${countries.map((c) => `<td>${formatAmount(account.balances[c] ?? 0)}</td>`).join("")}</tr>`,
    )
    .join("\n");
  return `<table id="balances"><thead>${head}</thead><tbody>${body}</tbody></table>`;
}

/** The console's HTML. */
export function renderConsolePage(input: ConsolePageInput): string {
  const rules =
    `Sandbox rules for payouts (disbursements), by amount in XOF: below ${SANDBOX_SENT_BELOW} sent after ${input.delayMs} ms; ` +
    `${SANDBOX_SENT_BELOW} to ${SANDBOX_CONSOLE_UP_TO} wait here for Send or Fail; above ${SANDBOX_CONSOLE_UP_TO} failed after ${input.delayMs} ms. ` +
    "Each account opens with a float in every country; a completed payment credits its channel's country, a submitted " +
    "disbursement takes its amount from its country (given back if it fails).";
  const notice = input.notice ? `<p class="notice ${input.notice.kind}" role="status">${escapeHtml(input.notice.text)}</p>` : "";
  const softpays = input.softpays ?? [];
  const payRules =
    `Sandbox rules for mobile-money payments (SoftPay), by amount in XOF: below ${SANDBOX_SENT_BELOW} completed after ${input.delayMs} ms; ` +
    `${SANDBOX_SENT_BELOW} to ${SANDBOX_CONSOLE_UP_TO} wait here for Approve or Fail; above ${SANDBOX_CONSOLE_UP_TO} failed after ${input.delayMs} ms. ` +
    "Code operators (Orange Money CI, Burkina, Senegal's code variant) accept the code 123456 only; Wave and Orange Money Senegal's QR are paid on their page.";
  const payWaiting = softpays.filter(({ payment, invoice }) => payment.awaitingConsole && invoice.status === "pending");
  const payRecent = [...softpays].reverse().slice(0, 50);
  const waiting = input.disbursements.filter((disbursement) => disbursement.awaitingConsole);
  const recent = [...input.disbursements].reverse().slice(0, 50);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Provider B sandbox console</title>
<style>
  body { font: 15px/1.4 system-ui, sans-serif; margin: 2rem; color: #1d2430; }
  h1 { font-size: 1.4rem; } h2 { font-size: 1.1rem; margin-top: 2rem; }
  table { border-collapse: collapse; width: 100%; }
  th, td { text-align: left; padding: .4rem .6rem; border-bottom: 1px solid #d9dee7; vertical-align: middle; }
  td form { display: inline; margin-right: .3rem; }
  button { font: inherit; padding: .25rem .8rem; border-radius: 4px; border: 1px solid #8893a5; cursor: pointer; }
  button.send { background: #e3f6e8; border-color: #3a9b57; } button.fail { background: #fbe7e7; border-color: #c24545; }
  .notice { padding: .5rem .8rem; border-radius: 4px; } .notice.ok { background: #e3f6e8; } .notice.error { background: #fbe7e7; }
  .status.success { color: #23763f; } .status.failed { color: #a33131; }
  .hint { color: #5b6578; }
</style>
</head>
<body>
<h1>Provider B sandbox console</h1>
<p class="hint">${escapeHtml(rules)} <a href="console">Refresh</a></p>
${notice}
<h2>Payments waiting for you</h2>
<p class="hint">${escapeHtml(payRules)}</p>
${softpayTable("payments-waiting", payWaiting, true, "No payment is waiting.")}
<h2>Recent payments</h2>
${softpayTable("payments-recent", payRecent, false, "No mobile-money payment yet.")}
<h2>Payouts waiting for you</h2>
${table("waiting", waiting, true, "No payout is waiting.")}
<h2>Recent payouts</h2>
${table("recent", recent, false, "No payout yet.")}
<h2>Balances (XOF)</h2>
${balances(input.accounts)}
</body>
</html>
`;
}
