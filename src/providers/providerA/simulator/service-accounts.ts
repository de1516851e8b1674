/**
 * The service's own provider A accounts when the simulators are on and `PROVIDER_A_*_SECRET_KEY` is unset
 * (contract §10, providers.md).
 *
 * Decision (issue 25): the account's keys are derived from the gateway's `JWT_SECRET`
 * (`providers/providerA/simulator-keys.ts`, an HMAC: nothing of the secret can be read back from them), so every
 * process of one deployment — `serve`, `serve --no-workers`, any number of `worker`s, the same process
 * after a restart — uses the same pooled account without asking anyone. provider A's configuration section fills them in; at
 * start-up a gateway that mounts the simulators makes sure its provider A simulator knows that account
 * ({@link createSimulatorServiceAccounts}: `POST /_sim/accounts` with the keys, which answers the same
 * account again when it exists) and points its webhooks at `PUBLIC_BASE_URL/providerA/webhook/{env}`.
 *
 * It lives beside the simulator; the gateway (`src/mod.ts`) loads it only when the simulators are on, like the
 * simulators themselves: no service knows provider A's simulator or configuration.
 *
 * The calls go through the gateway's own in-process `fetch` (the simulator is mounted in the same Elysia
 * app), so they work before the server listens and whatever port it binds; afterwards the adapter reaches
 * the simulator over real HTTP at `PROVIDER_A_*_URL` like any provider — a `worker`, which mounts nothing,
 * reaches the one its `PUBLIC_BASE_URL` names. Only an environment whose provider A URL is the mounted
 * simulator is registered there (a URL pointing at another gateway's simulator or the real host is left alone).
 */
import type { Environment } from "../../provider.ts";
import type { ProviderASettings } from "../accounts.ts";

/** What this reads of the gateway's configuration: whether the simulators are mounted, where, and provider A's section. */
export interface ServiceAccountsConfig {
  simulators: boolean;
  publicBaseUrl: string;
  providerA: ProviderASettings;
}

/** What this needs of a logger. */
interface InfoLogger {
  info(fields: Record<string, unknown>, message: string): void;
}

/**
 * Makes sure the mounted provider A simulator knows the service's account of each environment whose URL is
 * that simulator and whose keys are both known (derived, or configured), with its webhooks pointed at this
 * gateway. Does nothing when the simulators are not mounted here.
 *
 * @example
 * ```ts
 * await createSimulatorServiceAccounts(config, http.fetch, logger);
 * ```
 */
export async function createSimulatorServiceAccounts(
  config: ServiceAccountsConfig,
  gatewayFetch: (request: Request) => Promise<Response>,
  logger: InfoLogger,
): Promise<void> {
  if (!config.simulators) return;
  const mounted = `${config.publicBaseUrl}/sandbox/providerA`;
  for (const environment of ["sandbox", "live"] as const satisfies Environment[]) {
    const a = config.providerA;
    const url = environment === "live" ? a.liveUrl : a.sandboxUrl;
    const secretKey = environment === "live" ? a.liveSecretKey : a.sandboxSecretKey;
    const webhookSecret = environment === "live" ? a.liveWebhookSecret : a.sandboxWebhookSecret;
    if (!secretKey || !webhookSecret || url.replace(/\/+$/, "") !== mounted) continue;
    const created = await gatewayFetch(
      new Request(`${mounted}/_sim/accounts`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ environment, secretKey, webhookSecret }),
      }),
    );
    if (!created.ok) throw new Error(`could not create the provider A ${environment} account on the simulator (HTTP ${created.status})`);
    const webhookUrl = `${config.publicBaseUrl}/providerA/webhook/${environment}`;
    const pointed = await gatewayFetch(
      new Request(`${mounted}/_sim/accounts/${encodeURIComponent(secretKey)}/webhook`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url: webhookUrl }),
      }),
    );
    if (!pointed.ok) throw new Error(`could not set the provider A ${environment} account's webhook on the simulator (HTTP ${pointed.status})`);
    logger.info(
      { environment, webhookUrl, known: created.status === 200 },
      created.status === 200
        ? "the mounted simulator already had the service's provider A account"
        : "created the service's provider A account on the mounted simulator",
    );
  }
}
