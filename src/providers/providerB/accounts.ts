/**
 * A tenant's provider B account for one call: its opened credentials (the active set, or the version a
 * payment or permit was made with) and the clients on the environment's base URL — the invoice client
 * (checkouts, and a permit charge's invoice), the PERMIT client, the disburse client (payouts) and the SoftPay client (direct payments). Provider B has no service account:
 * every call is made with a tenant's keys.
 *
 * @module
 */
import type { Environment, ProviderContext } from "../provider.ts";
import { type ProviderBClient, type ProviderBClientOptions, providerBClient } from "./client.ts";
import { type ProviderBDisburseClient, providerBDisburseClient } from "./disburse.ts";
import { ipnHashOf } from "./ipn.ts";
import { type ProviderBPermitClient, providerBPermitClient } from "./permit.ts";
import { type ProviderBSoftpayClient, providerBSoftpayClient } from "./softpay.ts";

/** Provider B's own configuration section (`config.providerB`): its base URLs. */
export interface ProviderBSettings {
  sandboxUrl: string;
  liveUrl: string;
}

/** What provider B's calls receive: the port's context with its own section. */
export type ProviderBContext = ProviderContext<{ providerB: ProviderBSettings }>;

export interface ProviderBAccount {
  /** The `provider_credentials.id` of the set (a payment's and a permit's `provider_account`). */
  credentialsId: string;
  version: number;
  invoices: ProviderBClient;
  permits: ProviderBPermitClient;
  disbursements: ProviderBDisburseClient;
  /** Direct mobile-money payments of an invoice (`softpay.ts`). */
  softpay: ProviderBSoftpayClient;
}

/** Opens the tenant's set (active, or `version`) and builds its clients; null when there is none. */
export async function openProviderBAccount(
  deps: Pick<ProviderBContext, "gateway" | "config" | "logger" | "metrics">,
  input: { tenantId: string; environment: Environment; version?: number },
): Promise<ProviderBAccount | null> {
  const opened = await deps.gateway.openAccount({ tenantId: input.tenantId, provider: "providerB", environment: input.environment, version: input.version });
  if (!opened) return null;
  const { masterKey, privateKey, token, publicKey } = opened.fields;
  const options: ProviderBClientOptions = {
    baseUrl: input.environment === "live" ? deps.config.providerB.liveUrl : deps.config.providerB.sandboxUrl,
    timeoutMs: deps.config.providerTimeoutMs,
    keys: { masterKey: masterKey!, privateKey: privateKey!, token: token!, ...(publicKey ? { publicKey } : {}) },
    logger: deps.logger,
    metrics: deps.metrics,
  };
  return {
    credentialsId: opened.id,
    version: opened.version,
    invoices: providerBClient(options),
    permits: providerBPermitClient(options),
    disbursements: providerBDisburseClient(options),
    softpay: providerBSoftpayClient(options),
  };
}

/**
 * What an IPN signed with this version's master key carries as `data[hash]`, as bytes for a constant-time
 * comparison (`verifyIpnHashWith`); null when the version or its master key is not there. Computed once
 * per opened set: kept beside the cached set itself (`deps.caches.ipnHashes`, a `WeakMap` on its frozen
 * fields), so it lives exactly as long as the gateway's cache keeps that set. Never logged.
 */
export async function openProviderBIpnHash(
  deps: Pick<ProviderBContext, "gateway" | "caches">,
  input: { tenantId: string; environment: Environment; version: number },
): Promise<Buffer | null> {
  const opened = await deps.gateway.openAccount({ tenantId: input.tenantId, provider: "providerB", environment: input.environment, version: input.version });
  const masterKey = opened?.fields.masterKey;
  if (!opened || !masterKey) return null;
  let expected = deps.caches.ipnHashes.get(opened.fields);
  if (!expected) deps.caches.ipnHashes.set(opened.fields, (expected = Buffer.from(ipnHashOf(masterKey), "utf8")));
  return expected;
}

/**
 * Only the master key of one version (an orphan IPN's hash digest check). Null when the version or its
 * master key is not there.
 */
export async function openProviderBMasterKey(
  deps: Pick<ProviderBContext, "gateway" | "caches">,
  input: { tenantId: string; environment: Environment; version: number },
): Promise<string | null> {
  const opened = await deps.gateway.openAccount({ tenantId: input.tenantId, provider: "providerB", environment: input.environment, version: input.version });
  return opened?.fields.masterKey ?? null;
}
