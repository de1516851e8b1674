/**
 * A gateway for tests: a fresh database (a PGlite snapshot, or a fresh database on the real server when
 * `DATABASE_URL` is set), a job queue under a key prefix of its own (BullMQ when `REDIS_URL` is set), a
 * log captured in memory, and helpers to mint tokens and create tenants.
 */
import { ulid } from "ulid";
import { loadConfig, type Config } from "../../src/config.ts";
import { createJobQueue, createMemoryQueue } from "../../src/jobs/mod.ts";
import { createLogger } from "../../src/logger.ts";
import { createGateway, type Gateway, type GatewayParts, mintToken } from "../../src/mod.ts";
import { createTestDatabase, type TestDatabase } from "./db.ts";
import { unwatchGatewayOrigin, validateGatewayResponse, watchGatewayOrigin } from "./openapi-validation.ts";
import { deleteKeysUnderPrefix, testQueuePrefix } from "./redis.ts";
import type { VirtualTime } from "./virtual-time.ts";

/** Fixed secrets for tests only. */
export const TEST_ENV: Record<string, string> = {
  NODE_ENV: "test",
  HOST: "127.0.0.1",
  PORT: "0",
  METRICS_PORT: "0",
  JWT_SECRET: "test-secret-test-secret-test-secret-0123456789",
  ENCRYPTION_KEYS: `1:${Buffer.alloc(32, 7).toString("base64")}`,
  API_KEY_PEPPER: "test-pepper-0123456789abcdef",
  SIMULATORS: "off",
  ALLOW_PRIVATE_TARGETS: "true",
  LOG_LEVEL: "info",
};

export interface TestGateway {
  gateway: Gateway;
  /** Its database: `database.audited = false` for a test that writes rows no path of the gateway writes (see `db.ts`). */
  database: TestDatabase;
  config: Config;
  /** Every log line the gateway wrote, parsed. */
  logs: Record<string, unknown>[];
  /**
   * Calls the gateway in-process with `http://localhost` + path; the response is checked against the
   * OpenAPI document (`openapi-validation.ts`: an undocumented status, content type, header or body throws).
   */
  request(path: string, init?: RequestInit): Promise<Response>;
  adminToken(env?: "sandbox" | "live"): Promise<string>;
  tenantToken(tenantId: string, env?: "sandbox" | "live"): Promise<string>;
  /** Inserts a tenant row directly (the tenants API arrives with its own issue). */
  insertTenant(fields?: { disabled?: boolean; liveEnabled?: boolean }): Promise<string>;
  close(): Promise<void>;
}

/** What {@link startTestGateway} is built with besides its configuration. */
export interface TestGatewayParts {
  /** The gateway's clock (`deps.now`); default the real one, or `time`'s. */
  now?: () => Date;
  providers?: GatewayParts["providers"];
  /**
   * Virtual time (`virtual-time.ts`) for a file whose tests wait on the clock (a sync step, a retry's gap, a
   * lease, a sweep): the gateway's clock and its queue's timers, which the test advances. The queue is then the
   * in-process one on both passes (BullMQ's delays are Redis's); the database stays the pass's.
   */
  time?: VirtualTime;
}

/**
 * Builds a gateway on fresh storage; `env` adds or overrides configuration variables, `parts` injects a clock
 * or virtual time ({@link TestGatewayParts}) and the providers.
 */
export async function startTestGateway(env: Record<string, string> = {}, parts: TestGatewayParts = {}): Promise<TestGateway> {
  const prefix = testQueuePrefix();
  // Everything this gateway keeps in Redis (jobs, rate limits) lives under the test's own prefix.
  const config = loadConfig({ ...TEST_ENV, QUEUE_PREFIX: prefix, ...env }, parts.providers ? { providers: parts.providers } : {});
  const database = await createTestDatabase();
  const redisUrl = process.env.REDIS_URL;
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger(config, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const queue = parts.time ? createMemoryQueue({ logger, timers: parts.time.timers }) : createJobQueue({ redisUrl, prefix, logger });
  const gateway = await createGateway(config, {
    database,
    queue,
    logger,
    ...(parts.time ? { timers: parts.time.timers } : {}),
    ...(parts.now ? { now: parts.now } : {}),
    ...(parts.providers ? { providers: parts.providers } : {}),
  });

  // A gateway the test starts listening is checked too: every `fetch` to its address (openapi-validation.ts).
  const start = gateway.start.bind(gateway);
  const stop = gateway.stop.bind(gateway);
  let listening: string | undefined;
  gateway.start = async (options) => {
    const addresses = await start(options);
    if (addresses.url) watchGatewayOrigin((listening = addresses.url));
    return addresses;
  };
  gateway.stop = async () => {
    if (listening) unwatchGatewayOrigin(listening);
    await stop();
  };

  return {
    gateway,
    database,
    config,
    logs,
    async request(path, init) {
      const request = new Request(`http://localhost${path}`, init);
      const response = await gateway.fetch(request);
      await validateGatewayResponse(request.method, request.url, response);
      return response;
    },
    adminToken: (environment = "sandbox") => mintToken(config.jwt, { sub: "operator", role: "admin", environment }),
    tenantToken: (tenantId, environment = "sandbox") => mintToken(config.jwt, { sub: `tenant:${tenantId}`, tenantId, environment }),
    async insertTenant(fields = {}) {
      const id = `ten_${ulid()}`;
      await database.db
        .insertInto("tenants")
        .values({
          id,
          name: `Tenant ${id.slice(-6)}`,
          store_name: `Store ${id.slice(-6)}`,
          disabled: fields.disabled ?? false,
          live_enabled: fields.liveEnabled ?? false,
        })
        .execute();
      return id;
    },
    async close() {
      await gateway.stop();
      await queue.close();
      await database.dispose();
      if (redisUrl) await deleteKeysUnderPrefix(redisUrl, prefix);
    },
  };
}
