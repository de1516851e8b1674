/**
 * What the gateway does for its providers (`ProviderContext.gateway`, the port's `GatewayServices`): open a
 * tenant's stored credentials for a provider, name a tenant's store, and take a notification into the one
 * intake. Providers reach the gateway through this and nothing else.
 *
 * @module
 */
import type { GatewayServices } from "../providers/provider.ts";
import { openCredentials } from "./credentials/provider-credentials.ts";
import type { Deps } from "./deps.ts";
import { isId } from "./ids.ts";
import { takeNotification } from "./ipn/intake.ts";

/**
 * The gateway's services for its providers, over the deps `deps()` returns when called (the deps being built
 * hold them: `createGateway` passes `() => deps`).
 *
 * @example
 * ```ts
 * const deps: Deps = { ...parts, gateway: gatewayForProviders(() => deps) };
 * ```
 */
export function gatewayForProviders(deps: () => Deps): GatewayServices {
  return {
    async openAccount(input) {
      // A tenant id that is not one of ours has no account (and never reaches a query).
      const current = deps();
      // Only a provider that declares credentials keeps them in the store (`PaymentProvider.credentials`).
      if (!current.providers.find(input.provider)?.credentials || !isId("ten", input.tenantId)) return null;
      return openCredentials(current, input);
    },
    async storeName(tenantId) {
      const tenant = await deps().db.selectFrom("tenants").select("store_name").where("id", "=", tenantId).executeTakeFirst();
      return tenant?.store_name ?? null;
    },
    intake: (notice) => takeNotification(deps(), notice),
  };
}
