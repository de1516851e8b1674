/**
 * Which provider carries the spec's direct payments (`POST /providerA/direct-payment`, `GET
 * /providerA/transaction/{id}`): chosen in the registry by what it does — a push collection by the spec's
 * `payment_method` words — never by name (provider A in the default registry).
 *
 * @module
 */
import type { PaymentProvider, ProviderName, ProviderRegistry } from "../../providers/provider.ts";
import { PAYMENT_METHODS } from "./payment-methods.ts";

const SPEC_METHODS: ReadonlySet<string> = new Set(PAYMENT_METHODS);

function pushesBy(provider: PaymentProvider, method: (name: string) => boolean): boolean {
  return provider.capabilities.methods.some((capability) => capability.collection === "ussd_push" && method(capability.method));
}

/**
 * The first provider in the registry that pushes by this spec `payment_method`.
 *
 * @throws {Error} when the gateway runs none (a programming error: the spec's methods are a fixed enum).
 */
export function specProviderOf(deps: { providers: ProviderRegistry }, paymentMethod: string): PaymentProvider {
  const provider = deps.providers.all.find((candidate) => pushesBy(candidate, (method) => method === paymentMethod));
  if (!provider) throw new Error(`no provider in the registry pushes by the payment_method ${paymentMethod}`);
  return provider;
}

/** The providers whose direct payments the spec's endpoints show: those that push by the spec's `payment_method` words. */
export function specProviders(deps: { providers: ProviderRegistry }): ProviderName[] {
  return deps.providers.all.filter((provider) => pushesBy(provider, (method) => SPEC_METHODS.has(method))).map((provider) => provider.name);
}
