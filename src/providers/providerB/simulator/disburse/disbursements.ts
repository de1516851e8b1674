/**
 * Disbursements (disburse v2, providers-money-out.md): get-invoice records one after probing its callback
 * URL with an empty POST, submit-invoice sends it (once per `disburse_id`), check-status reads it, and the
 * callback goes out, flat and form-encoded with the account's `hash`, when it ends. No HTTP routes here.
 *
 * Sandbox rules by amount, applied at submit (the simulator is a sandbox whatever the keys): below 1000 it is
 * sent after `delayMs`; 1000 to 5000 wait on the console for Send or Fail; above 5000 it fails after `delayMs`.
 */
import type { SimulatorContext } from "../context.ts";
import { providerDate } from "../invoices.ts";
import { type Disbursement, type MerchantAccount, randomToken } from "../store.ts";
import { RESPONSE_CODES } from "../wire.ts";
import { balanceText, moveBalance, WITHDRAW_MODE_COUNTRIES } from "./balances.ts";

export type { DisburseDesk } from "../context.ts";

/** The disburse API's own refusal codes (HTTP 200, `response_code` ≠ "00"). */
export const DISBURSE_CODES = { noFunds: "4002", duplicateId: "5000" } as const;

/** Sandbox rule: below this amount a disbursement is sent by itself. */
export const SANDBOX_SENT_BELOW = 1000;
/** Sandbox rule: up to this amount (from {@link SANDBOX_SENT_BELOW}) it waits for the console; above, it fails. */
export const SANDBOX_CONSOLE_UP_TO = 5000;

export type DisburseResult<T> = { ok: true; value: T } | { ok: false; code: string; text: string };

const refused = (code: string, text: string): { ok: false; code: string; text: string } => ({ ok: false, code, text });

/** The disbursement of `token` owned by `account` (another account's is as good as unknown). */
export function findDisbursement(sim: SimulatorContext, token: string, account?: MerchantAccount): Disbursement | undefined {
  const found = sim.store.disbursements.get(token);
  return found && (!account || found.account === account) ? found : undefined;
}

/** Does `url` answer 2xx to an empty POST within the probe timeout? Provider B checks it at get-invoice. */
async function callbackAnswers(sim: SimulatorContext, url: string): Promise<boolean> {
  try {
    const response = await sim.fetch(url, { method: "POST", redirect: "manual", signal: AbortSignal.timeout(sim.disburse.probeTimeoutMs) });
    await response.arrayBuffer().catch(() => undefined);
    return response.status >= 200 && response.status < 300;
  } catch {
    return false;
  }
}

/** get-invoice: probes the callback URL, then records a `created` disbursement. Nothing moves. */
export async function createDisbursement(
  sim: SimulatorContext,
  account: MerchantAccount,
  input: { accountAlias: string; amount: number; withdrawMode: string; callbackUrl: string; disburseId: string | null },
): Promise<DisburseResult<Disbursement>> {
  const country = WITHDRAW_MODE_COUNTRIES[input.withdrawMode];
  if (!country) return refused(RESPONSE_CODES.invalidRequest, `Invalid withdraw_mode: ${input.withdrawMode}`);
  if (!(await callbackAnswers(sim, input.callbackUrl))) return refused(DISBURSE_CODES.noFunds, "The callback_url did not answer with a 2xx status");
  let token: string;
  do token = randomToken(20);
  while (sim.store.disbursements.has(token));
  const now = sim.now();
  const disbursement: Disbursement = {
    token,
    account,
    disburseId: input.disburseId,
    accountAlias: input.accountAlias,
    amount: input.amount,
    withdrawMode: input.withdrawMode,
    country,
    callbackUrl: input.callbackUrl,
    status: "created",
    submits: 0,
    transactionId: null,
    disburseTxId: null,
    awaitingConsole: false,
    createdAt: now,
    updatedAt: now,
  };
  sim.store.disbursements.set(token, disbursement);
  return { ok: true, value: disbursement };
}

/** Another disbursement of the account submitted under the same `disburse_id`. */
function submittedUnder(sim: SimulatorContext, disbursement: Disbursement, disburseId: string): boolean {
  for (const other of sim.store.disbursements.values())
    if (other.account === disbursement.account && other.disburseId === disburseId && other.submits > 0) return true;
  return false;
}

/** submit-invoice: sends it once, takes its amount from its country's balance and plays the sandbox rule. */
export function submitDisbursement(sim: SimulatorContext, disbursement: Disbursement, disburseId: string | null): DisburseResult<Disbursement> {
  const id = disburseId ?? disbursement.disburseId;
  if (disbursement.submits > 0 || (id !== null && submittedUnder(sim, disbursement, id)))
    return refused(DISBURSE_CODES.duplicateId, "This disburse_id has already been used");
  if ((disbursement.account.balances[disbursement.country] ?? 0) < disbursement.amount)
    return refused(DISBURSE_CODES.noFunds, `Insufficient balance in ${disbursement.country}`);
  moveBalance(disbursement.account, disbursement.country, -disbursement.amount);
  disbursement.disburseId = id;
  disbursement.submits += 1;
  disbursement.status = "pending";
  disbursement.transactionId = `DT${randomToken(10).toUpperCase()}`;
  disbursement.updatedAt = sim.now();
  playSandboxRule(sim, disbursement);
  return { ok: true, value: disbursement };
}

function playSandboxRule(sim: SimulatorContext, disbursement: Disbursement): void {
  if (disbursement.amount >= SANDBOX_SENT_BELOW && disbursement.amount <= SANDBOX_CONSOLE_UP_TO) {
    disbursement.awaitingConsole = true;
    return;
  }
  const outcome = disbursement.amount < SANDBOX_SENT_BELOW ? "success" : "failed";
  const timer = setTimeout(() => {
    sim.disburse.timers.delete(timer);
    if (disbursement.status === "pending") settleDisbursement(sim, disbursement, outcome);
    sim.saveState();
  }, sim.disburse.delayMs);
  timer.unref?.();
  sim.disburse.timers.add(timer);
}

/** Plays again the sandbox rule of the disbursements still pending when the simulator stopped (their timers are gone). */
export function resumeDisbursements(sim: SimulatorContext): void {
  for (const disbursement of sim.store.disbursements.values())
    if (disbursement.status === "pending" && !disbursement.awaitingConsole) playSandboxRule(sim, disbursement);
}

/** Ends a pending disbursement (the sandbox rule or the console): a failure gives its amount back; the callback goes out. */
export function settleDisbursement(
  sim: SimulatorContext,
  disbursement: Disbursement,
  outcome: "success" | "failed",
): { ok: true } | { ok: false; reason: string } {
  if (disbursement.status !== "pending") return { ok: false, reason: `This disbursement is ${disbursement.status}, not pending.` };
  disbursement.status = outcome;
  disbursement.awaitingConsole = false;
  disbursement.updatedAt = sim.now();
  if (outcome === "success") disbursement.disburseTxId = `${disbursement.withdrawMode.split("-")[0]!.toUpperCase()}.${randomToken(12)}`;
  else moveBalance(disbursement.account, disbursement.country, disbursement.amount);
  sim.ipn.send(disbursement.callbackUrl, disbursementCallback(disbursement), { token: disbursement.token, status: outcome }, { flat: true });
  return { ok: true };
}

/** The fields check-status and the callback share. */
function disbursementFields(disbursement: Disbursement): Record<string, unknown> {
  return {
    status: disbursement.status,
    token: disbursement.token,
    withdraw_mode: disbursement.withdrawMode,
    // Amounts come back as strings with two decimals.
    amount: disbursement.amount.toFixed(2),
    disburse_id: disbursement.disburseId,
    transaction_id: disbursement.transactionId,
    disburse_tx_id: disbursement.disburseTxId,
    updated_at: providerDate(disbursement.updatedAt),
  };
}

/** `POST check-status`'s answer. */
export function disbursementStatus(disbursement: Disbursement): Record<string, unknown> {
  return { response_code: RESPONSE_CODES.success, response_text: "Disbursement Found", ...disbursementFields(disbursement) };
}

/** The callback's fields, flat, with the account's hash. */
export function disbursementCallback(disbursement: Disbursement): Record<string, unknown> {
  return { ...disbursementFields(disbursement), hash: disbursement.account.hash };
}

/** `GET check-balance`'s answer: one `Balance XX` field per country. */
export function balanceAnswer(account: MerchantAccount): Record<string, unknown> {
  const fields = Object.fromEntries(Object.entries(account.balances).map(([country, amount]) => [`Balance ${country}`, balanceText(amount)]));
  return { success: true, description: "Approximate balances, per country", ...fields };
}
