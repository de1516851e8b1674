/**
 * What the provider B payout tests share: a standalone provider B simulator on its own port with a short
 * sandbox delay (shaped as the rig's `SimulatorServer`), a callback receiver standing in for the gateway's
 * public URL, and calls to the simulator's disbursement controls.
 */
import { ulid } from "ulid";
import type { PayoutRequest } from "../../../src/providers/provider.ts";
import { createProviderBSimulator } from "../../../src/providers/providerB/simulator/mod.ts";
import type { SimulatorServer } from "../../support/provider-b-rig.ts";

/** A disbursement as `GET /_sim/disbursements` shows it. */
export interface SimDisbursement {
  token: string;
  disburse_id: string | null;
  status: string;
  amount: number;
  withdraw_mode: string;
  account_alias: string;
  submits: number;
  awaiting_console: boolean;
  callback_url: string;
}

/** The simulator on 127.0.0.1, its sandbox disbursements ending after `approveDelayMs`. */
export function startPayoutSimulator(approveDelayMs = 100): SimulatorServer {
  const simulator = createProviderBSimulator({ approveDelayMs, ipnRetryDelaysMs: [100, 200, 400] });
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => simulator.fetch(request) });
  const url = server.url.toString().replace(/\/$/, "");
  return {
    simulator,
    url,
    account: async () => (await (await fetch(`${url}/_sim/accounts`, { method: "POST" })).json()) as never,
    press: (token, verb, body = {}) =>
      fetch(`${url}/_sim/invoices/${token}/${verb}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
    async stop() {
      simulator.close();
      await server.stop(true);
    },
  };
}

/** Every disbursement the simulator holds. */
export async function disbursementsOf(sim: SimulatorServer): Promise<SimDisbursement[]> {
  return ((await (await fetch(`${sim.url}/_sim/disbursements`)).json()) as { disbursements: SimDisbursement[] }).disbursements;
}

/** The one disbursement made under `disburseId` (the test fails on another count). */
export async function disbursementsUnder(sim: SimulatorServer, disburseId: string): Promise<SimDisbursement[]> {
  return (await disbursementsOf(sim)).filter((disbursement) => disbursement.disburse_id === disburseId);
}

/** Presses the console's Send or Fail of a disbursement (JSON call). */
export function pressDisbursement(sim: SimulatorServer, token: string, verb: "send" | "fail"): Promise<Response> {
  return fetch(`${sim.url}/_sim/disbursements/${token}/${verb}`, { method: "POST" });
}

/** Makes the simulator's next submit act, then lose its answer. */
export async function loseNextSubmit(sim: SimulatorServer, fault: { answer: "server_error" } | { answer: "timeout"; delayMs: number }): Promise<void> {
  const response = await fetch(`${sim.url}/_sim/disburse/next-submit`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(fault),
  });
  if (response.status !== 200) throw new Error(`next-submit: ${response.status}`);
}

/** Sets some of an account's balances. */
export async function setBalances(sim: SimulatorServer, masterKey: string, balances: Record<string, number>): Promise<void> {
  const response = await fetch(`${sim.url}/_sim/accounts/${masterKey}/balances`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(balances),
  });
  if (response.status !== 200) throw new Error(`balances: ${response.status}`);
}

/** One request the callback receiver got. */
export interface ReceivedCallback {
  path: string;
  contentType: string;
  raw: string;
  fields: Record<string, string>;
}

/** A stand-in for the gateway's public URL: records every POST; answers 200, or 503 while `down`. */
export function startCallbackReceiver() {
  const received: ReceivedCallback[] = [];
  const state = { down: false };
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    async fetch(request) {
      const raw = await request.text();
      received.push({
        path: new URL(request.url).pathname,
        contentType: request.headers.get("content-type") ?? "",
        raw,
        fields: Object.fromEntries(new URLSearchParams(raw)),
      });
      return state.down ? new Response("down", { status: 503 }) : new Response("ok");
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, received, state, stop: () => server.stop(true) };
}

/** A payout request of `amount` XOF to a Wave Senegal wallet; `recorded` keeps what it is given. */
export function payoutRequest(
  base: Pick<PayoutRequest, "tenantId" | "account">,
  overrides: Partial<PayoutRequest> = {},
): PayoutRequest & { recordedCalls: { providerPayoutId: string; providerStatus: string }[] } {
  const recordedCalls: { providerPayoutId: string; providerStatus: string }[] = [];
  return {
    payoutId: `po_${ulid()}`,
    environment: "sandbox",
    providerPayoutId: null,
    amount: 500,
    currency: "XOF",
    description: "Remboursement commande 42",
    recipient: { phone: { number: "771234567", country: "sn" }, operator: "wave", firstname: "Awa", lastname: "Diop" },
    recorded: async (started) => void recordedCalls.push(started),
    ...base,
    ...overrides,
    recordedCalls,
  };
}
