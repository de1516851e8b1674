/**
 * The service's own provider A accounts when the simulators are mounted and `PROVIDER_A_*_SECRET_KEY`
 * is unset (contract §10, providers.md): at start-up the gateway creates one account per environment on
 * its mounted simulator and points the account's webhooks at `PUBLIC_BASE_URL/providerA/webhook/{env}`.
 *
 * Decision: the calls go through the gateway's own in-process `fetch` (the simulator is mounted in the
 * same Elysia app), so they work before the server listens and whatever port it binds; afterwards the
 * adapter reaches the simulator over real HTTP at `PROVIDER_A_*_URL` like any provider. Only an
 * environment whose provider A URL is the mounted simulator gets an account (a URL pointing at a
 * standalone simulator or the real host is left alone).
 */
import type { Config } from "../../config.ts";
import type { Environment } from "../../db/schema.ts";

/** What this needs of a logger. */
interface InfoLogger {
  info(fields: Record<string, unknown>, message: string): void;
}

/**
 * Fills `config.providerA`'s secret key and webhook secret of each environment that has none, from an
 * account created on the mounted simulator. Does nothing when the simulators are off.
 *
 * @example
 * ```ts
 * await createSimulatorServiceAccounts(config, http.fetch, logger);
 * config.providerA.sandboxSecretKey; // "sk_sandbox_…"
 * ```
 */
export async function createSimulatorServiceAccounts(config: Config, gatewayFetch: (request: Request) => Promise<Response>, logger: InfoLogger): Promise<void> {
  if (!config.simulators) return;
  const mounted = `${config.publicBaseUrl}/sandbox/providerA`;
  for (const environment of ["sandbox", "live"] as const satisfies Environment[]) {
    const a = config.providerA;
    const url = environment === "live" ? a.liveUrl : a.sandboxUrl;
    const configured = environment === "live" ? a.liveSecretKey : a.sandboxSecretKey;
    if (configured || url.replace(/\/+$/, "") !== mounted) continue;
    const created = await gatewayFetch(
      new Request(`${mounted}/_sim/accounts`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ environment }) }),
    );
    if (!created.ok) throw new Error(`could not create the provider A ${environment} account on the simulator (HTTP ${created.status})`);
    const account = (await created.json()) as { secretKey: string; webhookSecret: string };
    const webhookUrl = `${config.publicBaseUrl}/providerA/webhook/${environment}`;
    const pointed = await gatewayFetch(
      new Request(`${mounted}/_sim/accounts/${encodeURIComponent(account.secretKey)}/webhook`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url: webhookUrl }),
      }),
    );
    if (!pointed.ok) throw new Error(`could not set the provider A ${environment} account's webhook on the simulator (HTTP ${pointed.status})`);
    if (environment === "live") {
      a.liveSecretKey = account.secretKey;
      a.liveWebhookSecret = account.webhookSecret;
    } else {
      a.sandboxSecretKey = account.secretKey;
      a.sandboxWebhookSecret = account.webhookSecret;
    }
    logger.info({ environment, webhookUrl }, "created the service's provider A account on the mounted simulator");
  }
}
