/**
 * The provider A simulator (providers.md, "Provider A" and "The simulators' own control surface"): a
 * FedaPay-compatible API at `/v1/…` (payments, payouts, balances), the sandbox rules of spec §8, signed webhooks, and the sandbox
 * console at `/console`.
 *
 * @example
 * ```ts
 * import { createProviderASimulator } from "./providerA/simulator/mod.ts";
 * const simulator = createProviderASimulator({ approveDelayMs: 50 });
 * const server = Bun.serve({ port: 0, fetch: simulator.fetch });
 * // …
 * simulator.close();
 * ```
 */
export { createProviderASimulator, type ProviderASimulator, type ProviderASimulatorOptions } from "./app.ts";
export { sandboxOutcomeFor, SANDBOX_DECLINE_CODE, type SandboxOutcome } from "./sandbox-outcome.ts";
export { payoutOutcomeFor, SANDBOX_PAYOUT_FAILURE_CODE, type PayoutOutcome } from "./payouts/outcome.ts";
export { PAYOUT_LIMITS, PAYOUT_MODE_COUNTRIES, type PayoutMode } from "./payouts/wire.ts";
export { signFedapayWebhook, type WebhookDelivery } from "./webhook-sender.ts";
export type { WireTransaction } from "./render.ts";
export { WIRE_MODE_COUNTRIES, type WireMode } from "./wire.ts";
