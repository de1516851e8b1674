/**
 * The choice between a wallet's routes (`rankRoutes`): by success rate over the window, the list's order
 * standing for routes with too few payments, and the exploration share that keeps a weaker route tried.
 */
import { describe, expect, it } from "bun:test";
import type { PaymentProvider } from "../../../src/providers/provider.ts";
import type { Route } from "../../../src/services/routing/routes.ts";
import { MIN_SAMPLES, rankRoutes, type RouteStat } from "../../../src/services/routing/window.ts";

function route(name: string): Route {
  return {
    provider: { name, label: name } as PaymentProvider,
    method: { method: `${name}-mtn`, operator: "mtn", country: "bj", currency: "XOF", collection: "ussd_push" },
  };
}

function stat(provider: string, succeeded: number, failed: number): RouteStat {
  return { provider, operator: "mtn", country: "bj", succeeded, failed, successRate: succeeded + failed > 0 ? succeeded / (succeeded + failed) : null };
}

const routes = [route("providerA"), route("providerB")];
const options = { exploreShare: 0.1, rateMargin: 0.05, windowMinutes: 15 };
const order = (ranked: { provider: { name: string } }[]) => ranked.map((r) => r.provider.name);

describe("rankRoutes", () => {
  it("keeps the route list's order while the window holds too few payments", () => {
    const ranked = rankRoutes(routes, [stat("providerA", 1, MIN_SAMPLES - 2), stat("providerB", 5, 0)], { ...options, random: () => 0.99 });
    expect(order(ranked)).toEqual(["providerA", "providerB"]);
    expect(ranked[0]!.reason).toBe(`first of the route list (${MIN_SAMPLES - 1} payments in the last 15 min)`);
  });

  it("puts the best success rate first once both routes have enough payments", () => {
    const ranked = rankRoutes(routes, [stat("providerA", 10, 30), stat("providerB", 38, 2)], { ...options, random: () => 0.99 });
    expect(order(ranked)).toEqual(["providerB", "providerA"]);
    expect(ranked[0]!.reason).toBe("best success rate (success rate 0.95 over 40 payments in the last 15 min)");
    expect(ranked[1]!.reason).toBe("next by success rate (success rate 0.25 over 40 payments in the last 15 min)");
  });

  it("keeps the route list's order between routes whose rates are within the margin", () => {
    // Provider A back from an outage (0.96 over 100), provider B never failed (1.00 over 50): A leads again.
    const ranked = rankRoutes(routes, [stat("providerA", 96, 4), stat("providerB", 50, 0)], { ...options, random: () => 0.99 });
    expect(order(ranked)).toEqual(["providerA", "providerB"]);
    expect(ranked[0]!.reason).toBe("first of the route list within 5 points of the best success rate (success rate 0.96 over 100 payments in the last 15 min)");
    // Without a margin, the better rate leads.
    expect(order(rankRoutes(routes, [stat("providerA", 96, 4), stat("providerB", 50, 0)], { ...options, rateMargin: 0, random: () => 0.99 }))).toEqual([
      "providerB",
      "providerA",
    ]);
  });

  it("puts a later route first when its rate is better by more than the margin", () => {
    const ranked = rankRoutes(routes, [stat("providerA", 90, 10), stat("providerB", 50, 0)], { ...options, random: () => 0.99 });
    expect(order(ranked)).toEqual(["providerB", "providerA"]);
    expect(ranked[0]!.reason).toBe("best success rate (success rate 1.00 over 50 payments in the last 15 min)");
  });

  it("applies the margin at every place: the earliest route within it of the best of those left", () => {
    const three = [route("providerA"), route("providerB"), route("providerC")];
    // C is best (1.00) and B within 5 points of it (0.97): B first, as the list has it; then C (A, 0.80, is not within 5 points of C).
    const ranked = rankRoutes(three, [stat("providerA", 80, 20), stat("providerB", 97, 3), stat("providerC", 40, 0)], {
      ...options,
      exploreShare: 0,
      random: () => 0.5,
    });
    expect(order(ranked)).toEqual(["providerB", "providerC", "providerA"]);
  });

  it("sends the exploration share to a weaker route first, so that it can recover", () => {
    const stats = [stat("providerA", 10, 30), stat("providerB", 38, 2)];
    const draws = [0.05, 0];
    const ranked = rankRoutes(routes, stats, { ...options, random: () => draws.shift()! });
    expect(order(ranked)).toEqual(["providerA", "providerB"]);
    expect(ranked[0]!.reason).toStartWith("exploration share (10 %) kept on a weaker route so it can recover");
    // Over many payments, about that share goes to the weaker route.
    let weakerFirst = 0;
    for (let i = 0; i < 10_000; i++) if (rankRoutes(routes, stats, { ...options, random: Math.random })[0]!.provider.name === "providerA") weakerFirst++;
    expect(weakerFirst).toBeGreaterThan(800);
    expect(weakerFirst).toBeLessThan(1_200);
  });

  it("ranks a route without enough payments as the best known, so a new route is tried before a failing one", () => {
    const three = [route("providerA"), route("providerB"), route("providerC")];
    const ranked = rankRoutes(three, [stat("providerA", 2, 38), stat("providerB", 30, 10)], { ...options, exploreShare: 0, random: () => 0.5 });
    expect(order(ranked)).toEqual(["providerB", "providerC", "providerA"]);
  });
});
