/**
 * `passerelle_payments{provider,state}`: how many payments each provider holds in each state, for the
 * dashboard (contract §9). One grouped count over the whole table, so it is cached: scrapes closer than
 * {@link PAYMENTS_GAUGE_TTL_MS} apart (several Prometheus replicas, a dashboard refresh) share one query.
 */
import { sql } from "kysely";
import { Gauge } from "prom-client";
import type { Registry } from "prom-client";
import type { PaymentState } from "../../db/schema.ts";
import type { Deps } from "../deps.ts";

/** How long one count serves the scrapes. */
export const PAYMENTS_GAUGE_TTL_MS = 10_000;

const STATES: readonly PaymentState[] = ["pending", "succeeded", "failed", "cancelled", "refunded"];

/** Payments per provider and state, every pair of a provider the gateway runs present (0 when none). */
export async function countPaymentsByState(deps: Pick<Deps, "db" | "providers">): Promise<{ provider: string; state: PaymentState; count: number }[]> {
  const rows = await deps.db
    .selectFrom("payments")
    .select(["provider", "state", sql<string>`count(*)`.as("n")])
    .groupBy(["provider", "state"])
    .execute();
  const counts = new Map(rows.map((row) => [`${row.provider} ${row.state}`, Number(row.n)]));
  const providers = new Set([...deps.providers.all.map((provider) => provider.name), ...rows.map((row) => row.provider)]);
  return [...providers].flatMap((provider) => STATES.map((state) => ({ provider, state, count: counts.get(`${provider} ${state}`) ?? 0 })));
}

/**
 * Registers the gauge on the gateway's registry, counted at a scrape at most every {@link PAYMENTS_GAUGE_TTL_MS}
 * (a failed count leaves the last values and is logged).
 */
export function registerPaymentsByStateGauge(registry: Registry, deps: Pick<Deps, "db" | "logger" | "providers">): Gauge<"provider" | "state"> {
  let countedAt = -Infinity;
  let counting: Promise<void> | undefined;
  return new Gauge({
    name: "passerelle_payments",
    help: "Payments by provider and state (counted at most every 10 s)",
    labelNames: ["provider", "state"] as const,
    registers: [registry],
    async collect() {
      if (performance.now() - countedAt < PAYMENTS_GAUGE_TTL_MS) return;
      counting ??= countPaymentsByState(deps)
        .then((counts) => {
          for (const { provider, state, count } of counts) this.set({ provider, state }, count);
          countedAt = performance.now();
        })
        .catch((err: unknown) => deps.logger.warn({ err }, "could not count the payments for the metrics"))
        .finally(() => (counting = undefined));
      await counting;
    },
  });
}
