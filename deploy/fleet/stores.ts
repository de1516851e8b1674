/**
 * The fleet's stores, each a server of its own on a loopback port under the fleet's scratch folder: a private
 * PostgreSQL (Debian's binaries, `initdb` then `pg_ctl`), a Redis server and a Redis Cluster of three masters
 * (Debian's `redis-server`). Each can be struck and brought back, as the fault campaign does
 * (`scripts/campaign/faults.ts`): PostgreSQL stopped (`pg_ctl stop -m fast`) and started again, a Redis node
 * SIGKILLed and started again on its port with its data (append-only file).
 *
 * @module
 */
import { chownSync, existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binary, end, type Part, spawnLogged, tcpOpen, waitFor } from "./processes.ts";

// --- PostgreSQL --------------------------------------------------------------------------------------

/** A private PostgreSQL server. */
export interface Postgres extends Part {
  port: number;
  /** `postgres://postgres@127.0.0.1:<port>/postgres`: the superuser, trusted on loopback. */
  adminUrl: string;
  /** Stops it (`pg_ctl stop -m fast`: every connection cut, a clean shutdown), waits `downMs`, starts it again. */
  stopFor(downMs: number): Promise<void>;
}

/** The newest PostgreSQL's binaries of Debian's packages (`/usr/lib/postgresql/<version>/bin`), or PATH's. */
function postgresBin(name: string): string {
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((version) => existsSync(join(root, version, "bin", name)))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  return versions[0] ? join(root, versions[0], "bin", name) : binary(name);
}

/** Whether PostgreSQL's server binaries are installed. */
export function hasPostgresServer(): boolean {
  try {
    postgresBin("initdb");
    postgresBin("pg_ctl");
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts a PostgreSQL of its own on `port`: `initdb` in `<dir>/postgres`, then `pg_ctl start`. PostgreSQL
 * refuses to run as root: as root, it runs as `runAs` (default `postgres`), and `dir` is made reachable to it.
 * `fsync` is off (a scratch server: its restarts are clean shutdowns, which lose nothing).
 */
export async function startPostgres(options: { dir: string; port: number; runAs?: string }): Promise<Postgres> {
  const home = join(options.dir, "postgres");
  const data = join(home, "data");
  mkdirSync(home, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  const user = options.runAs ?? "postgres";
  if (asRoot) {
    Bun.spawnSync(["chmod", "a+rx", options.dir]);
    const id = Bun.spawnSync(["id", "-u", user], { stdout: "pipe" }).stdout.toString().trim();
    const group = Bun.spawnSync(["id", "-g", user], { stdout: "pipe" }).stdout.toString().trim();
    if (!id) throw new Error(`PostgreSQL cannot run as root, and there is no user ${user} to run it as`);
    chownSync(home, Number(id), Number(group));
  }
  const as = (command: string[]) => (asRoot ? ["runuser", "-u", user, "--", ...command] : command);
  const run = async (what: string, command: string[]) => {
    const child = Bun.spawn(as(command), { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [code, out, err] = await Promise.all([child.exited, new Response(child.stdout).text(), new Response(child.stderr).text()]);
    if (code !== 0) throw new Error(`${what} failed (${code}): ${out.slice(-1000)}${err.slice(-1000)}`);
  };
  await run("initdb", [postgresBin("initdb"), "-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"]);
  const settings = ["listen_addresses = '127.0.0.1'", `port = ${options.port}`, `unix_socket_directories = '${home}'`, "fsync = off", "max_connections = 200"];
  writeFileSync(join(data, "postgresql.auto.conf"), `${settings.join("\n")}\n`);
  if (asRoot) Bun.spawnSync(["chown", user, join(data, "postgresql.auto.conf")]);
  const pgCtl = postgresBin("pg_ctl");
  const start = () => run("pg_ctl start", [pgCtl, "-D", data, "-l", join(home, "postgres.log"), "-w", "-t", "60", "start"]);
  const stop = (mode: "fast" | "immediate") => run("pg_ctl stop", [pgCtl, "-D", data, "-m", mode, "-w", "-t", "60", "stop"]);
  await start();
  await waitFor(`PostgreSQL on port ${options.port}`, () => tcpOpen(options.port));
  return {
    name: "postgres",
    port: options.port,
    adminUrl: `postgres://postgres@127.0.0.1:${options.port}/postgres`,
    async stopFor(downMs) {
      await stop("fast");
      await Bun.sleep(downMs);
      await start();
    },
    stop: () => stop("fast").catch(() => stop("immediate").catch(() => undefined)),
  };
}

// --- Redis -------------------------------------------------------------------------------------------

/** One `redis-server`, which a fault may SIGKILL and start again on its port with its data. */
export interface RedisNode extends Part {
  port: number;
  /** `127.0.0.1:<port>`. */
  address: string;
  /** SIGKILLs the server (no chance to save), waits `downMs`, starts it again on its port from its append-only file. */
  killAndRestart(downMs: number): Promise<void>;
}

/** Starts `redis-server` on `port` with its data in `<dir>/redis/<port>` (append-only file, fsync every second). */
async function startRedisNode(options: { dir: string; port: number; extra?: string[] }): Promise<RedisNode> {
  const nodeDir = join(options.dir, "redis", String(options.port));
  mkdirSync(nodeDir, { recursive: true });
  const command = [
    binary("redis-server"),
    "--port",
    String(options.port),
    "--bind",
    "127.0.0.1",
    "--dir",
    nodeDir,
    "--save",
    "",
    // What a killed server held comes back from this file when it starts again.
    "--appendonly",
    "yes",
    "--appendfsync",
    "everysec",
    ...(options.extra ?? []),
  ];
  const spawn = async () => {
    const child = spawnLogged(nodeDir, "redis", command);
    await waitFor(`redis-server on port ${options.port}`, () => tcpOpen(options.port)).catch(async (error: unknown) => {
      await end(child, 1000);
      throw error;
    });
    return child;
  };
  let child = await spawn();
  return {
    name: `redis-${options.port}`,
    port: options.port,
    address: `127.0.0.1:${options.port}`,
    async killAndRestart(downMs) {
      child.kill("SIGKILL");
      await child.exited;
      await Bun.sleep(downMs);
      child = await spawn();
    },
    stop: () => end(child),
  };
}

/** Starts a single Redis server of the fleet's own on `port`. */
export function startRedisServer(options: { dir: string; port: number }): Promise<RedisNode> {
  return startRedisNode(options);
}

/** A Redis Cluster of three masters on loopback. */
export interface RedisCluster extends Part {
  /** `host:port` of each master, for `REDIS_CLUSTER_NODES`. */
  nodes: string[];
  /** The masters, in the order of {@link nodes} (a fault kills one). */
  members: RedisNode[];
}

/** Starts three `redis-server` nodes in cluster mode on `ports` and joins them into one cluster (three masters, no replicas). */
export async function startRedisCluster(options: { dir: string; ports: [number, number, number] }): Promise<RedisCluster> {
  const members: RedisNode[] = [];
  const stop = async () => {
    await Promise.all(members.map((member) => member.stop()));
  };
  try {
    for (const port of options.ports) {
      const nodeDir = join(options.dir, "redis", String(port));
      const extra = ["--cluster-enabled", "yes", "--cluster-config-file", join(nodeDir, "nodes.conf"), "--cluster-node-timeout", "2000"];
      members.push(await startRedisNode({ dir: options.dir, port, extra }));
    }
    const nodes = members.map((member) => member.address);
    const create = Bun.spawnSync([binary("redis-cli"), "--cluster", "create", ...nodes, "--cluster-replicas", "0", "--cluster-yes"], {
      stdout: "pipe",
      stderr: "pipe",
    });
    if (create.exitCode !== 0) throw new Error(`redis-cli --cluster create failed: ${create.stdout.toString()}${create.stderr.toString()}`);
    await waitFor("the Redis Cluster to be ok", async () => {
      const info = Bun.spawnSync([binary("redis-cli"), "-p", String(options.ports[0]), "cluster", "info"], { stdout: "pipe" });
      return info.stdout.toString().includes("cluster_state:ok");
    });
    return { name: "redis-cluster", nodes, members, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
