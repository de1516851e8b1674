/**
 * How provider B's domain (checkouts, IPNs, permits) reaches provider B: through the port, found in the
 * gateway's registry ({@link providerBOf}), and how a failed call is answered ({@link providerFailure}):
 * a refusal is 422 `provider_refused` with provider B's `providerResponseCode`, no answer in time 504,
 * anything else 502 — the provider's own message either way.
 *
 * @module
 */
import { ProviderError } from "../../errors.ts";
import type { PaymentProvider, ProviderCallError } from "../../providers/provider.ts";
import type { Deps } from "../deps.ts";

/** Provider B with the parts this domain relies on (standing authorisations, signed notifications). */
export type ProviderBPort = PaymentProvider & Required<Pick<PaymentProvider, "recurring" | "signatures">>;

/**
 * Provider B from the gateway's registry.
 *
 * @throws {Error} when the gateway runs no provider B, or one without authorisations or signatures (a programming error).
 */
export function providerBOf(deps: Pick<Deps, "providers">): ProviderBPort {
  const provider = deps.providers.get("providerB");
  if (!provider.recurring || !provider.signatures) throw new Error("provider B must declare recurring authorisations and notification signatures");
  return provider as ProviderBPort;
}

/** The contract's answer to a failed provider B call (bodies as they always were). */
export function providerFailure(failure: ProviderCallError): ProviderError {
  if (failure.kind === "refused")
    return new ProviderError(422, failure.message, failure.details.providerCode !== undefined ? { providerResponseCode: failure.details.providerCode } : {});
  return new ProviderError(failure.kind === "timeout" ? 504 : 502, failure.message);
}
