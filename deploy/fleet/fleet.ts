#!/usr/bin/env bun
/**
 * `bun run fleet`: the gateway as a fleet, on one machine, on loopback ports — HAProxy in front of N API
 * nodes (`passerelle serve --no-workers`), M `passerelle worker`s, PgBouncer in transaction pooling mode in
 * front of PostgreSQL, Redis (a Redis Cluster of three masters with `--redis-cluster`), and one provider
 * sandbox (`passerelle sandbox`) that every process shares. It prints the balancer's URL and an admin token,
 * runs until SIGINT or SIGTERM, and then stops everything it started and drops its database.
 *
 * How to run the same on real machines: docs/fleet.md.
 *
 * @example
 * ```sh
 * bun run fleet                              # 2 API nodes, 2 workers
 * bun run fleet -- --api 3 --workers 2 --redis-cluster
 * ```
 *
 * @module
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import postgres from "postgres";
import {
  freePort,
  type GatewayProcess,
  type Haproxy,
  type Part,
  type PgBouncer,
  REPO_ROOT,
  startGatewayProcess,
  startHaproxy,
  startPgBouncer,
} from "./processes.ts";
import { type Postgres, type RedisCluster, type RedisNode, startPostgres, startRedisCluster, startRedisServer } from "./stores.ts";

/** What a fleet is started with. */
export interface FleetOptions {
  /** API nodes behind HAProxy. Default 2. */
  api?: number;
  /** Worker processes. Default 2. */
  workers?: number;
  /** PostgreSQL server the fleet's database is created on (an admin URL). Default `postgres://postgres@127.0.0.1:5432/postgres`. */
  postgresUrl?: string;
  /** Start a PostgreSQL of the fleet's own (`stores.ts`) instead of using `postgresUrl`'s: one a fault may restart. */
  ownPostgres?: boolean;
  /** Redis for the jobs and the rate limiter (ignored with `redisCluster`). Default `redis://127.0.0.1:6379`. */
  redisUrl?: string;
  /** Start a Redis server of the fleet's own instead of using `redisUrl`'s (ignored with `redisCluster`). */
  ownRedis?: boolean;
  /** Start a Redis Cluster of three masters and use it instead of `redisUrl`. */
  redisCluster?: boolean;
  /** Extra environment for every gateway process (e.g. `RATE_LIMIT_RPS`). */
  env?: Record<string, string>;
  /** Extra environment for one gateway process, by its name (`api1`…, `worker1`…): the campaign's clock files. */
  processEnv?: (name: string) => Record<string, string>;
  /** The sandbox's approval delay for provider A payments (ms). Default 300. */
  approveDelayMs?: number;
  /** Told each step as it happens. */
  log?: (line: string) => void;
  /**
   * The address the gateway's processes reach provider A's sandbox at, given the sandbox's own (default: that
   * one). A failover drill puts a proxy it can cut in between (`scripts/drill.ts`).
   */
  providerAAddress?: (sandboxUrl: string) => Promise<string>;
}

/** A running fleet. */
export interface Fleet {
  /** The balancer's URL: the gateway's public address. */
  url: string;
  /** The environment every gateway process runs with (its secrets included: a test mints tokens with it). */
  env: Record<string, string>;
  /** The sandbox's provider A and provider B URLs. */
  sandbox: { providerA: string; providerB: string };
  api: GatewayProcess[];
  /** Each API node's own port, in the order of {@link api}. */
  apiPorts: number[];
  workers: GatewayProcess[];
  /** Each worker's metrics port, in the order of {@link workers}. */
  workerMetricsPorts: number[];
  pgbouncer: PgBouncer;
  haproxy: Haproxy;
  redisCluster?: RedisCluster;
  /** The fleet's own PostgreSQL, with `ownPostgres`. */
  postgres?: Postgres;
  /** The fleet's own Redis server, with `ownRedis`. */
  redis?: RedisNode;
  /** The fleet's database, and an admin URL of the server it is on (not through PgBouncer). */
  database: { name: string; serverUrl: string };
  /** Where every part logs (`<name>.log`). */
  dir: string;
  /** Stops every part (API nodes first, the stores last), drops the database and removes `dir`. */
  stop(): Promise<void>;
}

const random = (bytes: number) => randomBytes(bytes).toString("base64");

async function json<T>(response: Response, what: string): Promise<T> {
  const text = await response.text();
  if (!response.ok) throw new Error(`${what} answered ${response.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/**
 * Starts a fleet; on any failure, stops what was started and rethrows.
 *
 * @example
 * ```ts
 * const fleet = await startFleet({ api: 2, workers: 2 });
 * await fetch(`${fleet.url}/health/ready`);
 * await fleet.stop();
 * ```
 */
export async function startFleet(options: FleetOptions = {}): Promise<Fleet> {
  const log = options.log ?? (() => {});
  const dir = mkdtempSync(join(tmpdir(), "passerelle-fleet-"));
  const started: Part[] = [];
  let postgresUrl = options.postgresUrl ?? "postgres://postgres@127.0.0.1:5432/postgres";
  let admin: ReturnType<typeof postgres> | undefined;
  const database = `passerelle_fleet_${randomBytes(5).toString("hex")}`;
  let databaseCreated = false;
  let ownPostgres: Postgres | undefined;

  const stop = async () => {
    // The database goes before its server (a server of the fleet's own goes with everything else).
    for (const part of started.reverse()) if (part !== ownPostgres) await part.stop();
    if (databaseCreated && !ownPostgres) await admin?.unsafe(`drop database if exists "${database}" with (force)`).catch(() => {});
    await admin?.end().catch(() => {});
    await ownPostgres?.stop();
    rmSync(dir, { recursive: true, force: true });
  };

  try {
    if (options.ownPostgres) {
      ownPostgres = await startPostgres({ dir, port: await freePort() });
      started.push(ownPostgres);
      postgresUrl = ownPostgres.adminUrl;
      log(`PostgreSQL of the fleet's own on ${ownPostgres.port}`);
    }
    admin = postgres(postgresUrl, { max: 1, onnotice: () => {} });
    // The fleet's database. Through a pooler the session settings are the database's own (docs/fleet.md).
    await admin.unsafe(`create database "${database}"`);
    databaseCreated = true;
    await admin.unsafe(`alter database "${database}" set statement_timeout = 30000`);
    await admin.unsafe(`alter database "${database}" set idle_in_transaction_session_timeout = 60000`);
    const upstream = new URL(postgresUrl);
    const pgbouncer = await startPgBouncer({
      dir,
      port: await freePort(),
      upstream: { host: upstream.hostname, port: Number(upstream.port || 5432), user: decodeURIComponent(upstream.username || "postgres") },
    });
    started.push(pgbouncer);
    log(`PgBouncer (transaction mode) on ${pgbouncer.port}, database ${database}`);

    let redisCluster: RedisCluster | undefined;
    let ownRedis: RedisNode | undefined;
    if (options.redisCluster) {
      redisCluster = await startRedisCluster({ dir, ports: [await freePort(), await freePort(), await freePort()] });
      started.push(redisCluster);
      log(`Redis Cluster: ${redisCluster.nodes.join(", ")}`);
    } else if (options.ownRedis) {
      ownRedis = await startRedisServer({ dir, port: await freePort() });
      started.push(ownRedis);
      log(`Redis of the fleet's own on ${ownRedis.port}`);
    }

    // One sandbox for the whole fleet: every process pays on the same simulated accounts.
    const sandboxPorts = { a: await freePort(), b: await freePort() };
    const sandbox = await startGatewayProcess({
      dir,
      name: "sandbox",
      args: ["sandbox", "--port-a", String(sandboxPorts.a), "--port-b", String(sandboxPorts.b), "--approve-delay-ms", String(options.approveDelayMs ?? 300)],
      env: { NODE_ENV: "production", LOG_LEVEL: "warn" },
      ready: { url: `http://127.0.0.1:${sandboxPorts.b}/_sim/health` },
    });
    started.push(sandbox);
    const providerA = `http://127.0.0.1:${sandboxPorts.a}`;
    const providerB = `http://127.0.0.1:${sandboxPorts.b}`;
    const serviceAccount = await json<{ secretKey: string; webhookSecret: string }>(
      await fetch(`${providerA}/_sim/accounts`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ environment: "sandbox" }),
      }),
      "the sandbox's POST /_sim/accounts",
    );
    log(`sandbox: provider A ${providerA}, provider B ${providerB}`);

    const haproxyPort = await freePort();
    const url = `http://127.0.0.1:${haproxyPort}`;
    const env: Record<string, string> = {
      NODE_ENV: "production",
      HOST: "127.0.0.1",
      PUBLIC_BASE_URL: url,
      DATABASE_URL: pgbouncer.urlFor(database),
      ...(redisCluster
        ? { REDIS_CLUSTER_NODES: redisCluster.nodes.join(",") }
        : { REDIS_URL: ownRedis ? `redis://${ownRedis.address}` : (options.redisUrl ?? "redis://127.0.0.1:6379") }),
      // Hash-tagged on a Redis Cluster: every key of the fleet lands in one slot (BullMQ's scripts need it).
      QUEUE_PREFIX: redisCluster ? `{passerelle_fleet_${randomBytes(4).toString("hex")}}` : `passerelle_fleet_${randomBytes(4).toString("hex")}`,
      JWT_SECRET: random(48),
      ENCRYPTION_KEYS: `1:${random(32)}`,
      API_KEY_PEPPER: random(32),
      DATA_DIR: join(dir, "data"),
      SIMULATORS: "off",
      PROVIDER_A_SANDBOX_URL: options.providerAAddress ? await options.providerAAddress(providerA) : providerA,
      PROVIDER_A_SANDBOX_SECRET_KEY: serviceAccount.secretKey,
      PROVIDER_A_SANDBOX_WEBHOOK_SECRET: serviceAccount.webhookSecret,
      PROVIDER_B_SANDBOX_URL: `${providerB}/sandbox-api/v1`,
      // Tenants' webhook receivers may be on loopback here.
      ALLOW_PRIVATE_TARGETS: "true",
      // HAProxy, on loopback, names each client in X-Forwarded-For (haproxy.cfg): the per-address limits count clients, not the balancer.
      TRUSTED_PROXIES: "loopback",
      LOG_LEVEL: "info",
      ...options.env,
    };
    // Provider A's webhooks for the service's account reach the fleet through the balancer.
    await json(
      await fetch(`${providerA}/_sim/accounts/${encodeURIComponent(serviceAccount.secretKey)}/webhook`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ url: `${url}/providerA/webhook/sandbox` }),
      }),
      "the sandbox's PUT /_sim/accounts/{secretKey}/webhook",
    );

    // The schema once, before any node starts (each would otherwise queue on the migration lock).
    const migrate = Bun.spawnSync([process.execPath, join(REPO_ROOT, "src", "main.ts"), "migrate"], {
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env },
      stdout: "pipe",
      stderr: "pipe",
    });
    if (migrate.exitCode !== 0) throw new Error(`passerelle migrate failed: ${migrate.stdout.toString()}${migrate.stderr.toString()}`);

    const api: GatewayProcess[] = [];
    const apiPorts: number[] = [];
    for (let i = 1; i <= (options.api ?? 2); i++) {
      const port = await freePort();
      apiPorts.push(port);
      const node = await startGatewayProcess({
        dir,
        name: `api${i}`,
        args: ["serve", "--no-workers"],
        env: { ...env, PORT: String(port), METRICS_PORT: String(await freePort()), METRICS_HOST: "127.0.0.1", ...options.processEnv?.(`api${i}`) },
        ready: { url: `http://127.0.0.1:${port}/health/ready` },
      });
      api.push(node);
      started.push(node);
      log(`API node ${i} on ${port}`);
    }
    const workers: GatewayProcess[] = [];
    const workerMetricsPorts: number[] = [];
    for (let i = 1; i <= (options.workers ?? 2); i++) {
      const metricsPort = await freePort();
      workerMetricsPorts.push(metricsPort);
      const worker = await startGatewayProcess({
        dir,
        name: `worker${i}`,
        args: ["worker"],
        // A worker serves its metrics only: it is up once they answer.
        env: { ...env, METRICS_PORT: String(metricsPort), METRICS_HOST: "127.0.0.1", ...options.processEnv?.(`worker${i}`) },
        ready: { url: `http://127.0.0.1:${metricsPort}/metrics` },
      });
      workers.push(worker);
      started.push(worker);
      log(`worker ${i} started`);
    }
    const haproxy = await startHaproxy({ dir, port: haproxyPort, backends: apiPorts });
    started.push(haproxy);
    log(`HAProxy on ${url}`);
    writeFileSync(
      join(dir, "fleet.env"),
      Object.entries(env)
        .map(([name, value]) => `${name}=${value}`)
        .join("\n"),
    );
    return {
      url,
      env,
      sandbox: { providerA, providerB },
      api,
      apiPorts,
      workers,
      workerMetricsPorts,
      pgbouncer,
      haproxy,
      ...(redisCluster && { redisCluster }),
      ...(ownPostgres && { postgres: ownPostgres }),
      ...(ownRedis && { redis: ownRedis }),
      database: { name: database, serverUrl: postgresUrl },
      dir,
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** `bun run fleet`: starts a fleet, prints where it is, and stops it on SIGINT or SIGTERM. */
async function main(): Promise<void> {
  const { values } = parseArgs({
    args: Bun.argv.slice(2),
    options: {
      api: { type: "string", default: "2" },
      workers: { type: "string", default: "2" },
      "redis-cluster": { type: "boolean", default: false },
      "own-postgres": { type: "boolean", default: false },
      "own-redis": { type: "boolean", default: false },
      "postgres-url": { type: "string" },
      "redis-url": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
  });
  if (values.help) {
    process.stdout.write(`usage: bun run fleet [-- --api <n>] [--workers <n>] [--redis-cluster] [--postgres-url <url> | --own-postgres] [--redis-url <url> | --own-redis]
  HAProxy, <n> API nodes (serve --no-workers), <n> workers, PgBouncer (transaction mode) in front of PostgreSQL,
  Redis (or a Redis Cluster of three masters) and one provider sandbox, on loopback ports, until Ctrl-C.
  --own-postgres, --own-redis: a PostgreSQL (initdb, pg_ctl) or Redis server of the fleet's own, in its folder.
`);
    return;
  }
  const count = (value: string, name: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > 16) throw new Error(`--${name} must be a whole number from 1 to 16, not ${value}`);
    return n;
  };
  const fleet = await startFleet({
    api: count(values.api, "api"),
    workers: count(values.workers, "workers"),
    redisCluster: values["redis-cluster"],
    ownPostgres: values["own-postgres"],
    ownRedis: values["own-redis"],
    ...(values["postgres-url"] ? { postgresUrl: values["postgres-url"] } : {}),
    ...(values["redis-url"] ? { redisUrl: values["redis-url"] } : {}),
    log: (line) => process.stdout.write(`fleet: ${line}\n`),
  });
  const token = Bun.spawnSync([process.execPath, join(REPO_ROOT, "src", "main.ts"), "token", "--admin", "--ttl", "86400"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...fleet.env },
    stdout: "pipe",
  });
  process.stdout.write(`
The fleet answers on ${fleet.url} (its processes log under ${fleet.dir}).
An admin token for a day:
  export ADMIN=${token.stdout.toString().trim()}
  curl -s ${fleet.url}/health/ready
Ctrl-C stops it all.
`);
  let stopping = false;
  const shutdown = async () => {
    if (stopping) return;
    stopping = true;
    process.stdout.write("fleet: stopping\n");
    await fleet.stop();
    process.exit(0);
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}

if (import.meta.main) await main();
