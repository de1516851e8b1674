/**
 * One circuit breaker per environment and provider × operator × country (issue 16), with cockatiel: it opens after
 * `CIRCUIT_BREAKER_FAILURES` consecutive failures of the provider to take a payment (unreachable, a 5xx, no
 * answer — not a refusal of one payment, which says nothing of the provider's health), then lets one payment
 * through after `CIRCUIT_BREAKER_HALF_OPEN_MS` and closes again when it goes through. Open, the route is
 * skipped: the payment goes to the next one, which is safe — nothing was sent. Kept per gateway process
 * (`deps.caches.breakers`); the success rates that rank routes are shared by every process (`window.ts`). The
 * pause is measured on `deps.timers` (the process's monotonic clock, or a test's virtual time), not cockatiel's
 * `Date.now()`.
 *
 * @module
 */
import {
  CircuitState,
  ConsecutiveBreaker,
  circuitBreaker,
  handleWhen,
  type CircuitBreakerPolicy,
  type IBackoff,
  type IBackoffFactory,
  type IHalfOpenAfterBackoffContext,
} from "cockatiel";
import type { Timers } from "../../timers.ts";
import { CollectionError } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";

/** Does this failure speak of the provider's health? */
function isProviderFailure(error: unknown): boolean {
  return error instanceof CollectionError && error.failure.kind !== "refused";
}

/**
 * A pause of `pauseMs` on `timers`, as cockatiel's `halfOpenAfter`. Cockatiel takes no clock: an open circuit
 * lets a call through once `Date.now() - openedAt` reaches the backoff's `duration`, and it asks for the backoff
 * (`next`) as it opens. So the backoff notes `timers.now()` when it is made, and its duration reads -Infinity
 * once `pauseMs` have passed on `timers` (any wall-clock time is past it) and Infinity until then (none is).
 */
function pauseOn(timers: Pick<Timers, "now">, pauseMs: number): IBackoffFactory<IHalfOpenAfterBackoffContext> {
  const pause = (): IBackoff<IHalfOpenAfterBackoffContext> => {
    const openedAt = timers.now();
    return {
      get duration() {
        return timers.now() - openedAt >= pauseMs ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
      },
      next: pause,
    };
  };
  return { next: pause };
}

/** The breaker of a provider × operator × country. */
export function breakerFor(
  deps: Pick<Deps, "caches" | "config" | "logger" | "timers">,
  route: { environment: string; provider: string; operator: string; country: string },
): CircuitBreakerPolicy {
  const key = `${route.environment}:${route.provider}:${route.operator}:${route.country}`;
  let breaker = deps.caches.breakers.get(key);
  if (!breaker) {
    breaker = circuitBreaker(handleWhen(isProviderFailure), {
      halfOpenAfter: pauseOn(deps.timers, deps.config.routing.breakerHalfOpenMs),
      breaker: new ConsecutiveBreaker(deps.config.routing.breakerFailures),
    });
    breaker.onStateChange((state) => deps.logger.warn({ ...route, circuit: CircuitState[state] }, "a route's circuit changed state"));
    deps.caches.breakers.set(key, breaker);
  }
  return breaker;
}

/** The state of every breaker this process holds, for `GET /routing/stats`. */
export function breakerStates(deps: Pick<Deps, "caches">, environment: string): { provider: string; operator: string; country: string; circuit: string }[] {
  return [...deps.caches.breakers.entries()].flatMap(([key, breaker]) => {
    const [env, provider, operator, country] = key.split(":") as [string, string, string, string];
    return env === environment ? [{ provider, operator, country, circuit: CircuitState[breaker.state].toLowerCase() }] : [];
  });
}
