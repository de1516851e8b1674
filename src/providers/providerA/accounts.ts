/**
 * Which provider A account a direct payment uses (contract §3, §4): the tenant's own account for that
 * environment when it stored one, otherwise the service's own account of that environment (configured, or
 * created on the simulator at start-up in development). A payment remembers its account
 * (`provider_account`: `service` or the credential set id, with its version), and every later call about
 * it — reads, webhook verification — uses that same account.
 */
import { NotConfiguredError } from "../../errors.ts";
import { type Environment, type Payment, type ProviderContext, SERVICE_ACCOUNT } from "../provider.ts";
import { createProviderAClient, type ProviderAClient } from "./client.ts";

/** Provider A's own configuration section (`config.providerA`): its base URLs and the service's own accounts. */
export interface ProviderASettings {
  sandboxUrl: string;
  liveUrl: string;
  sandboxSecretKey: string | undefined;
  liveSecretKey: string | undefined;
  sandboxWebhookSecret: string | undefined;
  liveWebhookSecret: string | undefined;
}

/** What provider A's calls receive: the port's context with its own section. */
export type ProviderAContext = ProviderContext<{ providerA: ProviderASettings }>;

export interface ProviderAAccount {
  /** `service`, or the tenant's `provider_credentials.id`. */
  accountId: string;
  credentialVersion: number | null;
  secretKey: string;
  webhookSecret: string;
}

/** The service's own account of an environment, or null when it has none. */
export function serviceAccount(deps: Pick<ProviderAContext, "config">, environment: Environment): ProviderAAccount | null {
  const a = deps.config.providerA;
  const secretKey = environment === "live" ? a.liveSecretKey : a.sandboxSecretKey;
  const webhookSecret = environment === "live" ? a.liveWebhookSecret : a.sandboxWebhookSecret;
  if (!secretKey) return null;
  return { accountId: SERVICE_ACCOUNT, credentialVersion: null, secretKey, webhookSecret: webhookSecret ?? "" };
}

/** A tenant's own account: its active set, or the given version. Null when there is none. */
export async function tenantAccount(
  deps: Pick<ProviderAContext, "gateway">,
  input: { tenantId: string; environment: Environment; version?: number },
): Promise<ProviderAAccount | null> {
  const opened = await deps.gateway.openAccount({ tenantId: input.tenantId, provider: "providerA", environment: input.environment, version: input.version });
  if (!opened?.fields.secretKey) return null;
  return { accountId: opened.id, credentialVersion: opened.version, secretKey: opened.fields.secretKey, webhookSecret: opened.fields.webhookSecret ?? "" };
}

/**
 * The account a new direct payment of this tenant and environment is made on.
 *
 * @throws {NotConfiguredError} (424) when neither the tenant nor the service has an account there.
 */
export async function accountForNewPayment(
  deps: Pick<ProviderAContext, "gateway" | "config">,
  tenantId: string,
  environment: Environment,
): Promise<ProviderAAccount> {
  const account = (await tenantAccount(deps, { tenantId, environment })) ?? serviceAccount(deps, environment);
  if (!account) throw new NotConfiguredError(`Provider A is not configured for the ${environment} environment`);
  return account;
}

/** The account a payment was made on, or null when its secret is no longer available. */
export async function accountOfPayment(
  deps: Pick<ProviderAContext, "gateway" | "config">,
  payment: Pick<Payment, "provider_account" | "credential_version" | "tenant_id" | "environment">,
): Promise<ProviderAAccount | null> {
  if (payment.provider_account === SERVICE_ACCOUNT) return serviceAccount(deps, payment.environment);
  return tenantAccount(deps, { tenantId: payment.tenant_id, environment: payment.environment, version: payment.credential_version ?? undefined });
}

/** A client for `account` in `environment`, with the configured base URL and timeout, waiting on the context's timers. */
export function clientFor(
  deps: Pick<ProviderAContext, "config" | "logger" | "metrics" | "timers">,
  environment: Environment,
  account: ProviderAAccount,
): ProviderAClient {
  const a = deps.config.providerA;
  return createProviderAClient({
    baseUrl: environment === "live" ? a.liveUrl : a.sandboxUrl,
    secretKey: account.secretKey,
    timeoutMs: deps.config.providerTimeoutMs,
    logger: deps.logger,
    metrics: deps.metrics,
    timers: deps.timers,
  });
}
