/**
 * The providers a gateway runs with. `createGateway` builds a registry from {@link DEFAULT_PROVIDERS}
 * (or the list its caller passes) and puts it in `Deps`; services find a provider by name here and call
 * it through the port (`provider.ts`). A new provider is a folder under `src/providers/` and one line in
 * {@link DEFAULT_PROVIDERS} (docs/adding-a-provider.md).
 *
 * @module
 */
import type { PaymentProvider, ProviderRegistry } from "./provider.ts";

export type { ProviderRegistry } from "./provider.ts";
import { providerA } from "./providerA/provider.ts";
import { providerB } from "./providerB/provider.ts";

/**
 * The providers a gateway runs with unless told otherwise, in the order a choice between them follows when
 * nothing else decides it: provider A first (its direct USSD push and the service's pooled account), then
 * provider B — a payout to a wallet both reach goes through provider A.
 */
export const DEFAULT_PROVIDERS: readonly PaymentProvider[] = [providerA, providerB];

/**
 * A registry of `providers` (names must be unique).
 *
 * @example
 * ```ts
 * const providers = createProviderRegistry([...DEFAULT_PROVIDERS, myProvider]);
 * providers.get("providerA").capabilities.collect; // ["ussd_push"]
 * ```
 */
export function createProviderRegistry(providers: readonly PaymentProvider[] = DEFAULT_PROVIDERS): ProviderRegistry {
  const byName = new Map<string, PaymentProvider>();
  for (const provider of providers) {
    if (byName.has(provider.name)) throw new Error(`two providers are named ${provider.name}`);
    byName.set(provider.name, provider);
  }
  return {
    get(name) {
      const provider = byName.get(name);
      if (!provider) throw new Error(`this gateway runs no provider named ${name}`);
      return provider;
    },
    find: (name) => byName.get(name),
    all: [...providers],
    inbound: providers.flatMap((provider) => provider.inbound),
  };
}
