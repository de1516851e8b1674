/**
 * The fleet's parts, each a child process on loopback ports under one scratch folder: PgBouncer in
 * transaction mode in front of PostgreSQL, HAProxy in front of the API nodes, and the gateway's own processes
 * (`passerelle sandbox`, `serve --no-workers`, `worker`); the stores (a private PostgreSQL, Redis, a Redis
 * Cluster) are in `stores.ts`. `deploy/fleet/fleet.ts` (`bun run fleet`) starts them all; the fleet's tests
 * start the same parts.
 *
 * Each `start…` resolves once its part answers, and returns a handle whose `stop()` ends it (SIGTERM, then
 * SIGKILL after a grace period) and never rejects.
 *
 * @module
 */
import { closeSync, existsSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join } from "node:path";

/** The repository's root (this file is `deploy/fleet/processes.ts`). */
export const REPO_ROOT = join(import.meta.dir, "..", "..");

/** A running part of the fleet. */
export interface Part {
  name: string;
  /** Ends it; resolves when it exited. */
  stop(): Promise<void>;
}

/** A free TCP port on 127.0.0.1, as the kernel hands one out (bound and released at once). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Whether a binary is on PATH (or at an absolute path). */
export function hasBinary(name: string): boolean {
  return Bun.which(name, { PATH: `${process.env.PATH ?? ""}:/usr/sbin:/usr/local/sbin` }) !== null;
}

/** The absolute path of an installed binary (also under /usr/sbin), or an error naming the Debian package. */
export function binary(name: string): string {
  const found = Bun.which(name, { PATH: `${process.env.PATH ?? ""}:/usr/sbin:/usr/local/sbin` });
  if (!found) throw new Error(`${name} is not installed (Debian: apt-get install ${name === "redis-server" || name === "redis-cli" ? "redis-server" : name})`);
  return found;
}

/** Resolves once `check` is true (a throw counts as false); rejects after `timeoutMs`. */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await Bun.sleep(100);
  }
  throw new Error(`${what} did not come up within ${timeoutMs} ms`);
}

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export async function tcpOpen(port: number): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: "127.0.0.1", port, socket: { data() {} } });
    socket.end();
    return true;
  } catch {
    return false;
  }
}

/** Ends `child`: SIGTERM, then SIGKILL after `graceMs`. */
export async function end(child: Bun.Subprocess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill("SIGTERM");
  const exited = await Promise.race([child.exited.then(() => true), Bun.sleep(graceMs).then(() => false)]);
  if (!exited) {
    child.kill("SIGKILL");
    await child.exited;
  }
}

/** A child process whose output goes to `<dir>/<name>.log`. */
export function spawnLogged(dir: string, name: string, cmd: string[], env?: Record<string, string>): Bun.Subprocess {
  const log = openSync(join(dir, `${name}.log`), "a");
  try {
    return Bun.spawn(cmd, { stdin: "ignore", stdout: log, stderr: log, ...(env ? { env } : {}) });
  } finally {
    closeSync(log);
  }
}

// --- PgBouncer ---------------------------------------------------------------------------------------

/** PgBouncer, in transaction pooling mode, in front of a PostgreSQL server. */
export interface PgBouncer extends Part {
  port: number;
  /** `postgres://…` for database `name` through the pooler, with `?pgbouncer=true` (the gateway's cue). */
  urlFor(database: string): string;
}

/**
 * Starts PgBouncer on `port` in front of `upstream` (host and port of PostgreSQL, trust or the URL's user):
 * transaction mode, `poolSize` server connections per database and user. PgBouncer refuses to run as root;
 * as root it is started as `runAs` (default `postgres`), which must be able to read `dir`.
 */
export async function startPgBouncer(options: {
  dir: string;
  port: number;
  upstream: { host: string; port: number; user: string };
  poolSize?: number;
  runAs?: string;
}): Promise<PgBouncer> {
  const dir = join(options.dir, "pgbouncer");
  mkdirSync(dir, { recursive: true, mode: 0o777 });
  const ini = join(dir, "pgbouncer.ini");
  const template = await Bun.file(join(import.meta.dir, "pgbouncer.ini")).text();
  writeFileSync(
    ini,
    template
      .replaceAll("{{upstream_host}}", options.upstream.host)
      .replaceAll("{{upstream_port}}", String(options.upstream.port))
      .replaceAll("{{port}}", String(options.port))
      .replaceAll("{{pool_size}}", String(options.poolSize ?? 20))
      .replaceAll("{{dir}}", dir),
  );
  writeFileSync(join(dir, "users.txt"), `"${options.upstream.user}" ""\n`);
  const asRoot = process.getuid?.() === 0;
  // Its own folder writable to it, the way there only passable (a PostgreSQL's data beside it must stay its owner's alone).
  if (asRoot) {
    Bun.spawnSync(["chmod", "a+rx", options.dir]);
    Bun.spawnSync(["chmod", "-R", "a+rwX", dir]);
  }
  const child = spawnLogged(dir, "pgbouncer-stdout", [binary("pgbouncer"), ...(asRoot ? ["-u", options.runAs ?? "postgres"] : []), ini]);
  await waitFor(`PgBouncer on port ${options.port}`, () => tcpOpen(options.port)).catch(async (error: unknown) => {
    await end(child, 1000);
    throw error;
  });
  const user = options.upstream.user;
  return {
    name: "pgbouncer",
    port: options.port,
    urlFor: (database) => `postgres://${user}@127.0.0.1:${options.port}/${database}?pgbouncer=true`,
    stop: () => end(child),
  };
}

// --- HAProxy -----------------------------------------------------------------------------------------

/** HAProxy in front of the API nodes. */
export interface Haproxy extends Part {
  port: number;
  url: string;
}

/**
 * Starts HAProxy on `port`, balancing round robin over the API nodes on `backends`, each checked on
 * `/health/ready`; its own refusals (and a request with a control character in a header) answer in the
 * contract's error shape (`deploy/fleet/haproxy.cfg`).
 */
export async function startHaproxy(options: { dir: string; port: number; backends: number[] }): Promise<Haproxy> {
  const dir = join(options.dir, "haproxy");
  mkdirSync(dir, { recursive: true });
  const cfg = join(dir, "haproxy.cfg");
  const template = await Bun.file(join(import.meta.dir, "haproxy.cfg")).text();
  const servers = options.backends.map((port, i) => `  server api${i + 1} 127.0.0.1:${port} check inter 1s fall 2 rise 1`).join("\n");
  writeFileSync(cfg, template.replaceAll("{{port}}", String(options.port)).replace("{{servers}}", servers));
  const check = Bun.spawnSync([binary("haproxy"), "-c", "-q", "-f", cfg], { stdout: "pipe", stderr: "pipe" });
  if (check.exitCode !== 0) throw new Error(`haproxy.cfg is not valid: ${check.stderr.toString()}${check.stdout.toString()}`);
  const child = spawnLogged(dir, "haproxy", [binary("haproxy"), "-db", "-f", cfg]);
  const url = `http://127.0.0.1:${options.port}`;
  await waitFor(`HAProxy on port ${options.port}`, async () => (await fetch(`${url}/health/ready`)).status === 200).catch(async (error: unknown) => {
    await end(child, 1000);
    throw error;
  });
  return { name: "haproxy", port: options.port, url, stop: () => end(child) };
}

// --- The gateway's processes -------------------------------------------------------------------------

/** A gateway process (`passerelle serve --no-workers`, `worker` or `sandbox`). */
export interface GatewayProcess extends Part {
  /** The running process (a new one after {@link restart}). */
  readonly child: Bun.Subprocess;
  /** Starts it again, with the same command and environment, once the running one is gone (after a kill). */
  restart(): Promise<void>;
}

interface GatewayProcessOptions {
  dir: string;
  name: string;
  args: string[];
  env: Record<string, string>;
  ready: { log: string } | { url: string };
}

/** Spawns the process and waits until it is ready; a process that does not get there is killed. */
async function spawnGateway(options: GatewayProcessOptions): Promise<Bun.Subprocess> {
  const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...options.env };
  const logFile = join(options.dir, `${options.name}.log`);
  const logged = existsSync(logFile) ? (await Bun.file(logFile).text()).length : 0;
  const child = spawnLogged(options.dir, options.name, [process.execPath, join(REPO_ROOT, "src", "main.ts"), ...options.args], env);
  const ready = options.ready;
  try {
    await waitFor(
      `${options.name} (${options.args.join(" ")})`,
      async () => {
        if (child.exitCode !== null) throw new Error(`${options.name} exited (${child.exitCode}): ${(await Bun.file(logFile).text()).slice(-2000)}`);
        if ("url" in ready) return (await fetch(ready.url)).ok;
        return (await Bun.file(logFile).text()).slice(logged).includes(ready.log);
      },
      30_000,
    );
  } catch (error) {
    await end(child, 1000);
    throw error;
  }
  return child;
}

/**
 * Starts `bun src/main.ts <args>` with `env` (nothing else of this process's environment but PATH and HOME);
 * resolves when it is ready: it logged `ready.log`, or `ready.url` answers 2xx.
 */
export async function startGatewayProcess(options: GatewayProcessOptions): Promise<GatewayProcess> {
  let child = await spawnGateway(options);
  return {
    name: options.name,
    get child() {
      return child;
    },
    stop: () => end(child),
    async restart() {
      await end(child, 1000);
      child = await spawnGateway(options);
    },
  };
}
