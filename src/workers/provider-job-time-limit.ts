/**
 * The time limit of a job that calls a provider (the sync steps, the `ipn` job, renewal charges).
 *
 * @module
 */
import type { Deps } from "../services/deps.ts";

/**
 * Three calls of up to `PROVIDER_TIMEOUT_MS` each, and 30 s for the database around them (`jobs/time-limit.ts`).
 *
 * @example
 * ```ts
 * providerJobTimeLimitMs({ providerTimeoutMs: 15_000 }); // 75_000
 * ```
 */
export function providerJobTimeLimitMs(config: Pick<Deps["config"], "providerTimeoutMs">): number {
  return 3 * config.providerTimeoutMs + 30_000;
}
