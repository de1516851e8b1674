/**
 * What provider B declares of itself to the gateway: its environment variables and the configuration
 * section built from them (`config.providerB`, {@link ProviderBSettings}), and the credentials every tenant
 * stores (provider B has no service account). `loadConfig` validates the variables, the credentials API,
 * the OpenAPI document and the dashboard's Settings read the fields, all through the registry.
 *
 * @module
 */
import { z } from "zod";
import type { ProviderConfiguration, ProviderCredentials } from "../provider.ts";
import type { ProviderBSettings } from "./accounts.ts";

const REAL_PROVIDER_B = { sandbox: "https://app.paydunya.com/sandbox-api/v1", live: "https://app.paydunya.com/api/v1" };
const url = z.url({ protocol: /^https?$/ });

export const providerBConfiguration: ProviderConfiguration<ProviderBSettings> = {
  variables: { PROVIDER_B_SANDBOX_URL: url.optional(), PROVIDER_B_LIVE_URL: url.optional() },
  section(values, gateway) {
    const e = values as Partial<Record<string, string>>;
    const simulator = `${gateway.publicBaseUrl}/sandbox/providerB`;
    return {
      sandboxUrl: e.PROVIDER_B_SANDBOX_URL ?? (gateway.simulators ? `${simulator}/sandbox-api/v1` : REAL_PROVIDER_B.sandbox),
      liveUrl: e.PROVIDER_B_LIVE_URL ?? (gateway.simulators ? `${simulator}/api/v1` : REAL_PROVIDER_B.live),
    };
  },
};

/** A tenant's provider B keys, per environment. */
export const providerBCredentials: ProviderCredentials = {
  fields: [
    { name: "masterKey", label: { en: "Master key", fr: "Clé principale (master key)" } },
    { name: "privateKey", label: { en: "Private key", fr: "Clé privée" } },
    { name: "token", label: { en: "Token", fr: "Jeton" } },
    { name: "publicKey", optional: true, label: { en: "Public key", fr: "Clé publique" } },
  ],
  summary: "provider B credentials",
  title: { en: "Provider B", fr: "Fournisseur B" },
  hint: {
    en: "The keys of your provider B account (hosted checkout), per environment.",
    fr: "Les clés de votre compte fournisseur B (page de paiement), par environnement.",
  },
};
