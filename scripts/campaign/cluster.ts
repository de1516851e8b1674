/**
 * The processes a campaign runs and strikes, on the real servers: the provider simulators standalone
 * (`passerelle sandbox`: the providers, never struck), API nodes (`passerelle serve --no-workers`) and workers
 * (`passerelle worker`), all on a database and a Redis key prefix of the campaign's own (created, then dropped).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import postgres from "postgres";
import { openDatabase } from "../../src/db/connect.ts";
import { migrateToLatest } from "../../src/db/migrate.ts";
import { freePort } from "../../test/support/ports.ts";

const ROOT = join(import.meta.dir, "..", "..");

type Child = Bun.Subprocess<"ignore", "pipe", "pipe">;

/** One gateway process the campaign may kill and start again, or whose clock it may move. */
export interface Node {
  role: "api" | "worker";
  index: number;
  /** The process's `TEST_CLOCK_OFFSET_FILE`: milliseconds its clock runs ahead (`src/offset-clock.ts`). */
  clockFile: string;
  restarts: number;
  /** The kill-and-restart under way: a second fault on the node waits for it (one supervisor per process). */
  busy: Promise<void>;
  /** The clock jump under way: a second one on the node waits for it (jumps never add up past a few minutes). */
  clockBusy: Promise<void>;
  /** The running process's id, if it runs. */
  pid(): number | undefined;
  /** SIGKILLs the process; resolves once it is gone. */
  kill(): Promise<void>;
  /** Starts it again (again if it dies starting, as a supervisor would); resolves once it is up. */
  start(): Promise<void>;
}

/** The campaign's own servers (`--fleet`), which the faults `pg-restart` and `redis-node-kill` strike. */
export interface OwnServers {
  /** Stops PostgreSQL (`pg_ctl stop -m fast`), waits `downMs`, starts it again. */
  restartPostgres(downMs: number): Promise<void>;
  /** The Redis servers (one, or a Cluster's three masters): each SIGKILLed and started again on its port with its data. */
  redisNodes: { address: string; killAndRestart(downMs: number): Promise<void> }[];
}

export interface Cluster {
  /** Where a merchant's client calls the API: each API node (processes of its own), or the balancer (a fleet). */
  apiUrls: string[];
  simulatorA: string;
  simulatorB: string;
  /** An admin URL of the PostgreSQL server the gateway's database is on (never through a pooler). */
  serverUrl: string;
  databaseName: string;
  /** Every Redis server the gateway's processes use. */
  redisUrls: string[];
  env: Record<string, string>;
  nodes: Node[];
  providerA: { secretKey: string; webhookSecret: string };
  servers?: OwnServers;
  /** Where the processes log (`<name>.log`; a fleet's), which the campaign keeps when it found a violation. */
  logsDir?: string;
  /** SIGKILLs a node, waits `downMs`, starts it again and waits until it is up. */
  killAndRestart(node: Node, downMs: number): Promise<void>;
  /** The PIDs of every gateway process running now. */
  pids(): number[];
  stop(): Promise<void>;
}

/**
 * Shorter waits than production's, so that a campaign settles in minutes: a merchant's endpoint is retried
 * within seconds, a provider call and an idempotency lock left by a killed node expire within seconds, the
 * sweeper re-enqueues what a killed process or a cut Redis lost every 5 s rather than every minute, and due
 * renewals are charged within 5 s.
 */
export const CAMPAIGN_SETTINGS: Record<string, string> = {
  WEBHOOK_TIMEOUT_MS: "3000",
  WEBHOOK_RETRY_SCHEDULE: "1s,2s,4s,5s,5s,5s,5s,5s",
  PROVIDER_TIMEOUT_MS: "4000",
  IDEMPOTENCY_LOCK_MS: "20000",
  RATE_LIMIT_RPS: "10000",
  RATE_LIMIT_BURST: "10000",
  AUDIT_EVERY_MS: "0",
  SWEEP_EVERY_MS: "5000",
  RENEWAL_SWEEP_EVERY_MS: "5000",
  // A refund made at provider A whose notification was lost is learnt by re-reading settled payments: within
  // seconds to minutes here (production: 2 min to 30 days); {@link campaignSettings} adds steps over a longer span.
  SETTLED_REREAD_SCHEDULE: "5s,15s,30s,1m,2m,3m,4m,5m,6m,7m,8m,10m",
};

/**
 * {@link CAMPAIGN_SETTINGS} for a campaign whose flows and faults are spread over `spanMs`: settled payments
 * are also re-read every 5 minutes after the tenth, until the span and the wait before the checks are over —
 * a refund struck at provider A late in a long campaign, on a payment settled early in it, is learnt before
 * the checks (with the fixed schedule, a 42-minute campaign reported two such refunds as mismatches).
 */
export function campaignSettings(spanMs: number, quietMs: number): Record<string, string> {
  const steps = [CAMPAIGN_SETTINGS.SETTLED_REREAD_SCHEDULE!];
  const lastMinutes = Math.ceil((spanMs + quietMs) / 60_000);
  for (let minutes = 15; minutes < lastMinutes + 5; minutes += 5) steps.push(`${minutes}m`);
  return { ...CAMPAIGN_SETTINGS, SETTLED_REREAD_SCHEDULE: steps.join(",") };
}

/** {@link Cluster.killAndRestart}: one kill-and-restart at a time per node. */
export function killAndRestart(node: Node, downMs: number): Promise<void> {
  const run = node.busy.then(async () => {
    await node.kill();
    await Bun.sleep(downMs);
    node.restarts++;
    await node.start();
  });
  node.busy = run.catch(() => undefined);
  return run;
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`campaign: timed out after ${timeoutMs} ms waiting for ${what}`);
    await Bun.sleep(100);
  }
}

/** Resolves once the child logged `passerelle started` (or `simulator on`); its output is drained from then on. */
async function started(child: Child, marker: string, timeoutMs: number): Promise<void> {
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const timeout = Bun.sleep(timeoutMs).then(() => {
    throw new Error(`campaign: a process did not start within ${timeoutMs} ms`);
  });
  while (!text.includes(marker)) {
    const chunk = await Promise.race([reader.read(), timeout]);
    if (chunk.done)
      throw new Error(`campaign: a process exited before it started: ${text.slice(-2000)}${(await new Response(child.stderr).text()).slice(-2000)}`);
    text += decoder.decode(chunk.value, { stream: true });
  }
  reader.releaseLock();
  void child.stdout.pipeTo(new WritableStream()).catch(() => undefined);
  void child.stderr.pipeTo(new WritableStream()).catch(() => undefined);
}

function spawn(args: string[], env: Record<string, string>): Child {
  return Bun.spawn(["bun", "src/main.ts", ...args], { cwd: ROOT, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
}

/** A gateway process of the campaign's own: `bun src/main.ts <args>` with `env`. */
function processNode(role: Node["role"], index: number, args: string[], env: Record<string, string>): Node {
  let child: Child | undefined;
  return {
    role,
    index,
    clockFile: env.TEST_CLOCK_OFFSET_FILE!,
    restarts: 0,
    busy: Promise.resolve(),
    clockBusy: Promise.resolve(),
    pid: () => child?.pid,
    async kill() {
      const running = child;
      child = undefined;
      running?.kill("SIGKILL");
      await running?.exited;
    },
    // Started again when it dies starting (a fault may hit its migrations), as a supervisor would.
    async start(tries = 5) {
      for (let attempt = 1; ; attempt++) {
        child = spawn(args, env);
        try {
          await started(child, "passerelle started", 90_000);
          break;
        } catch (error) {
          child.kill("SIGKILL");
          if (attempt >= tries) throw error;
          await Bun.sleep(500);
        }
      }
      if (role === "api") {
        const url = `http://127.0.0.1:${env.PORT}/health/ready`;
        await waitFor(`API node ${index} to be ready`, async () => (await fetch(url)).status === 200, 60_000);
      }
    },
  };
}

/** Creates the campaign's database (migrated) and starts the simulators, `apiNodes` API nodes and `workers` workers. */
export async function startCluster(input: {
  databaseUrl: string;
  redisUrl: string;
  apiNodes: number;
  workers: number;
  settings?: Record<string, string>;
}): Promise<Cluster> {
  const databaseName = `passerelle_campaign_${randomBytes(6).toString("hex")}`;
  const admin = postgres(input.databaseUrl, { max: 1, onnotice: () => {} });
  try {
    await admin.unsafe(`create database "${databaseName}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(input.databaseUrl);
  url.pathname = `/${databaseName}`;
  const databaseUrl = url.toString();
  const handle = await openDatabase({ driver: "postgres", url: databaseUrl, max: 1 });
  try {
    await migrateToLatest(handle.db);
  } finally {
    await handle.close();
  }
  const prefix = `pcampaign:${randomBytes(6).toString("hex")}`;
  const dataDir = mkdtempSync(join(tmpdir(), "passerelle-campaign-"));

  const portA = await freePort();
  const portB = await freePort();
  const base = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" };
  const sandbox = Bun.spawn(["bun", "src/main.ts", "sandbox", "--port-a", String(portA), "--port-b", String(portB), "--approve-delay-ms", "300"], {
    cwd: ROOT,
    env: base,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  await started(sandbox, "providerB simulator on", 60_000);
  const simulatorA = `http://127.0.0.1:${portA}`;
  const providerA = {
    secretKey: `sk_sandbox_campaign_${randomBytes(12).toString("hex")}`,
    webhookSecret: `wh_sandbox_campaign_${randomBytes(12).toString("hex")}`,
  };
  const created = await fetch(`${simulatorA}/_sim/accounts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ environment: "sandbox", ...providerA }),
  });
  if (!created.ok) throw new Error(`campaign: the simulator refused the service's account (HTTP ${created.status})`);

  const env: Record<string, string> = {
    ...base,
    DATA_DIR: dataDir,
    DATABASE_URL: databaseUrl,
    REDIS_URL: input.redisUrl,
    QUEUE_PREFIX: prefix,
    JWT_SECRET: randomBytes(32).toString("hex"),
    ENCRYPTION_KEYS: `1:${randomBytes(32).toString("base64")}`,
    API_KEY_PEPPER: randomBytes(32).toString("hex"),
    SIMULATORS: "off",
    ALLOW_PRIVATE_TARGETS: "true",
    PROVIDER_A_SANDBOX_URL: simulatorA,
    PROVIDER_A_SANDBOX_SECRET_KEY: providerA.secretKey,
    PROVIDER_A_SANDBOX_WEBHOOK_SECRET: providerA.webhookSecret,
    PROVIDER_B_SANDBOX_URL: `http://127.0.0.1:${portB}/sandbox-api/v1`,
    ...(input.settings ?? CAMPAIGN_SETTINGS),
  };
  const nodes: Node[] = [];
  const apiUrls: string[] = [];
  for (let index = 0; index < input.apiNodes; index++) {
    const port = await freePort();
    apiUrls.push(`http://127.0.0.1:${port}`);
    const nodeEnv = {
      ...env,
      PORT: String(port),
      METRICS_PORT: String(await freePort()),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      TEST_CLOCK_OFFSET_FILE: join(dataDir, `clock-api${index}`),
    };
    nodes.push(processNode("api", index, ["serve", "--no-workers"], nodeEnv));
  }
  for (let index = 0; index < input.workers; index++) {
    const nodeEnv = {
      ...env,
      PORT: new URL(apiUrls[0]!).port,
      METRICS_PORT: String(await freePort()),
      PUBLIC_BASE_URL: apiUrls[0]!,
      TEST_CLOCK_OFFSET_FILE: join(dataDir, `clock-worker${index}`),
    };
    nodes.push(processNode("worker", index, ["worker"], nodeEnv));
  }
  async function stop(): Promise<void> {
    for (const node of nodes) await node.kill();
    sandbox.kill("SIGTERM");
    await sandbox.exited;
    const drop = postgres(input.databaseUrl, { max: 1, onnotice: () => {} });
    try {
      await drop.unsafe(`drop database if exists "${databaseName}" with (force)`);
    } finally {
      await drop.end();
    }
    const redis = new Redis(input.redisUrl, { maxRetriesPerRequest: 1 });
    try {
      for (const pattern of [`${prefix}:*`]) {
        let cursor = "0";
        do {
          const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 500);
          cursor = next;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== "0");
      }
    } finally {
      await redis.quit();
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
  // One at a time: on a small machine, starting them together only makes each slower.
  try {
    for (const node of nodes) await node.start();
  } catch (error) {
    await stop().catch(() => undefined);
    throw error;
  }
  // The provider notifies the first API node, as a provider's dashboard names one URL (a load balancer's, in a fleet).
  const pointed = await fetch(`${simulatorA}/_sim/accounts/${encodeURIComponent(providerA.secretKey)}/webhook`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url: `${apiUrls[0]}/providerA/webhook/sandbox` }),
  });
  if (!pointed.ok) throw new Error(`campaign: could not point the simulator's webhook at the gateway (HTTP ${pointed.status})`);

  return {
    apiUrls,
    simulatorA,
    simulatorB: `http://127.0.0.1:${portB}`,
    serverUrl: input.databaseUrl,
    databaseName,
    redisUrls: [input.redisUrl],
    env,
    nodes,
    providerA,
    killAndRestart,
    pids: () => nodes.flatMap((node) => node.pid() ?? []),
    stop,
  };
}
