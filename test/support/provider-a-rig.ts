/**
 * A gateway on the service's provider A sandbox account, against provider A's simulator over real HTTP: the
 * simulator on a free port, an account made on it (its webhooks pointed at the gateway), the gateway started
 * on a free port. For tests of what a tenant does through provider A (payments, payouts, routing).
 */
import { createProviderASimulator, type ProviderASimulator } from "../../src/providers/providerA/simulator/mod.ts";
import { startTestGateway, type TestGateway } from "./gateway.ts";
import type { VirtualTime } from "./virtual-time.ts";

export interface ProviderARig {
  simulator: ProviderASimulator;
  /** The simulator's base URL (its `/_sim` control routes are under it). */
  simBase: string;
  tg: TestGateway;
  /** The gateway's base URL. */
  base: string;
  account: { secretKey: string; webhookSecret: string };
  close(): Promise<void>;
}

/**
 * Starts the simulator (`approveDelayMs`, default 50) and a gateway on its account; `env` adds configuration.
 * With `time` the gateway runs on virtual time (`startTestGateway`'s `time`) and the simulator dates its
 * transactions and signs its webhooks on the same clock; its own delays (approvals, webhook retries) stay real.
 */
export async function startProviderARig(
  options: { approveDelayMs?: number; payoutFeeRate?: number; env?: Record<string, string>; time?: VirtualTime } = {},
): Promise<ProviderARig> {
  const time = options.time;
  const simulator = createProviderASimulator({
    approveDelayMs: options.approveDelayMs ?? 50,
    ...(options.payoutFeeRate !== undefined && { payoutFeeRate: options.payoutFeeRate }),
    ...(time && { now: () => time.now() }),
  });
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: simulator.fetch });
  const simBase = server.url.toString().replace(/\/$/, "");
  const account = (await (await fetch(`${simBase}/_sim/accounts`, { method: "POST" })).json()) as { secretKey: string; webhookSecret: string };
  const tg = await startTestGateway(
    {
      PROVIDER_A_SANDBOX_URL: simBase,
      PROVIDER_A_SANDBOX_SECRET_KEY: account.secretKey,
      PROVIDER_A_SANDBOX_WEBHOOK_SECRET: account.webhookSecret,
      ...options.env,
    },
    time ? { time } : {},
  );
  const base = (await tg.gateway.start()).url!;
  await fetch(`${simBase}/_sim/accounts/${account.secretKey}/webhook`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url: `${base}/providerA/webhook/sandbox` }),
  });
  return {
    simulator,
    simBase,
    tg,
    base,
    account,
    async close() {
      simulator.close();
      await tg.close();
      await server.stop(true);
    },
  };
}
