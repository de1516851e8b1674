/**
 * The processes a bench run measures: the gateway in production mode, with every variable set here and
 * nothing inherited from the caller's shell, and the reference servers.
 */
import { join } from "node:path";
import { tmpdir } from "node:os";
import { freePort, runToCompletion, spawnChild, waitUntilReady, type ChildServer } from "./child-process.ts";
import type { ReferenceServerName } from "../scenarios.ts";

export const REPO_ROOT = join(import.meta.dir, "..", "..");

export interface GatewayStores {
  databaseUrl: string;
  redisUrl: string;
  queuePrefix: string;
}

/**
 * How the gateway reaches the providers in the bench: the standalone simulators' URLs, the service's own
 * provider A account (created on the simulator by the harness), and the `PUBLIC_BASE_URL` the provider B
 * invoices get as their `callback_url` (the IPN sink, see `harness/provider-setup.ts`).
 */
export interface GatewayProviders {
  providerAUrl: string;
  providerASecretKey: string;
  providerAWebhookSecret: string;
  providerBUrl: string;
  publicBaseUrl: string;
}

const randomBase64 = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString("base64");

/** Only what a process needs to find its tools; the rest of the caller's environment stays out. */
function baseEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/local/bin:/usr/bin:/bin", HOME: process.env.HOME ?? tmpdir() };
}

/**
 * The gateway's complete environment (contract §10), production mode. Generated secrets; its own database
 * and Redis prefix; simulators off; LOG_LEVEL=warn, because the info-level request log line would make
 * the bench measure pino rather than the gateway.
 */
export function gatewayEnv(stores: GatewayStores, port: number, metricsPort: number, providers?: GatewayProviders): Record<string, string> {
  const env: Record<string, string> = {
    ...baseEnv(),
    NODE_ENV: "production",
    PORT: String(port),
    HOST: "127.0.0.1",
    PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
    DATABASE_URL: stores.databaseUrl,
    // Production ignores it (no PGlite, no generated secrets); set to a scratch place all the same.
    DATA_DIR: join(tmpdir(), `passerelle-bench-data-${port}`),
    REDIS_URL: stores.redisUrl,
    QUEUE_PREFIX: stores.queuePrefix,
    JWT_SECRET: randomBase64(48),
    ENCRYPTION_KEYS: `1:${randomBase64(32)}`,
    API_KEY_PEPPER: randomBase64(32),
    SIMULATORS: "off",
    // The fan-out scenario's receiver listens on loopback; nothing else the bench sends is outbound.
    ALLOW_PRIVATE_TARGETS: "true",
    // Far above any rate reached here: the limiter's cost is measured, its 429s are not.
    RATE_LIMIT_RPS: "1000000",
    RATE_LIMIT_BURST: "1000000",
    METRICS_PORT: String(metricsPort),
    METRICS_HOST: "127.0.0.1",
    LOG_LEVEL: "warn",
    // The deployment setting README.md recommends ("Memory"): JavaScriptCore sizes its heap's growth from
    // the machine's RAM (24 GiB here), not from what the process may use; with a 512 MiB budget a one-round
    // run stays under 190 MB (225 MB without), at no measured cost in throughput.
    BUN_JSC_forceRAMSize: String(512 * 1024 * 1024),
  };
  if (providers) {
    // Provider A: the service's own sandbox account; provider B: each tenant's own credentials (set through the API).
    env.PROVIDER_A_SANDBOX_URL = providers.providerAUrl;
    env.PROVIDER_A_SANDBOX_SECRET_KEY = providers.providerASecretKey;
    env.PROVIDER_A_SANDBOX_WEBHOOK_SECRET = providers.providerAWebhookSecret;
    env.PROVIDER_B_SANDBOX_URL = `${providers.providerBUrl}/sandbox-api/v1`;
    // Only the checkout's callback_url is built from it (SIMULATORS=off): see GatewayProviders.
    env.PUBLIC_BASE_URL = providers.publicBaseUrl;
  }
  return env;
}

/** A server process just spawned: register its stop, then await `ready` (ms until it answered 200). */
export interface LaunchedServer {
  child: ChildServer;
  baseUrl: string;
  ready: Promise<number>;
}

/** Spawns `bun src/main.ts serve` (HTTP and workers, as `bun run start` does); `ready` waits for `/health/ready`. */
export async function launchGateway(
  stores: GatewayStores,
  startTimeoutS: number,
  providers?: (port: number) => GatewayProviders,
  /** Where to write a CPU profile of the gateway (`bun --cpu-prof --cpu-prof-md`), written when it stops. */
  cpuProfile?: { dir: string; name: string; intervalUs?: number | undefined },
): Promise<LaunchedServer & { env: Record<string, string> }> {
  const port = await freePort();
  const env = gatewayEnv(stores, port, await freePort(), providers?.(port));
  const profiling = cpuProfile
    ? [
        "--cpu-prof",
        "--cpu-prof-md",
        `--cpu-prof-dir=${cpuProfile.dir}`,
        `--cpu-prof-name=${cpuProfile.name}`,
        ...(cpuProfile.intervalUs ? [`--cpu-prof-interval=${cpuProfile.intervalUs}`] : []),
      ]
    : [];
  const child = spawnChild("the gateway (bun src/main.ts serve)", [process.execPath, ...profiling, "src/main.ts", "serve"], env, REPO_ROOT);
  const baseUrl = `http://127.0.0.1:${port}`;
  const ready = waitUntilReady(child, `${baseUrl}/health/ready`, startTimeoutS * 1000);
  ready.catch(() => {}); // the caller awaits it after registering the child's cleanup
  return { child, baseUrl, ready, env };
}

/** `bun src/main.ts token --admin` under the gateway's environment (so with its JWT_SECRET). */
export async function mintAdminToken(env: Record<string, string>): Promise<string> {
  const out = await runToCompletion([process.execPath, "src/main.ts", "token", "--admin", "--ttl", "86400"], env, REPO_ROOT);
  const token = out.trim();
  if (!/^[\w-]+\.[\w-]+\.[\w-]+$/.test(token)) throw new Error(`bench: 'token --admin' printed something that is not a JWT: ${token.slice(0, 200)}`);
  return token;
}

/** How each reference server is started: a script in bench/reference-servers/ given its port, and a path that answers 200 once it is up. */
const REFERENCE_SERVERS: Record<ReferenceServerName, { script: string; readyPath: string }> = {
  "elysia-constant": { script: join(import.meta.dir, "..", "reference-servers", "elysia-constant.ts"), readyPath: "/" },
  "webhook-receiver": { script: join(import.meta.dir, "..", "reference-servers", "webhook-receiver.ts"), readyPath: "/" },
  "provider-a-proxy": { script: join(import.meta.dir, "..", "reference-servers", "provider-a-proxy.ts"), readyPath: "/" },
};

/** Spawns the reference server `name` in its own process (with `extraEnv`, its settings); `ready` waits until it answers. */
export async function launchReferenceServer(name: ReferenceServerName, startTimeoutS: number, extraEnv: Record<string, string> = {}): Promise<LaunchedServer> {
  const { script, readyPath } = REFERENCE_SERVERS[name];
  const port = await freePort();
  const env = { ...baseEnv(), NODE_ENV: "production", ...extraEnv };
  const child = spawnChild(`the reference server '${name}'`, [process.execPath, script, String(port)], env, REPO_ROOT);
  const baseUrl = `http://127.0.0.1:${port}`;
  const ready = waitUntilReady(child, `${baseUrl}${readyPath}`, startTimeoutS * 1000);
  ready.catch(() => {});
  return { child, baseUrl, ready };
}

/** The `passerelle sandbox` process: both provider simulators, each on its own port, serving from `/`. */
export interface LaunchedSimulators extends LaunchedServer {
  providerAUrl: string;
  providerBUrl: string;
}

/**
 * Spawns `bun src/main.ts sandbox --port-a … --port-b … --approve-delay-ms …` (production mode, nothing
 * inherited), so the simulators never share the gateway's process; `ready` waits for both `/_sim/health`.
 */
export async function launchSimulators(startTimeoutS: number, approveDelayMs: number): Promise<LaunchedSimulators> {
  const [portA, portB] = [await freePort(), await freePort()];
  const env = { ...baseEnv(), NODE_ENV: "production", HOST: "127.0.0.1" };
  const cmd = [process.execPath, "src/main.ts", "sandbox", "--port-a", String(portA), "--port-b", String(portB), "--approve-delay-ms", String(approveDelayMs)];
  const child = spawnChild("the simulators (bun src/main.ts sandbox)", cmd, env, REPO_ROOT);
  const providerAUrl = `http://127.0.0.1:${portA}`;
  const providerBUrl = `http://127.0.0.1:${portB}`;
  const ready = (async () => {
    const started = performance.now();
    await waitUntilReady(child, `${providerAUrl}/_sim/health`, startTimeoutS * 1000);
    await waitUntilReady(child, `${providerBUrl}/_sim/health`, startTimeoutS * 1000);
    return performance.now() - started;
  })();
  ready.catch(() => {});
  return { child, baseUrl: providerAUrl, ready, providerAUrl, providerBUrl };
}
