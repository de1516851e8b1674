/**
 * Timing a provider call for `passerelle_provider_call_duration_seconds`, the same way for every provider.
 *
 * @module
 */
import type { ProviderCallOutcome, ProviderMetrics, ProviderName } from "./context.ts";

/**
 * Runs one call to a provider's API and observes it by provider, operation (its route, a bounded set of names),
 * outcome and duration; `outcomeOf` names the outcome of a failure (`ok` when it answers).
 *
 * @example
 * ```ts
 * return observeProviderCall(metrics, "providerB", "POST /checkout-invoice/create", outcomeOf, () => send(…));
 * ```
 */
export async function observeProviderCall<T>(
  metrics: Pick<ProviderMetrics, "providerCall">,
  provider: ProviderName,
  operation: string,
  outcomeOf: (error: unknown) => ProviderCallOutcome,
  run: () => Promise<T>,
): Promise<T> {
  const started = performance.now();
  let outcome: ProviderCallOutcome = "error";
  try {
    const answer = await run();
    outcome = "ok";
    return answer;
  } catch (error) {
    outcome = outcomeOf(error);
    throw error;
  } finally {
    metrics.providerCall(provider, operation, outcome, (performance.now() - started) / 1000);
  }
}
