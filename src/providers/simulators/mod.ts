/**
 * The provider simulators (providers.md, "The simulators' own control surface"): development tools that
 * speak each provider's wire protocol, mounted in the gateway under `/sandbox/providerA` and
 * `/sandbox/providerB` when `SIMULATORS` is on, or served standalone by `passerelle sandbox` (each from
 * `/` on a port of its own) so a benchmark keeps them out of the gateway's process.
 *
 * Each simulator is a plain fetch handler over its own paths; the protocols themselves are added by the
 * provider A and provider B work. What every simulator answers already is its liveness route.
 */
import { Elysia } from "elysia";

export type SimulatorName = "providerA" | "providerB";

/** A simulator as an Elysia app serving from `/` (mount it under a prefix, or serve it on its own port). */
export function createSimulatorApp(name: SimulatorName) {
  return new Elysia({ name: `simulator-${name}` }).get("/_sim/health", () => Response.json({ status: "ok", simulator: name }));
}

/** The path under which the gateway mounts a simulator when `SIMULATORS` is on. */
export function simulatorMountPath(name: SimulatorName): string {
  return `/sandbox/${name}`;
}
