/**
 * The providers' side of a bench run (issues 5, 6, 8): the simulators run as their own process
 * (`passerelle sandbox`), the gateway is configured with their URLs and with a service provider A account
 * the harness creates through the simulator's control surface, and everything tenant-side — tenants, API
 * keys exchanged for bearer tokens, provider B credentials, webhook endpoints — is set up through the
 * gateway's own API before anything is measured.
 *
 * A second receiver process (`reference-servers/webhook-receiver.ts`) serves three purposes here:
 * - `/sink/…`: the gateway's `PUBLIC_BASE_URL`, so the `callback_url` of every invoice points there and the
 *   IPNs the provider B simulator sends when an invoice is paid land in it — the IPN scenario replays
 *   exactly those bodies at the gateway (`harness/ipn-intake.ts`). With `SIMULATORS=off` nothing else in
 *   the gateway is built from `PUBLIC_BASE_URL`.
 * - `/discard/…`: the webhook target of the provider A account the simulator-direct reference uses, so
 *   the simulator signs and posts an approval webhook for every payment in both rows of the pair.
 * - `/subject/ipn`: the provider B tenant's webhook endpoint, noted with the token each event is about.
 */
import { DIRECT_PAYMENT } from "../scenarios.ts";
import type { LaunchedSimulators } from "./servers.ts";
import type { Target } from "./measure.ts";

const log = (line: string) => process.stderr.write(`${line}\n`);

export interface ProviderAAccount {
  secretKey: string;
  webhookSecret: string;
}

export interface ProviderBKeys {
  masterKey: string;
  privateKey: string;
  publicKey: string;
  token: string;
}

/** The simulators and the receiver, with the accounts made on the simulators before the gateway starts. */
export interface ProviderWorld {
  simulators: Target & { providerAUrl: string; providerBUrl: string };
  receiver: Target;
  /** The gateway's own provider A account (`PROVIDER_A_SANDBOX_*`); its webhooks go to the gateway. */
  serviceAccount: ProviderAAccount;
  /** The account the simulator-direct reference pays on; its webhooks go to the receiver's `/discard/`. */
  referenceAccount: ProviderAAccount;
}

async function json<T>(response: Response, what: string): Promise<T> {
  const text = await response.text();
  if (response.status < 200 || response.status > 299) throw new Error(`bench: ${what} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

async function createProviderAAccount(simulatorUrl: string): Promise<ProviderAAccount> {
  const response = await fetch(`${simulatorUrl}/_sim/accounts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ environment: "sandbox" }),
  });
  return json<ProviderAAccount>(response, "POST /_sim/accounts (provider A)");
}

/** Points a provider A account's webhooks at `url` (`PUT /_sim/accounts/{secretKey}/webhook`). */
export async function pointProviderAWebhook(simulatorUrl: string, secretKey: string, url: string): Promise<void> {
  const response = await fetch(`${simulatorUrl}/_sim/accounts/${encodeURIComponent(secretKey)}/webhook`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url }),
  });
  await json(response, "PUT /_sim/accounts/{secretKey}/webhook");
}

/** Creates the two provider A accounts; the reference's webhooks go to the receiver's `/discard/`. */
export async function prepareProviderWorld(simulators: Target & LaunchedSimulators, receiver: Target): Promise<ProviderWorld> {
  const serviceAccount = await createProviderAAccount(simulators.providerAUrl);
  const referenceAccount = await createProviderAAccount(simulators.providerAUrl);
  await pointProviderAWebhook(simulators.providerAUrl, referenceAccount.secretKey, `${receiver.baseUrl}/discard/providerA`);
  return {
    simulators: { baseUrl: simulators.baseUrl, child: simulators.child, providerAUrl: simulators.providerAUrl, providerBUrl: simulators.providerBUrl },
    receiver,
    serviceAccount,
    referenceAccount,
  };
}

/** `PUBLIC_BASE_URL` of the gateway in the bench: the receiver's IPN sink. */
export const sinkBaseUrl = (receiver: Target) => `${receiver.baseUrl}/sink`;

/** JSON calls to the gateway's API. */
export interface GatewayApi {
  baseUrl: string;
  call<T>(method: string, path: string, init: { token: string; tenantId?: string; body?: unknown }): Promise<T>;
}

export function gatewayApi(baseUrl: string): GatewayApi {
  return {
    baseUrl,
    async call<T>(method: string, path: string, init: { token: string; tenantId?: string; body?: unknown }): Promise<T> {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${init.token}`,
          ...(init.tenantId ? { "x-tenant-id": init.tenantId } : {}),
          ...(init.body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: init.body === undefined ? undefined : JSON.stringify(init.body),
        signal: AbortSignal.timeout(20_000),
      });
      return json<T>(response, `${method} ${path}`);
    },
  };
}

/** A tenant made through `POST /tenants`, with its first sandbox API key. */
export interface BenchTenant {
  id: string;
  storeName: string;
  apiKey: { id: string; secret: string };
  /** A bearer token from `POST /auth/token` (1 h): {@link refreshToken} takes a new one. */
  token: string;
}

/** `POST /tenants` as the operator, then `POST /auth/token` with the tenant's API key. */
async function createTenant(api: GatewayApi, adminToken: string, name: string): Promise<BenchTenant> {
  const storeName = `${name} store`;
  const created = await api.call<{ tenant: { id: string }; apiKey: { id: string; secret: string } }>("POST", "/tenants", {
    token: adminToken,
    body: { name, storeName },
  });
  const tenant: BenchTenant = { id: created.tenant.id, storeName, apiKey: created.apiKey, token: "" };
  await refreshToken(api, tenant);
  return tenant;
}

/** Exchanges the tenant's API key for a fresh bearer token (client credentials). */
export async function refreshToken(api: GatewayApi, tenant: BenchTenant): Promise<void> {
  const response = await fetch(`${api.baseUrl}/auth/token`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ grant_type: "client_credentials", client_id: tenant.apiKey.id, client_secret: tenant.apiKey.secret }),
  });
  tenant.token = (await json<{ access_token: string }>(response, "POST /auth/token")).access_token;
}

export interface ProviderASetup {
  tenant: BenchTenant;
  /** Provider A's id of a direct payment the gateway already reports `approved`. */
  approvedTransactionId: number;
}

/**
 * A tenant (with no webhook endpoint and no `callback_url`: the direct payment rows measure the payment,
 * not the tenant's notifications), and one direct payment made and waited for until the gateway reports
 * it approved (the simulator's webhook, or the refresh-on-read, settles it about 2 s after the push).
 */
export async function setUpProviderA(api: GatewayApi, adminToken: string): Promise<ProviderASetup> {
  const tenant = await createTenant(api, adminToken, "Bench provider A");
  const paid = await api.call<{ transactionId: number }>("POST", "/providerA/direct-payment", { token: tenant.token, body: DIRECT_PAYMENT });
  const deadline = performance.now() + 30_000;
  let status = "";
  while (performance.now() < deadline) {
    status = (await api.call<{ status: string }>("GET", `/providerA/transaction/${paid.transactionId}/status`, { token: tenant.token })).status;
    if (status === "approved") {
      log(`bench: provider A tenant ${tenant.id}, transaction ${paid.transactionId} approved`);
      return { tenant, approvedTransactionId: paid.transactionId };
    }
    await Bun.sleep(200);
  }
  throw new Error(
    `bench: direct payment ${paid.transactionId} still '${status}' 30 s after it was made (the simulator approves below 1000 after --approve-delay-ms)`,
  );
}

export interface ProviderBSetup {
  tenant: BenchTenant;
  keys: ProviderBKeys;
}

/**
 * A tenant with provider B sandbox credentials of a fresh simulator account (`PUT /tenants/{id}/credentials/
 * providerB`) and one webhook endpoint at the receiver's `/subject/ipn` (`POST /webhooks`).
 */
export async function setUpProviderB(api: GatewayApi, adminToken: string, world: ProviderWorld): Promise<ProviderBSetup> {
  const tenant = await createTenant(api, adminToken, "Bench provider B");
  const keys = await json<ProviderBKeys>(await fetch(`${world.simulators.providerBUrl}/_sim/accounts`, { method: "POST" }), "POST /_sim/accounts (provider B)");
  await api.call("PUT", `/tenants/${tenant.id}/credentials/providerB`, { token: tenant.token, tenantId: tenant.id, body: { ...keys, environment: "sandbox" } });
  // Enough in Senegal for every payout of the run: the disburse jobs are sent, not refused for want of funds (4002).
  await fetch(`${world.simulators.providerBUrl}/_sim/accounts/${keys.masterKey}/balances`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ SN: 1_000_000_000_000 }),
  });
  await api.call("POST", "/webhooks", {
    token: tenant.token,
    tenantId: tenant.id,
    body: { url: `${world.receiver.baseUrl}/subject/ipn`, description: "bench IPN → webhook" },
  });
  log(`bench: provider B tenant ${tenant.id} with its own credentials and a webhook endpoint`);
  return { tenant, keys };
}
