/**
 * A rig for the provider B tests over real HTTP: a standalone provider B simulator on its own port, and
 * gateways on a database that can outlive them (a restart), each served on a port the test can stop and
 * start again (the gateway "down"), with `PUBLIC_BASE_URL` pointing at that port.
 */
import { expect } from "bun:test";
import { loadConfig, type Config } from "../../src/config.ts";
import { createJobQueue, createMemoryQueue } from "../../src/jobs/mod.ts";
import type { JobQueue } from "../../src/jobs/queue.ts";
import type { WorkerOptions } from "../../src/workers/mod.ts";
import { createLogger } from "../../src/logger.ts";
import { createGateway, mintToken, type Gateway } from "../../src/mod.ts";
import { createProviderBSimulator, type ProviderBSimulator } from "../../src/providers/providerB/simulator/mod.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";
import { TEST_ENV } from "./gateway.ts";
import { unwatchGatewayOrigin, watchGatewayOrigin } from "./openapi-validation.ts";
import { deleteKeysUnderPrefix, testQueuePrefix } from "./redis.ts";
import { freePort } from "./ports.ts";
import type { VirtualTime } from "./virtual-time.ts";

export interface SimulatorServer {
  simulator: ProviderBSimulator;
  url: string;
  /** A merchant account's keys. */
  account(): Promise<{ masterKey: string; privateKey: string; publicKey: string; token: string }>;
  /** Presses a hosted page button (JSON call). */
  press(token: string, verb: "pay" | "fail" | "cancel", body?: Record<string, unknown>): Promise<Response>;
  stop(): Promise<void>;
}

export interface SimulatorOptions {
  ipnRetryDelaysMs?: number[];
  /** Sees every request and its answer: `next` asks the simulator. Default: straight through. */
  around?(request: Request, next: (request: Request) => Promise<Response>): Promise<Response>;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<SimulatorServer> {
  const simulator = createProviderBSimulator({ ipnRetryDelaysMs: options.ipnRetryDelaysMs ?? [200, 400, 800, 1600, 3200] });
  const next = async (request: Request): Promise<Response> => simulator.fetch(request);
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => (options.around ? options.around(request, next) : simulator.fetch(request)) });
  const url = server.url.toString().replace(/\/$/, "");
  return {
    simulator,
    url,
    account: async () => (await (await fetch(`${url}/_sim/accounts`, { method: "POST" })).json()) as never,
    press: (token, verb, body = {}) =>
      fetch(`${url}/_sim/invoices/${token}/${verb}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) }),
    async stop() {
      simulator.close();
      await server.stop(true);
    },
  };
}

export interface RigGateway {
  gateway: Gateway;
  config: Config;
  logs: Record<string, unknown>[];
  /** `PUBLIC_BASE_URL`: where the gateway is served (when it is up). */
  url: string;
  /** Serves the gateway on its port (again). */
  up(): void;
  /** Stops serving: connections to its port are refused. */
  down(): Promise<void>;
  adminToken(): Promise<string>;
  tenantToken(tenantId: string): Promise<string>;
  /** JSON call as a tenant (x-tenant-id sent). */
  call(method: string, path: string, tenantId: string, body?: unknown, headers?: Record<string, string>): Promise<Response>;
  /** Creates a tenant with provider B sandbox credentials of a fresh simulator account. */
  tenantWithAccount(sim: SimulatorServer): Promise<{ tenantId: string; keys: Awaited<ReturnType<SimulatorServer["account"]>> }>;
  close(): Promise<void>;
}

export interface RigOptions {
  sim: SimulatorServer;
  database: TestDatabase;
  /** Start the workers. Default true. */
  workers?: boolean;
  workerOptions?: WorkerOptions;
  /** Send IPNs to this base URL instead of the gateway's (a dead port: the IPN never arrives). */
  publicBaseUrl?: string;
  prefix?: string;
  /** Default info (the tests read the log lines). */
  logLevel?: string;
  /** The gateway's clock (`deps.now`); default the real one, or `time`'s. */
  now?: () => Date;
  /**
   * Virtual time (`virtual-time.ts`): the gateway's clock and its queue's timers, which the test advances. The
   * queue is then the in-process one on both passes (BullMQ's delays are Redis's).
   */
  time?: VirtualTime;
  /** More configuration variables (e.g. `RENEWAL_RETRY_SCHEDULE`). */
  env?: Record<string, string>;
}

export async function startRigGateway(options: RigOptions): Promise<RigGateway> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const prefix = options.prefix ?? testQueuePrefix();
  const config = loadConfig({
    ...TEST_ENV,
    QUEUE_PREFIX: prefix,
    PUBLIC_BASE_URL: options.publicBaseUrl ?? url,
    PROVIDER_B_SANDBOX_URL: `${options.sim.url}/sandbox-api/v1`,
    PROVIDER_B_LIVE_URL: `${options.sim.url}/api/v1`,
    PROVIDER_TIMEOUT_MS: "5000",
    LOG_LEVEL: options.logLevel ?? "info",
    ...options.env,
  });
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger(config, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const queue: JobQueue = options.time
    ? createMemoryQueue({ logger, timers: options.time.timers })
    : createJobQueue({ redisUrl: process.env.REDIS_URL, prefix, logger });
  const gateway = await createGateway(config, {
    database: options.database,
    queue,
    logger,
    workers: options.workerOptions,
    ...(options.time ? { timers: options.time.timers } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  if (options.workers ?? true) await gateway.start({ http: false, workers: true });
  let server: ReturnType<typeof Bun.serve> | undefined;
  const up = () => {
    server ??= Bun.serve({ hostname: "127.0.0.1", port, fetch: gateway.fetch });
    watchGatewayOrigin(url);
  };
  up();
  const rig: RigGateway = {
    gateway,
    config,
    logs,
    url,
    up,
    async down() {
      await server?.stop(true);
      server = undefined;
      unwatchGatewayOrigin(url);
    },
    adminToken: () => mintToken(config.jwt, { sub: "operator", role: "admin", environment: "sandbox" }),
    tenantToken: (tenantId) => mintToken(config.jwt, { sub: `tenant:${tenantId}`, tenantId, environment: "sandbox" }),
    async call(method, path, tenantId, body, headers = {}) {
      const token = await rig.tenantToken(tenantId);
      return fetch(`${url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          "x-tenant-id": tenantId,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
          ...headers,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    },
    async tenantWithAccount(sim) {
      const created = await fetch(`${url}/tenants`, {
        method: "POST",
        headers: { authorization: `Bearer ${await rig.adminToken()}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "Boutique", storeName: "Boutique Dakar" }),
      });
      const { tenant } = (await created.json()) as { tenant: { id: string } };
      const keys = await sim.account();
      const put = await rig.call("PUT", `/tenants/${tenant.id}/credentials/providerB`, tenant.id, { ...keys, environment: "sandbox" });
      if (put.status !== 200) throw new Error(`credentials: ${put.status} ${await put.text()}`);
      return { tenantId: tenant.id, keys };
    },
    async close() {
      await rig.down();
      await gateway.stop();
      await queue.close();
      if (process.env.REDIS_URL && !options.prefix) await deleteKeysUnderPrefix(process.env.REDIS_URL, prefix);
    },
  };
  return rig;
}

/** `POST /webhooks` for `tenantId` at `url`, expecting 200; answers the endpoint's signing secret. */
export async function addWebhookEndpoint(gw: RigGateway, tenantId: string, url: string): Promise<string> {
  const response = await gw.call("POST", "/webhooks", tenantId, { url });
  expect(response.status).toBe(200);
  return ((await response.json()) as { secret: string }).secret;
}

export { createTestDatabase };
