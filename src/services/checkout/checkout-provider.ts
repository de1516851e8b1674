/**
 * How the hosted-checkout and permit domain (checkouts, their IPNs, permits and their charges) reaches its
 * provider: chosen in the gateway's registry by what it can do, never by name ({@link checkoutProviderOf}),
 * and how a failed call is answered ({@link providerFailure}): a refusal is 422 `provider_refused` with the
 * provider's `providerResponseCode`, no answer in time 504, anything else 502 — the provider's own message
 * either way.
 *
 * @module
 */
import { ProviderError } from "../../errors.ts";
import type { PaymentProvider, ProviderCallError, ProviderRegistry } from "../../providers/provider.ts";

/** A provider with the parts this domain relies on (hosted checkouts, standing authorisations, signed notifications). */
export type CheckoutProvider = PaymentProvider & Required<Pick<PaymentProvider, "recurring" | "signatures">>;

function servesCheckouts(provider: PaymentProvider): provider is CheckoutProvider {
  const { collect, recurring } = provider.capabilities;
  return collect.includes("hosted_checkout") && recurring && provider.recurring !== undefined && provider.signatures !== undefined;
}

/**
 * The provider of hosted checkouts and permits: the first in the registry that collects by a hosted page,
 * keeps standing authorisations and signs its notifications (provider B in the default registry).
 *
 * @throws {Error} when the gateway runs none (a programming error).
 */
export function checkoutProviderOf(deps: { providers: ProviderRegistry }): CheckoutProvider {
  const provider = deps.providers.all.find(servesCheckouts);
  if (!provider) throw new Error("no provider in the registry takes hosted checkouts with standing authorisations and notification signatures");
  return provider;
}

/** The contract's answer to a failed call to it (bodies as they always were). */
export function providerFailure(failure: ProviderCallError): ProviderError {
  if (failure.kind === "refused")
    return new ProviderError(422, failure.message, failure.details.providerCode !== undefined ? { providerResponseCode: failure.details.providerCode } : {});
  return new ProviderError(failure.kind === "timeout" ? 504 : 502, failure.message);
}
