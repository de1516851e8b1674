/**
 * The field names bound into sealed values (the additional authenticated data beside the tenant id).
 * One place, so that the code that seals a value and the code that re-seals it agree.
 */
import type { Provider, TenantSecretKind } from "../db/schema.ts";

/** A provider credential field, e.g. `providerB.masterKey` — the same for every version and environment. */
export function credentialField(provider: Provider, name: string): string {
  return `${provider}.${name}`;
}

/** A tenant signing secret, e.g. `tenantSecret.callback`. */
export function tenantSecretField(kind: TenantSecretKind): string {
  return `tenantSecret.${kind}`;
}
