/**
 * Each route's live success rate over a sliding window (issue 16), shared by every process: the
 * `route_outcomes` table counts, per provider × operator × country and minute (spread over 16 rows, migration 0035), the routed payments that
 * ended paid and those that failed (a trigger on `payments`, migration 0012) and the attempts a provider
 * refused or could not take (`countFailedAttempt`), each minute weighed by its age (`ROUTING_HALF_LIFE_MINUTES`).
 * The choice between a wallet's routes ranks them by that rate, keeps the route list's order between routes
 * within `ROUTING_RATE_MARGIN` of each other, and keeps a share of payments (`ROUTING_EXPLORE_SHARE`) on the
 * weaker ones, so that a route that recovers is seen to.
 *
 * @module
 */
import { sql } from "kysely";
import { ROUTE_OUTCOME_SLOTS } from "../../db/migrations/0035_route_outcome_slots.ts";
import type { Environment } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";
import type { RouteStat } from "./routing-cache.ts";
import type { Route } from "./routes.ts";

/** Below this many payments in the window a route's rate says too little: the route list's order stands. */
export const MIN_SAMPLES = 10;

export type { RouteStat } from "./routing-cache.ts";

/** The window's counts of every route (or of one wallet's). */
export async function routeStats(
  deps: Pick<Deps, "db" | "now" | "config">,
  environment: Environment,
  wallet?: { operator: string; country: string },
): Promise<{ windowMinutes: number; since: Date; routes: RouteStat[] }> {
  const windowMinutes = deps.config.routing.windowMinutes;
  const since = new Date(deps.now().getTime() - windowMinutes * 60_000);
  let query = deps.db
    .selectFrom("route_outcomes")
    .select(["provider", "operator", "country", "minute", sql<string>`sum(succeeded)`.as("succeeded"), sql<string>`sum(failed)`.as("failed")])
    .where("environment", "=", environment)
    .where("minute", ">=", new Date(Math.floor(since.getTime() / 60_000) * 60_000))
    .groupBy(["provider", "operator", "country", "minute"])
    .orderBy("country")
    .orderBy("operator")
    .orderBy("provider");
  if (wallet) query = query.where("operator", "=", wallet.operator).where("country", "=", wallet.country);
  const rows = await query.execute();
  const currentMinute = Math.floor(deps.now().getTime() / 60_000) * 60_000;
  const halfLife = deps.config.routing.halfLifeMinutes;
  const routes = new Map<string, RouteStat & { weighedSucceeded: number; weighedFailed: number }>();
  for (const row of rows) {
    const key = `${row.provider}:${row.operator}:${row.country}`;
    const route = routes.get(key) ?? {
      provider: row.provider,
      operator: row.operator,
      country: row.country,
      succeeded: 0,
      failed: 0,
      successRate: null,
      weighedSucceeded: 0,
      weighedFailed: 0,
    };
    routes.set(key, route);
    const ageMinutes = Math.max(0, (currentMinute - new Date(row.minute).getTime()) / 60_000);
    const weight = halfLife > 0 ? 0.5 ** (ageMinutes / halfLife) : 1;
    route.succeeded += Number(row.succeeded);
    route.failed += Number(row.failed);
    route.weighedSucceeded += Number(row.succeeded) * weight;
    route.weighedFailed += Number(row.failed) * weight;
  }
  return {
    windowMinutes,
    since,
    routes: [...routes.values()].map(({ weighedSucceeded, weighedFailed, ...route }) => ({
      ...route,
      successRate: weighedSucceeded + weighedFailed > 0 ? weighedSucceeded / (weighedSucceeded + weighedFailed) : null,
    })),
  };
}

/** Counts an attempt the provider refused or could not take as a failure of its route. */
export async function countFailedAttempt(
  deps: Pick<Deps, "db" | "now">,
  route: { environment: Environment; provider: string; operator: string; country: string },
): Promise<void> {
  const minute = new Date(Math.floor(deps.now().getTime() / 60_000) * 60_000);
  // Any of the minute's rows (migration 0035): the window sums them.
  const slot = Math.floor(Math.random() * ROUTE_OUTCOME_SLOTS);
  await deps.db
    .insertInto("route_outcomes")
    .values({ ...route, minute, slot, succeeded: 0, failed: 1 })
    .onConflict((oc) =>
      oc.columns(["environment", "provider", "operator", "country", "minute", "slot"]).doUpdateSet((eb) => ({ failed: eb("route_outcomes.failed", "+", 1) })),
    )
    .execute();
}

/** A route in the order a payment tries them, with why it stands there. */
export interface RankedRoute extends Route {
  reason: string;
}

/**
 * Orders a wallet's routes for one payment: by success rate over the window, except that a route goes ahead of
 * one earlier in the route list only when its rate is better by more than `rateMargin` (so the list's order
 * stands between routes that do about as well, and a route back from an outage takes its place again as soon as
 * its rate is within the margin, not once it beats a route that never failed); routes with fewer than
 * {@link MIN_SAMPLES} payments rank as the best known. A share of payments (`exploreShare`) goes first to a
 * weaker route. `random` in [0, 1).
 */
export function rankRoutes(
  routes: readonly Route[],
  stats: readonly RouteStat[],
  options: { exploreShare: number; rateMargin: number; windowMinutes: number; random: () => number },
): RankedRoute[] {
  const statOf = (route: Route) => stats.find((s) => s.provider === route.provider.name);
  const rated = routes.map((route, index) => {
    const stat = statOf(route);
    const samples = stat ? stat.succeeded + stat.failed : 0;
    return { route, index, samples, rate: samples >= MIN_SAMPLES && stat?.successRate !== null && stat ? stat.successRate : null };
  });
  const describe = (r: (typeof rated)[number]) =>
    r.rate === null
      ? `${r.samples} payments in the last ${options.windowMinutes} min`
      : `success rate ${r.rate.toFixed(2)} over ${r.samples} payments in the last ${options.windowMinutes} min`;
  if (rated.length < 2 || rated.every((r) => r.rate === null))
    return rated.map((r, i) => ({ ...r.route, reason: i === 0 ? `first of the route list (${describe(r)})` : `next in the route list (${describe(r)})` }));
  // Unknown rates rank as the best known, so that a new route is tried before a failing one.
  const best = Math.max(...rated.map((r) => r.rate ?? 0));
  const value = (r: (typeof rated)[number]) => r.rate ?? best;
  // Each place goes to the earliest in the list of the routes left within the margin of the best of them.
  const ordered: typeof rated = [];
  const left = [...rated];
  let firstWithinMargin = false;
  while (left.length > 0) {
    const top = Math.max(...left.map(value));
    const pick = left.find((r) => value(r) >= top - options.rateMargin - 1e-9)!;
    if (ordered.length === 0) firstWithinMargin = value(pick) < top;
    ordered.push(pick);
    left.splice(left.indexOf(pick), 1);
  }
  if (options.random() < options.exploreShare) {
    const weaker = ordered.slice(1);
    const pick = weaker[Math.floor(options.random() * weaker.length)]!;
    return [pick, ...ordered.filter((r) => r !== pick)].map((r, i) => ({
      ...r.route,
      reason:
        i === 0
          ? `exploration share (${Math.round(options.exploreShare * 100)} %) kept on a weaker route so it can recover (${describe(r)})`
          : `next by success rate (${describe(r)})`,
    }));
  }
  const margin = `${Math.round(options.rateMargin * 100)} points`;
  return ordered.map((r, i) => ({
    ...r.route,
    reason:
      i > 0
        ? `next by success rate (${describe(r)})`
        : firstWithinMargin
          ? `first of the route list within ${margin} of the best success rate (${describe(r)})`
          : `best success rate (${describe(r)})`,
  }));
}
