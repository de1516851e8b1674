/**
 * The campaign on a fleet (`--fleet`): `deploy/fleet/` started with servers of the campaign's own — a
 * PostgreSQL (`initdb`, `pg_ctl`) behind PgBouncer, and a Redis server or a Redis Cluster of three masters —
 * so that the faults may also stop PostgreSQL and kill a Redis node without touching the shared servers.
 * Merchants and providers reach the gateway through HAProxy, as in production; every process has a clock
 * file of its own (`TEST_CLOCK_OFFSET_FILE`) for `clock-jump`.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFleet } from "../../deploy/fleet/fleet.ts";
import { CAMPAIGN_SETTINGS, type Cluster, killAndRestart, type Node } from "./cluster.ts";

/** Starts the fleet (`apiNodes` API nodes behind HAProxy, `workers` workers) and wraps it as the campaign's {@link Cluster}. */
export async function startFleetCluster(input: {
  apiNodes: number;
  workers: number;
  redisCluster: boolean;
  log: (line: string) => void;
  settings?: Record<string, string>;
}): Promise<Cluster> {
  const clockDir = mkdtempSync(join(tmpdir(), "passerelle-campaign-clocks-"));
  const fleet = await startFleet({
    api: input.apiNodes,
    workers: input.workers,
    ownPostgres: true,
    ownRedis: !input.redisCluster,
    redisCluster: input.redisCluster,
    env: { ...(input.settings ?? CAMPAIGN_SETTINGS), LOG_LEVEL: "warn" },
    processEnv: (name) => ({ TEST_CLOCK_OFFSET_FILE: join(clockDir, `clock-${name}`) }),
    log: (line) => input.log(`campaign: fleet: ${line}`),
  }).catch((error: unknown) => {
    rmSync(clockDir, { recursive: true, force: true });
    throw new Error(`campaign: the fleet did not start: ${error instanceof Error ? error.message : String(error)}`);
  });
  const nodes: Node[] = [
    ...fleet.api.map((process, index) => ({ process, index, role: "api" as const })),
    ...fleet.workers.map((process, index) => ({ process, index, role: "worker" as const })),
  ].map(({ process, index, role }) => ({
    role,
    index,
    clockFile: join(clockDir, `clock-${role}${index + 1}`),
    restarts: 0,
    busy: Promise.resolve(),
    clockBusy: Promise.resolve(),
    pid: () => (process.child.exitCode === null && process.child.signalCode === null ? process.child.pid : undefined),
    async kill() {
      process.child.kill("SIGKILL");
      await process.child.exited;
    },
    // Started again if it dies starting (or is slow to, on a loaded machine), as a supervisor would.
    async start() {
      for (let attempt = 1; ; attempt++) {
        try {
          await process.restart();
          return;
        } catch (error) {
          if (attempt >= 5) throw error;
          await Bun.sleep(500);
        }
      }
    },
  }));
  const redisNodes = fleet.redisCluster?.members ?? (fleet.redis ? [fleet.redis] : []);
  return {
    apiUrls: [fleet.url],
    simulatorA: fleet.sandbox.providerA,
    simulatorB: fleet.sandbox.providerB,
    serverUrl: fleet.database.serverUrl,
    databaseName: fleet.database.name,
    redisUrls: redisNodes.map((node) => `redis://${node.address}`),
    env: fleet.env,
    nodes,
    providerA: { secretKey: fleet.env.PROVIDER_A_SANDBOX_SECRET_KEY!, webhookSecret: fleet.env.PROVIDER_A_SANDBOX_WEBHOOK_SECRET! },
    servers: {
      restartPostgres: (downMs) => fleet.postgres!.stopFor(downMs),
      redisNodes,
    },
    logsDir: fleet.dir,
    killAndRestart,
    pids: () => nodes.flatMap((node) => node.pid() ?? []),
    async stop() {
      await fleet.stop();
      rmSync(clockDir, { recursive: true, force: true });
    },
  };
}
