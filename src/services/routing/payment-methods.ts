/**
 * `GET /payment-methods?country=`: the operators a tenant can take payments from in a country, each with
 * its route list (the providers the tenant has an account on, in the order `POST /payments` tries them),
 * the flow the customer follows and its limits.
 *
 * @module
 */
import { z } from "zod";
import type { Environment } from "../../db/schema.ts";
import { NotConfiguredError } from "../../errors.ts";
import type { Deps } from "../deps.ts";
import { routeList, servedWallets } from "./routes.ts";

export const paymentMethodsSchema = z
  .object({
    country: z.string(),
    methods: z.array(
      z.object({
        operator: z.string().meta({ example: "wave" }),
        currency: z.enum(["XOF", "GNF"]),
        flow: z
          .enum(["push", "otp", "redirect"])
          .meta({ description: "push: approve the prompt; otp: give the code (otpHint) with the payment; redirect: open the URL answered" }),
        otpHint: z.string().nullable(),
        routes: z.array(
          z.object({
            provider: z.string(),
            method: z.string().meta({ description: "The provider's name for it" }),
            limits: z.object({ minAmount: z.number().int(), maxAmount: z.number().int().nullable() }).nullable(),
          }),
        ),
      }),
    ),
  })
  .meta({ id: "PaymentMethods" });

export type PaymentMethodsView = z.infer<typeof paymentMethodsSchema>;

/** The operators of `country` the tenant can take, with their routes; an operator none of whose providers has an account for the tenant is left out. */
export async function listPaymentMethods(deps: Deps, scope: { tenantId: string; environment: Environment }, country: string): Promise<PaymentMethodsView> {
  const methods: PaymentMethodsView["methods"] = [];
  const accounts = new Map<string, boolean>();
  const hasAccount = async (provider: { name: string; accountFor: Deps["providers"]["all"][number]["accountFor"] }) => {
    let known = accounts.get(provider.name);
    if (known === undefined) {
      try {
        await provider.accountFor(deps, scope.tenantId, scope.environment);
        known = true;
      } catch (error) {
        if (!(error instanceof NotConfiguredError)) throw error;
        known = false;
      }
      accounts.set(provider.name, known);
    }
    return known;
  };
  for (const wallet of servedWallets(deps).filter((w) => w.country === country)) {
    const { routes } = await routeList(deps, scope, wallet.operator, country);
    const usable = [];
    for (const route of routes) if (await hasAccount(route.provider)) usable.push(route);
    if (usable.length === 0) continue;
    const first = usable[0]!.method;
    methods.push({
      operator: wallet.operator,
      currency: first.currency,
      flow: first.flow ?? "push",
      otpHint: first.otpHint ?? null,
      routes: usable.map((route) => ({ provider: route.provider.name, method: route.method.method, limits: route.method.limits ?? null })),
    });
  }
  return { country, methods };
}
