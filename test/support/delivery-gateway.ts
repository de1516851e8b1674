/**
 * Gateways for the delivery tests: like `startTestGateway`, plus what those tests steer — worker
 * settings (a sweeper every few hundred milliseconds), a clock they can move, workers started or not,
 * and a database shared by several gateways (several workers) or reachable by URL from a child process.
 */
import { throughPooler } from "../../src/db/open-postgres.ts";
import { randomBytes } from "node:crypto";
import postgres from "postgres";
import { loadConfig, type Config } from "../../src/config.ts";
import { openDatabase, type DatabaseHandle } from "../../src/db/connect.ts";
import { migrateToLatest } from "../../src/db/migrate.ts";
import type { Environment, EventType, JsonValue } from "../../src/db/schema.ts";
import { createJobQueue, createMemoryQueue } from "../../src/jobs/mod.ts";
import type { WorkerOptions } from "../../src/workers/mod.ts";
import { createLogger } from "../../src/logger.ts";
import { createGateway, type Gateway } from "../../src/mod.ts";
import type { Deps } from "../../src/services/deps.ts";
import { recordEvent } from "../../src/services/events/record-event.ts";
import { createTenant } from "../../src/services/tenants/manage-tenants.ts";
import { createTestDatabase, expectInvariantsHold, type TestDatabase } from "./db.ts";
import { TEST_ENV } from "./gateway.ts";
import { deleteKeysUnderPrefix, testQueuePrefix } from "./redis.ts";
import type { VirtualTime } from "./virtual-time.ts";

export interface DeliveryGateway {
  gateway: Gateway;
  deps: Deps;
  config: Config;
  database: DatabaseHandle;
  /** The queue key prefix (BullMQ) this gateway uses. */
  prefix: string;
  logs: Record<string, unknown>[];
  /** Creates a tenant through the service: its id and its callback signing secret. */
  createTenant(): Promise<{ tenantId: string; callbackSecret: string }>;
  /** Records an event in its own transaction and returns its delivery ids (not enqueued). */
  record(input: {
    tenantId: string;
    environment?: Environment;
    type?: EventType;
    data?: Record<string, JsonValue>;
    directTargetUrl?: string;
    paymentId?: string;
    at?: Date;
  }): Promise<{ eventId: string; deliveryIds: string[] }>;
  /** Starts the workers (HTTP stays off). */
  startWorkers(): Promise<void>;
  close(): Promise<void>;
}

export interface DeliveryGatewayOptions {
  env?: Record<string, string>;
  workers?: WorkerOptions;
  now?: () => Date;
  /**
   * Virtual time (`virtual-time.ts`): the gateway's clock (unless `now` says otherwise) and its queue's timers
   * (retry gaps, the sweeper's interval), which the test advances. The queue is then the in-process one on both
   * passes (BullMQ's delays are Redis's), so it cannot be shared with another gateway through `prefix`.
   */
  time?: VirtualTime;
  /** Start the workers at once. Default true. */
  start?: boolean;
  /** Share this database (another gateway's); it is not closed by this one. */
  database?: DatabaseHandle;
  /** Share this queue prefix (another gateway's); its keys are not deleted by this one. */
  prefix?: string;
  /** Use this PostgreSQL URL (a database a child process reaches too); it is not dropped by this one. */
  databaseUrl?: string;
}

/** Builds a gateway with the delivery tests' settings. */
export async function startDeliveryGateway(options: DeliveryGatewayOptions = {}): Promise<DeliveryGateway> {
  const ownsPrefix = options.prefix === undefined;
  const prefix = options.prefix ?? testQueuePrefix();
  const config = loadConfig({ ...TEST_ENV, QUEUE_PREFIX: prefix, ...options.env });
  let owned: TestDatabase | undefined;
  let database: DatabaseHandle;
  if (options.database) database = options.database;
  else if (options.databaseUrl) {
    database = await openDatabase({ driver: "postgres", url: options.databaseUrl, max: 5 });
  } else {
    owned = await createTestDatabase();
    database = owned;
  }
  const redisUrl = process.env.REDIS_URL;
  const logs: Record<string, unknown>[] = [];
  const logger = createLogger(config, { write: (line: string) => void logs.push(JSON.parse(line)) });
  const queue = options.time ? createMemoryQueue({ logger, timers: options.time.timers }) : createJobQueue({ redisUrl, prefix, logger });
  const gateway = await createGateway(config, {
    database,
    queue,
    logger,
    workers: options.workers,
    ...(options.time ? { timers: options.time.timers } : {}),
    ...(options.now ? { now: options.now } : {}),
  });
  const deps = gateway.deps;
  if (options.start ?? true) await gateway.start({ http: false, workers: true });

  return {
    gateway,
    deps,
    config,
    database,
    prefix,
    logs,
    async createTenant() {
      const created = await createTenant(deps, { name: `Tenant ${randomBytes(3).toString("hex")}` });
      return { tenantId: created.tenant.id, callbackSecret: created.callbackSecret };
    },
    record(input) {
      return deps.db.transaction().execute((tx) =>
        recordEvent(tx, input.at ?? deps.now(), {
          tenantId: input.tenantId,
          environment: input.environment ?? "sandbox",
          type: input.type ?? "payment.completed",
          data: input.data ?? { paymentId: "pay_test", status: "completed", amount: 5000, currency: "XOF" },
          ...(input.directTargetUrl ? { directTargetUrl: input.directTargetUrl } : {}),
          ...(input.paymentId ? { paymentId: input.paymentId } : {}),
        }),
      );
    },
    async startWorkers() {
      await gateway.start({ http: false, workers: true });
    },
    async close() {
      await gateway.stop();
      await queue.close();
      if (owned) await owned.dispose();
      else if (options.databaseUrl) await database.close();
      if (redisUrl && ownsPrefix) await deleteKeysUnderPrefix(redisUrl, prefix);
    },
  };
}

/**
 * A fresh, migrated database on the PostgreSQL server at `serverUrl`, reachable by URL (a child process
 * opens it too); `dispose()` checks the money invariants on what the test left (`expectInvariantsHold`), then drops it.
 */
export async function createNamedServerDatabase(serverUrl: string): Promise<{ url: string; dispose(): Promise<void>; audited: boolean }> {
  const name = `passerelle_test_${randomBytes(6).toString("hex")}`;
  const admin = () => postgres(throughPooler(serverUrl).url, { max: 1, onnotice: () => {} });
  const create = admin();
  try {
    await create.unsafe(`create database "${name}"`);
  } finally {
    await create.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  const handle = await openDatabase({ driver: "postgres", url: url.toString(), max: 1 });
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
  const named = {
    url: url.toString(),
    /** Set false by a test that breaks an invariant on purpose. */
    audited: true,
    async dispose() {
      const audited = named.audited ? await openDatabase({ driver: "postgres", url: url.toString(), max: 1 }).catch(() => undefined) : undefined;
      try {
        if (audited) await expectInvariantsHold(audited.db);
      } finally {
        await audited?.close();
      }
      const drop = admin();
      try {
        await drop.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await drop.end();
      }
    },
  };
  return named;
}
