/**
 * The tenant's provider B account for one call: its opened credentials (the active set, or the version a
 * payment was made with) and a client on the environment's base URL.
 */
import type { Environment } from "../../config.ts";
import { providerBClient, type ProviderBClient } from "../../providers/providerB/client.ts";
import { ipnHashOf } from "../../providers/providerB/ipn.ts";
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
  deps: Pick<Deps, "db" | "keyring" | "config" | "logger" | "metrics">,
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
    client: providerBClient({ baseUrl, timeoutMs: deps.config.providerTimeoutMs, keys, logger: deps.logger, metrics: deps.metrics }),
  };
}

/**
 * Only the master key of one version (an IPN's hash check). Null when the version or its master key is not
 * there. Goes through the same per-process cache as {@link openProviderBAccount} (`openCredentials`): the
 * IPNs of one merchant account all name the same version, and its confirm call needs the whole set next.
 */
export async function openProviderBMasterKey(
  deps: Pick<Deps, "db" | "keyring">,
  input: { tenantId: string; environment: Environment; version: number },
): Promise<string | null> {
  const opened = await openCredentials(deps, { tenantId: input.tenantId, provider: "providerB", environment: input.environment, version: input.version });
  return opened?.fields.masterKey ?? null;
}

/**
 * What an IPN signed with this version's master key carries as `data[hash]`, as bytes for a constant-time
 * comparison (`verifyIpnHashWith`); null when the version or its master key is not there. Computed once
 * per opened set: kept beside the cached set itself (a `WeakMap` on its frozen fields), so it lives exactly
 * as long as the cache keeps that set. Never logged.
 */
export async function openProviderBIpnHash(
  deps: Pick<Deps, "db" | "keyring">,
  input: { tenantId: string; environment: Environment; version: number },
): Promise<Buffer | null> {
  const opened = await openCredentials(deps, { tenantId: input.tenantId, provider: "providerB", environment: input.environment, version: input.version });
  const masterKey = opened?.fields.masterKey;
  if (!opened || !masterKey) return null;
  let expected = expectedIpnHashes.get(opened.fields);
  if (!expected) expectedIpnHashes.set(opened.fields, (expected = Buffer.from(ipnHashOf(masterKey), "utf8")));
  return expected;
}

const expectedIpnHashes = new WeakMap<object, Buffer>();
