/**
 * Route lists (issue 16): which providers a payment to an operator's phones in a country may go to, in
 * which order. By default, every provider the gateway runs whose capabilities push to that operator there,
 * in the gateway's order (provider A first where it serves the operator); a tenant may set its own list
 * per environment (`PUT /routing`), of providers that serve the operator.
 *
 * @module
 */
import { z } from "zod";
import type { Environment } from "../../db/schema.ts";
import { ValidationError } from "../../errors.ts";
import type { PaymentMethodCapability, PaymentProvider } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";
import { bumpRoutingVersion, forgetRouting } from "./routing-version.ts";

/** One provider a payment may go to, with the method it serves the operator by. */
export interface Route {
  provider: PaymentProvider;
  method: PaymentMethodCapability;
}

/** Every provider that pushes payments to `operator` phones in `country`, in the gateway's order. */
export function servingRoutes(deps: Pick<Deps, "providers">, operator: string, country: string): Route[] {
  const routes: Route[] = [];
  for (const provider of deps.providers.all) {
    const method = provider.capabilities.methods.find((m) => m.operator === operator && m.country === country && m.collection === "ussd_push");
    if (method) routes.push({ provider, method });
  }
  return routes;
}

/** Every operator × country some provider pushes payments to, sorted by country then operator. */
export function servedWallets(deps: Pick<Deps, "providers">): { operator: string; country: string }[] {
  const seen = new Map<string, { operator: string; country: string }>();
  for (const provider of deps.providers.all)
    for (const m of provider.capabilities.methods)
      if (m.collection === "ussd_push") seen.set(`${m.country}:${m.operator}`, { operator: m.operator, country: m.country });
  return [...seen.values()].sort((a, b) => a.country.localeCompare(b.country) || a.operator.localeCompare(b.operator));
}

/** The tenant's route list for the wallet: its own order when it set one, the default otherwise. */
export async function routeList(
  deps: Pick<Deps, "db" | "providers">,
  scope: { tenantId: string; environment: Environment },
  operator: string,
  country: string,
): Promise<{ routes: Route[]; configured: boolean }> {
  const serving = servingRoutes(deps, operator, country);
  const rule = await deps.db
    .selectFrom("routing_rules")
    .select("providers")
    .where("tenant_id", "=", scope.tenantId)
    .where("environment", "=", scope.environment)
    .where("operator", "=", operator)
    .where("country", "=", country)
    .executeTakeFirst();
  return applyRule(serving, rule?.providers);
}

/**
 * A wallet's routes under the tenant's rule: the rule's providers in its order, less those the gateway stopped
 * running or that stopped serving the wallet; every serving route, in the gateway's order, when nothing is left
 * of the rule or there is none.
 */
export function applyRule(serving: Route[], rule: readonly string[] | undefined): { routes: Route[]; configured: boolean } {
  const routes = (rule ?? []).flatMap((name) => serving.filter((route) => route.provider.name === name));
  return { routes: routes.length > 0 ? routes : serving, configured: routes.length > 0 };
}

export const routingRuleSchema = z
  .object({
    operator: z
      .string()
      .regex(/^[a-z][a-z0-9-]{1,31}$/)
      .meta({ example: "mtn" }),
    country: z
      .string()
      .regex(/^[a-z]{2}$/)
      .meta({ example: "bj" }),
    providers: z
      .array(z.string().regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/))
      .max(10)
      .meta({
        description: "The providers to try, in order; every one must serve the operator in that country. Empty: back to the default list",
        example: ["providerA", "providerB"],
      }),
  })
  .meta({ id: "RoutingRule" });

export const routingViewSchema = z
  .object({
    environment: z.enum(["sandbox", "live"]),
    routes: z.array(
      z.object({
        operator: z.string(),
        country: z.string(),
        providers: z.array(z.string()).meta({ description: "The route list in use, in order" }),
        serving: z.array(z.string()).meta({
          description: "Every provider that serves this wallet, in the gateway's order: the ones a route list may name",
          example: ["providerA", "providerB"],
        }),
        configured: z.boolean().meta({ description: "True when the tenant set this list; false for the default (every provider that serves it)" }),
      }),
    ),
  })
  .meta({ id: "Routing" });

export type RoutingView = z.infer<typeof routingViewSchema>;

/** Every wallet the gateway serves, with the tenant's route list for it and the providers that serve it (one read). */
export async function getRouting(deps: Pick<Deps, "db" | "providers">, scope: { tenantId: string; environment: Environment }): Promise<RoutingView> {
  const rules = await deps.db
    .selectFrom("routing_rules")
    .select(["operator", "country", "providers"])
    .where("tenant_id", "=", scope.tenantId)
    .where("environment", "=", scope.environment)
    .execute();
  const ruleOf = new Map(rules.map((rule) => [`${rule.country}:${rule.operator}`, rule.providers]));
  const routes = servedWallets(deps).map((wallet) => {
    const serving = servingRoutes(deps, wallet.operator, wallet.country);
    const { routes: list, configured } = applyRule(serving, ruleOf.get(`${wallet.country}:${wallet.operator}`));
    const names = (of: Route[]) => of.map((route) => route.provider.name);
    return { ...wallet, providers: names(list), configured, serving: names(serving) };
  });
  return { environment: scope.environment, routes };
}

/**
 * Sets route lists (the others are left as they are); an empty list goes back to the default. The tenant's
 * routing counter is raised in the same transaction: the next payment in every process follows the new lists.
 *
 * @throws {ValidationError} for a wallet no provider serves, a provider that does not serve it, or a provider named twice.
 */
export async function putRouting(
  deps: Pick<Deps, "db" | "providers" | "now" | "caches">,
  scope: { tenantId: string; environment: Environment },
  rules: z.infer<typeof routingRuleSchema>[],
): Promise<RoutingView> {
  const messages: string[] = [];
  rules.forEach((rule, i) => {
    const serving = servingRoutes(deps, rule.operator, rule.country).map((route) => route.provider.name);
    if (serving.length === 0) messages.push(`rules.${i}: no provider serves ${rule.operator} in ${rule.country}`);
    for (const name of rule.providers)
      if (serving.length > 0 && !serving.includes(name))
        messages.push(`rules.${i}.providers: ${name} does not serve ${rule.operator} in ${rule.country} (it is served by ${serving.join(", ")})`);
    if (new Set(rule.providers).size !== rule.providers.length) messages.push(`rules.${i}.providers must not name a provider twice`);
  });
  if (messages.length > 0) throw new ValidationError(messages);
  await deps.db.transaction().execute(async (tx) => {
    for (const rule of rules) {
      const key = { tenant_id: scope.tenantId, environment: scope.environment, operator: rule.operator, country: rule.country };
      if (rule.providers.length === 0) {
        await tx
          .deleteFrom("routing_rules")
          .where("tenant_id", "=", key.tenant_id)
          .where("environment", "=", key.environment)
          .where("operator", "=", key.operator)
          .where("country", "=", key.country)
          .execute();
        continue;
      }
      await tx
        .insertInto("routing_rules")
        .values({ ...key, providers: rule.providers, updated_at: deps.now() })
        .onConflict((oc) => oc.columns(["tenant_id", "environment", "operator", "country"]).doUpdateSet({ providers: rule.providers, updated_at: deps.now() }))
        .execute();
    }
    // Every process's cached routing of the tenant stops being used when this commits (`route-cache.ts`).
    await bumpRoutingVersion(tx, scope.tenantId);
  });
  forgetRouting(deps, scope.tenantId);
  return getRouting(deps, scope);
}
