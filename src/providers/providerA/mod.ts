/**
 * The provider A adapter (providers.md, "Provider A"): the HTTP client, the wire types, the mapping of the
 * spec's `payment_method` enum and of wire transactions to domain values, and webhook signatures.
 *
 * @module
 */
export { createProviderAClient, ProviderACallError, type ProviderAClient, type ProviderAClientOptions, type ProviderAFailureKind } from "./client.ts";
export {
  CALLING_CODES,
  currencyOf,
  METHOD_WIRE,
  PAID_STATUSES,
  PAYMENT_METHODS,
  stateOfWireStatus,
  toTransactionFacts,
  wireModeOf,
  type DirectPaymentCountry,
  type PaymentMethod,
  type ProviderATransactionFacts,
} from "./map.ts";
export { parseSignatureHeader, signProviderAWebhook, SIGNATURE_TOLERANCE_SECONDS, verifyProviderASignature } from "./signature.ts";
export { WIRE_STATUSES, wireWebhookSchema, type WireMode, type WireStatus, type WireTransaction } from "./wire.ts";
