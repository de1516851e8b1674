/**
 * Two kinds of processes share one sandbox (issue 25, point 2): the documented layout — `passerelle serve
 * --no-workers` for HTTP and `passerelle worker` for the jobs, two of each, on one PostgreSQL and one Redis,
 * with the simulators on as in development. The simulators used are those mounted in the first serve
 * process: the workers mount none and reach them at its URL (their `PUBLIC_BASE_URL`), the second serve
 * process is pointed at them (`PROVIDER_*_URL`, as the README says), and all use the same pooled provider A
 * account (its keys derived from the shared JWT_SECRET). A tenant's pooled payment made through the second
 * serve process succeeds, then a refund (through the first) and a payout (through the second), which only
 * the workers send, reach `succeeded` and `sent`. (Before issue 25 each process made its own pooled account:
 * the workers' calls were refused 401 and the refund and payout stayed pending.)
 *
 * Real servers only: a PGlite data directory is opened by one process.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../../src/config.ts";
import { mintToken } from "../../../src/mod.ts";
import { createNamedServerDatabase } from "../../support/delivery-gateway.ts";
import { freePort } from "../../support/ports.ts";
import { deleteKeysUnderPrefix, testQueuePrefix } from "../../support/redis.ts";
import { cleanEnv, waitForStart } from "../../support/spawned-gateway.ts";
import { waitUntil } from "../../support/wait.ts";

type Body = Record<string, any>;

const ROOT = join(import.meta.dir, "..", "..", "..");
const { DATABASE_URL, REDIS_URL } = process.env;
const onServers = Boolean(DATABASE_URL && REDIS_URL);
const SKIP_NOTE = onServers ? "" : " (SKIPPED: needs DATABASE_URL and REDIS_URL — a PGlite data directory is opened by one process)";

let dataDir: string;
let base: string;
let secondBase: string;
let named: { url: string; dispose(): Promise<void> };
let prefix: string;
const processes: Bun.Subprocess<"ignore", "pipe", "inherit">[] = [];

async function spawnPasserelle(args: string[], env: Record<string, string>): Promise<void> {
  const child = Bun.spawn(["bun", "src/main.ts", ...args], { cwd: ROOT, env: cleanEnv(env), stdin: "ignore", stdout: "pipe", stderr: "inherit" });
  processes.push(child);
  await waitForStart(child, 60_000);
}

beforeAll(async () => {
  if (!onServers) return;
  dataDir = mkdtempSync(join(tmpdir(), "passerelle-two-processes-"));
  named = await createNamedServerDatabase(DATABASE_URL!);
  prefix = testQueuePrefix();
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  // One environment for every process, as a deployment gives them: the same PORT (the workers listen on
  // nothing; their PUBLIC_BASE_URL, from it, is the serve process's), DATA_DIR, database and Redis.
  const env = {
    PORT: String(port),
    METRICS_PORT: String(await freePort()),
    DATA_DIR: dataDir,
    DATABASE_URL: named.url,
    REDIS_URL: REDIS_URL!,
    QUEUE_PREFIX: prefix,
    SIMULATOR_APPROVE_DELAY_MS: "200",
  };
  await spawnPasserelle(["serve", "--no-workers"], env);
  // A second HTTP process on its own port, using the first one's simulators.
  const secondPort = await freePort();
  secondBase = `http://127.0.0.1:${secondPort}`;
  await spawnPasserelle(["serve", "--no-workers"], {
    ...env,
    PORT: String(secondPort),
    METRICS_PORT: String(await freePort()),
    PROVIDER_A_SANDBOX_URL: `http://localhost:${port}/sandbox/providerA`,
    PROVIDER_B_SANDBOX_URL: `http://localhost:${port}/sandbox/providerB/sandbox-api/v1`,
  });
  await spawnPasserelle(["worker"], env);
  await spawnPasserelle(["worker"], env);
}, 120_000);

afterAll(async () => {
  if (!onServers) return;
  for (const child of processes) child.kill("SIGTERM");
  for (const child of processes) await child.exited;
  await named?.dispose();
  await deleteKeysUnderPrefix(REDIS_URL!, prefix);
  rmSync(dataDir, { recursive: true, force: true });
});

async function call(
  token: string,
  method: string,
  path: string,
  body?: unknown,
  options: { headers?: Record<string, string>; through?: string } = {},
): Promise<{ status: number; body: Body }> {
  const response = await fetch(`${options.through ?? base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", ...options.headers },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Body };
}

/** Waits until the record at `path` leaves `pending`; answers it. */
async function settled(token: string, path: string): Promise<Body> {
  return waitUntil(
    async () => {
      const read = await call(token, "GET", path);
      return read.body.state === "pending" ? undefined : read.body;
    },
    { what: `${path} settled`, timeoutMs: 30_000, intervalMs: 200 },
  );
}

describe("two serve --no-workers and two workers, with the simulators on", () => {
  it.skipIf(!onServers)(
    `share one pooled provider A account: a payment, then a refund and a payout the workers send${SKIP_NOTE}`,
    async () => {
      const config = loadConfig({ DATA_DIR: dataDir }, { createDevelopmentSecrets: false });
      const admin = await mintToken(config.jwt, { sub: "operator", role: "admin", environment: "sandbox" });
      const created = await call(admin, "POST", "/tenants", { name: "Boutique Deux Process" });
      expect(created.status).toBe(200);
      const tenantId = created.body.tenant.id as string;
      const token = await mintToken(config.jwt, { sub: `tenant:${tenantId}`, tenantId, environment: "sandbox" });

      const pay = { amount: 800, description: "Order 1042", operator: "mtn", customer: { phone: { number: "+22997000000", country: "bj" } } };
      const payment = await call(token, "POST", "/payments", pay, { through: secondBase });
      expect(payment.status).toBe(200);
      expect(payment.body.credentialVersion).toBeNull(); // the pooled account, not the tenant's own
      expect((await settled(token, `/payments/${payment.body.id}`)).state).toBe("succeeded");

      const refund = await call(token, "POST", `/payments/${payment.body.id}/refunds`, { amount: 300, reason: "One item out of stock" });
      expect(refund.status).toBe(200);
      expect((await settled(token, `/refunds/${refund.body.id}`)).state).toBe("succeeded");

      const supplier = { amount: 200, description: "Supplier 7", recipient: { phone: { number: "+22996000001", country: "bj" }, operator: "mtn" } };
      const payout = await call(token, "POST", "/payouts", supplier, { headers: { "idempotency-key": "supplier-7" }, through: secondBase });
      expect(payout.status).toBe(200);
      expect((await settled(token, `/payouts/${payout.body.id}`)).state).toBe("sent");

      const balance = await call(token, "GET", "/balance");
      expect(balance.status).toBe(200);
    },
    120_000,
  );
});
