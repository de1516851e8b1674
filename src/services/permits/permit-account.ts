/**
 * The tenant's provider B account for a permit call: its opened credentials (the active set, or the
 * version a permit was made with), the PERMIT client, and the invoice client (a charge is an invoice of
 * its own, read with the checkout confirm) — both on the environment's base URL.
 */
import type { Environment } from "../../config.ts";
import { providerBClient, type ProviderBClient } from "../../providers/providerB/client.ts";
import { providerBPermitClient, type ProviderBPermitClient } from "../../providers/providerB/permit.ts";
import { openCredentials } from "../credentials/provider-credentials.ts";
import type { Deps } from "../deps.ts";

export interface PermitAccount {
  /** The `provider_credentials.id` of the set (a permit's and its charges' `provider_account`). */
  credentialsId: string;
  version: number;
  masterKey: string;
  permits: ProviderBPermitClient;
  invoices: ProviderBClient;
}

/** Opens the tenant's set (active, or `version`) with both clients; null when there is none. */
export async function openPermitAccount(
  deps: Pick<Deps, "db" | "keyring" | "config" | "logger" | "metrics">,
  input: { tenantId: string; environment: Environment; version?: number },
): Promise<PermitAccount | null> {
  const opened = await openCredentials(deps, { tenantId: input.tenantId, provider: "providerB", environment: input.environment, version: input.version });
  if (!opened) return null;
  const { masterKey, privateKey, token, publicKey } = opened.fields;
  const keys = { masterKey: masterKey!, privateKey: privateKey!, token: token!, ...(publicKey ? { publicKey } : {}) };
  const options = {
    baseUrl: input.environment === "live" ? deps.config.providerB.liveUrl : deps.config.providerB.sandboxUrl,
    timeoutMs: deps.config.providerTimeoutMs,
    keys,
    logger: deps.logger,
    metrics: deps.metrics,
  };
  return {
    credentialsId: opened.id,
    version: opened.version,
    masterKey: keys.masterKey,
    permits: providerBPermitClient(options),
    invoices: providerBClient(options),
  };
}
