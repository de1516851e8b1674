/**
 * The tenant's provider B account for one call: its opened credentials (the active set, or the version a
 * payment was made with) and a client on the environment's base URL.
 */
import type { Environment } from "../../config.ts";
import { providerBClient, type ProviderBClient } from "../../providers/providerB/client.ts";
import { credentialField } from "../../crypto/sealed-fields.ts";
import { openCredentials } from "../credentials/provider-credentials.ts";
import type { Deps } from "../deps.ts";

export interface ProviderBAccount {
  /** The `provider_credentials.id` of the set (a payment's `provider_account`). */
  credentialsId: string;
  version: number;
  masterKey: string;
  client: ProviderBClient;
}

/** Opens the tenant's set (active, or `version`) and builds its client; null when there is none. */
export async function openProviderBAccount(
  deps: Pick<Deps, "db" | "keyring" | "config">,
  input: { tenantId: string; environment: Environment; version?: number },
): Promise<ProviderBAccount | null> {
  const opened = await openCredentials(deps, { tenantId: input.tenantId, provider: "providerB", environment: input.environment, version: input.version });
  if (!opened) return null;
  const { masterKey, privateKey, token, publicKey } = opened.fields;
  const keys = { masterKey: masterKey!, privateKey: privateKey!, token: token!, ...(publicKey ? { publicKey } : {}) };
  const baseUrl = input.environment === "live" ? deps.config.providerB.liveUrl : deps.config.providerB.sandboxUrl;
  return {
    credentialsId: opened.id,
    version: opened.version,
    masterKey: keys.masterKey,
    client: providerBClient({ baseUrl, timeoutMs: deps.config.providerTimeoutMs, keys }),
  };
}

/**
 * Only the master key of one version (an IPN's hash check): one sealed value opened instead of the set.
 * Null when the version or its master key is not there.
 */
export async function openProviderBMasterKey(
  deps: Pick<Deps, "db" | "keyring">,
  input: { tenantId: string; environment: Environment; version: number },
): Promise<string | null> {
  const row = await deps.db
    .selectFrom("provider_credentials")
    .select("sealed")
    .where("tenant_id", "=", input.tenantId)
    .where("provider", "=", "providerB")
    .where("environment", "=", input.environment)
    .where("version", "=", input.version)
    .executeTakeFirst();
  const sealed = row?.sealed.masterKey;
  if (!sealed) return null;
  return deps.keyring.open(sealed, { tenantId: input.tenantId, field: credentialField("providerB", "masterKey") });
}
