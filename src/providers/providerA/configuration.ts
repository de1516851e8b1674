/**
 * What provider A declares of itself to the gateway: its environment variables and the configuration
 * section built from them (`config.providerA`, {@link ProviderASettings}), and the credentials a tenant may
 * store for its own account. `loadConfig` validates the variables, the credentials API, the OpenAPI
 * document and the dashboard's Settings read the fields, all through the registry.
 *
 * @module
 */
import { z } from "zod";
import type { ProviderConfiguration, ProviderCredentials } from "../provider.ts";
import type { ProviderASettings } from "./accounts.ts";
import { simulatorServiceAccountKeys } from "./simulator-keys.ts";

const REAL_PROVIDER_A = { sandbox: "https://sandbox-api.fedapay.com", live: "https://api.fedapay.com" };
const url = z.url({ protocol: /^https?$/ });
const secret = z.string().min(1);

export const providerAConfiguration: ProviderConfiguration<ProviderASettings> = {
  variables: {
    PROVIDER_A_SANDBOX_URL: url.optional(),
    PROVIDER_A_LIVE_URL: url.optional(),
    PROVIDER_A_SANDBOX_SECRET_KEY: secret.optional(),
    PROVIDER_A_LIVE_SECRET_KEY: secret.optional(),
    PROVIDER_A_SANDBOX_WEBHOOK_SECRET: secret.optional(),
    PROVIDER_A_LIVE_WEBHOOK_SECRET: secret.optional(),
  },
  section(values, gateway) {
    const e = values as Partial<Record<string, string>>;
    const simulator = `${gateway.publicBaseUrl}/sandbox/providerA`;
    // With the simulators, the service's account is derived from a secret of the deployment: every process
    // of it (serve, worker, after a restart) uses the same one (simulator-keys.ts).
    const onSimulator = (environment: "sandbox" | "live", configuredUrl: string | undefined, secretKey: string | undefined) =>
      gateway.simulators && !secretKey && (configuredUrl === undefined || /\/sandbox\/providerA\/*$/.test(configuredUrl))
        ? simulatorServiceAccountKeys(gateway.simulatorSeed, environment)
        : undefined;
    const sandbox = onSimulator("sandbox", e.PROVIDER_A_SANDBOX_URL, e.PROVIDER_A_SANDBOX_SECRET_KEY);
    const live = onSimulator("live", e.PROVIDER_A_LIVE_URL, e.PROVIDER_A_LIVE_SECRET_KEY);
    return {
      sandboxUrl: e.PROVIDER_A_SANDBOX_URL ?? (gateway.simulators ? simulator : REAL_PROVIDER_A.sandbox),
      liveUrl: e.PROVIDER_A_LIVE_URL ?? (gateway.simulators ? simulator : REAL_PROVIDER_A.live),
      sandboxSecretKey: e.PROVIDER_A_SANDBOX_SECRET_KEY ?? sandbox?.secretKey,
      liveSecretKey: e.PROVIDER_A_LIVE_SECRET_KEY ?? live?.secretKey,
      sandboxWebhookSecret: e.PROVIDER_A_SANDBOX_WEBHOOK_SECRET ?? sandbox?.webhookSecret,
      liveWebhookSecret: e.PROVIDER_A_LIVE_WEBHOOK_SECRET ?? live?.webhookSecret,
    };
  },
};

/** A tenant's own provider A account (optional: without it, direct payments use the service's). */
export const providerACredentials: ProviderCredentials = {
  fields: [
    { name: "secretKey", label: { en: "Secret key", fr: "Clé secrète" } },
    { name: "webhookSecret", label: { en: "Webhook secret", fr: "Secret de webhook" } },
  ],
  summary: "the tenant's own provider A account",
  title: { en: "Your own provider A account (optional)", fr: "Votre propre compte fournisseur A (facultatif)" },
  hint: {
    en: "Without it, your direct payments go through the platform's account.",
    fr: "Sans ce compte, vos paiements directs passent par le compte de la plateforme.",
  },
};
