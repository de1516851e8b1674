/**
 * The provider simulators (providers.md, "The simulators' own control surface"): development tools that
 * speak each provider's wire protocol, mounted in the gateway under `/sandbox/providerA` and
 * `/sandbox/providerB` when `SIMULATORS` is on, or served standalone by `passerelle sandbox` (each from
 * `/` on a port of its own) so a benchmark keeps them out of the gateway's process.
 *
 * Each simulator lives in its provider's folder (`providerA/simulator/`, `providerB/simulator/`), beside
 * the client it answers, and is a plain fetch handler over its own paths. This module is the list of
 * them and where they are mounted; the gateway imports it dynamically, only when they are mounted.
 */
import { createProviderASimulator, type ProviderASimulatorOptions } from "./providerA/simulator/mod.ts";
import { createProviderBSimulator, type ProviderBSimulatorOptions } from "./providerB/simulator/mod.ts";

export type SimulatorName = "providerA" | "providerB";

/**
 * What a simulator can be given: provider A's delays and webhook retries, provider B's IPN retries and
 * `publicBaseUrl`; both take `basePath`, `now` and `fetch` (see each one's options).
 */
export interface SimulatorOptions extends ProviderASimulatorOptions, ProviderBSimulatorOptions {}

/**
 * A simulator as an Elysia app serving from `/` (mount it under a prefix, or serve it on its own port).
 * Both have a `close()` that cancels their timers and webhook / IPN attempts.
 */
export function createSimulatorApp(name: SimulatorName, options: SimulatorOptions = {}) {
  if (name === "providerA") return createProviderASimulator(options);
  return createProviderBSimulator(options);
}

/** The path under which the gateway mounts a simulator when `SIMULATORS` is on. */
export function simulatorMountPath(name: SimulatorName): string {
  return `/sandbox/${name}`;
}
