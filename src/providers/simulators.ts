/**
 * The provider simulators (providers.md, "The simulators' own control surface"): development tools that
 * speak each provider's wire protocol, mounted in the gateway under `/sandbox/providerA` and
 * `/sandbox/providerB` when `SIMULATORS` is on, or served standalone by `passerelle sandbox` (each from
 * `/` on a port of its own) so a benchmark keeps them out of the gateway's process.
 *
 * Each simulator lives in its provider's folder (`providerA/simulator/`, `providerB/simulator/`), beside
 * the client it answers, and is a plain fetch handler over its own paths. This module is the list of
 * them and where they are mounted; the gateway imports it dynamically, only when they are mounted.
 *
 * A `serve` process keeps their memory under `DATA_DIR/simulators/` ({@link simulatorsKeepingState}), so a
 * restart on the same data finds the same accounts, transactions and ids (issue 25).
 */
import { join } from "node:path";
import { createProviderASimulator, type ProviderASimulatorOptions } from "./providerA/simulator/mod.ts";
import { createProviderBSimulator, type ProviderBSimulatorOptions } from "./providerB/simulator/mod.ts";
import { openStateFile } from "./simulator-state.ts";

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

/** What {@link simulatorsKeepingState} tells its caller (who logs it). */
export interface StateFileEvents {
  /** Another running process holds the state file at `path`: this simulator runs in memory. */
  busy(path: string): void;
  /** Writing the state file at `path` failed; the next change tries again. */
  writeFailed(path: string, error: Error): void;
}

/**
 * This module, with each simulator it creates keeping its memory in `<dir>/<name>.json`
 * (`simulator-state.ts`). A file that another running process holds (a second `serve` on the same
 * `DATA_DIR`) is left to it: that simulator runs in memory, and `events.busy` is told its path.
 *
 * @example
 * ```ts
 * const simulators = simulatorsKeepingState(join(config.dataDir, "simulators"), { busy: (path) => logger.warn({ path }, "…"), writeFailed: … });
 * createHttpApp({ …, simulators });
 * ```
 */
export function simulatorsKeepingState(dir: string, events: StateFileEvents) {
  return {
    createSimulatorApp(name: SimulatorName, options: SimulatorOptions = {}) {
      const path = join(dir, `${name}.json`);
      const state = openStateFile(path, (error) => events.writeFailed(path, error));
      if (!state) events.busy(path);
      return createSimulatorApp(name, { ...options, ...(state && { state }) });
    },
    simulatorMountPath,
    simulatorsKeepingState,
  };
}
