/**
 * The provider A adapter (providers.md, "Provider A"): {@link providerA} is what the gateway runs (the port,
 * `../provider.ts`); the client, signatures and wire shapes are exported for the simulator's tests.
 *
 * @module
 */
export { createProviderAClient, type ProviderAClient, type ProviderAClientOptions } from "./client.ts";
export { providerA } from "./provider.ts";
export { parseSignatureHeader, signProviderAWebhook, SIGNATURE_TOLERANCE_SECONDS, verifyProviderASignature } from "./signature.ts";
