/**
 * What the services count (`Deps.metrics`): the interface, declared with the domain that calls it; the HTTP
 * layer implements it with prom-client (`http/metrics.ts`).
 *
 * @module
 */
import type { ProviderCallOutcome, ProviderName } from "../providers/context.ts";

/** How a webhook delivery attempt ended (`DeliverResult.outcome`). */
export type DeliveryOutcome = "succeeded" | "retrying" | "failed";

/**
 * What the services count, through `Deps.metrics` (optional there: a test that builds its own deps counts nothing).
 * Every label takes a bounded set of values.
 */
export interface ServiceMetrics {
  /** One call to a provider's API (`operation`: a fixed name per client method) and how long it took. */
  providerCall(provider: ProviderName, operation: string, outcome: ProviderCallOutcome, seconds: number): void;
  /** One webhook delivery attempt that was sent, by what it decided, and how long the HTTP exchange took. */
  deliveryAttempt(outcome: DeliveryOutcome, seconds: number): void;
  /** A webhook endpoint disabled by its deliveries: it answered 410 (`gone`) or failed for 5 days (`failing`). */
  endpointDisabled(reason: "gone" | "failing"): void;
  /** A provider B IPN answered: accepted (`reason`: what became of it) or refused (`reason`: why). */
  ipn(outcome: "accepted" | "refused", reason: string): void;
}
