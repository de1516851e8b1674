/**
 * Two gateway processes on one PostgreSQL database (issue 27, point 2): `passerelle serve` (with the workers and
 * the simulators, as in development) and `passerelle serve --no-workers` on its own port, sharing nothing but the
 * database and Redis. Each keeps a tenant's route lists and accounts in its own memory (`routing/route-cache.ts`),
 * and the bound is that a `PUT /routing` or a credentials change through one is obeyed by the other
 * within a second. The gateway obeys it sooner: the tenant's routing counter is checked by the payment's first
 * statement, so the other process's very next payment after the change's answer follows it — asserted so, with
 * no wait, though that process had just paid with (and kept) the old routing. Without the counter's check its
 * snapshot would be used for a minute and these assertions fail.
 *
 * Real servers only (a PGlite data directory is opened by one process); run through PgBouncer in transaction
 * pooling mode as well (`bun scripts/with-pgbouncer.ts`): the check is part of an ordinary statement, nothing
 * listens for notifications.
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

type Body = Record<string, any>;

const ROOT = join(import.meta.dir, "..", "..", "..");
const { DATABASE_URL, REDIS_URL } = process.env;
const onServers = Boolean(DATABASE_URL && REDIS_URL);
const SKIP_NOTE = onServers ? "" : " (SKIPPED: needs DATABASE_URL and REDIS_URL — a PGlite data directory is opened by one process)";

let dataDir: string;
/** The first process (workers, simulators) and the second (HTTP only). */
let first: string;
let second: string;
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
  dataDir = mkdtempSync(join(tmpdir(), "passerelle-routing-processes-"));
  named = await createNamedServerDatabase(DATABASE_URL!);
  prefix = testQueuePrefix();
  const port = await freePort();
  first = `http://127.0.0.1:${port}`;
  const env = {
    PORT: String(port),
    METRICS_PORT: String(await freePort()),
    DATA_DIR: dataDir,
    DATABASE_URL: named.url,
    REDIS_URL: REDIS_URL!,
    QUEUE_PREFIX: prefix,
    SIMULATOR_APPROVE_DELAY_MS: "200",
    // The route list's order decides: no payment is sent first to a weaker route at random.
    ROUTING_EXPLORE_SHARE: "0",
  };
  await spawnPasserelle(["serve"], env);
  const secondPort = await freePort();
  second = `http://127.0.0.1:${secondPort}`;
  await spawnPasserelle(["serve", "--no-workers"], {
    ...env,
    PORT: String(secondPort),
    METRICS_PORT: String(await freePort()),
    PROVIDER_A_SANDBOX_URL: `http://localhost:${port}/sandbox/providerA`,
    PROVIDER_B_SANDBOX_URL: `http://localhost:${port}/sandbox/providerB/sandbox-api/v1`,
  });
}, 120_000);

afterAll(async () => {
  if (!onServers) return;
  for (const child of processes) child.kill("SIGTERM");
  for (const child of processes) await child.exited;
  await named?.dispose();
  await deleteKeysUnderPrefix(REDIS_URL!, prefix);
  rmSync(dataDir, { recursive: true, force: true });
});

async function call(token: string, through: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }> {
  const response = await fetch(`${through}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Body };
}

let phone = 0;
const mtn = () => ({
  amount: 500,
  description: "Order",
  operator: "mtn",
  customer: { phone: { number: `+229971${String(++phone).padStart(5, "0")}`, country: "bj" }, email: "client@example.com" },
});
const wave = () => ({ amount: 500, description: "Order", operator: "wave", customer: { phone: { number: "+221770000123", country: "sn" } } });

describe("two gateway processes on one database", () => {
  it.skipIf(!onServers)(
    `a route list set, provider credentials deactivated and stored again through one are obeyed by the other's next payment${SKIP_NOTE}`,
    async () => {
      const config = loadConfig({ DATA_DIR: dataDir }, { createDevelopmentSecrets: false });
      const admin = await mintToken(config.jwt, { sub: "operator", role: "admin", environment: "sandbox" });
      const created = await call(admin, first, "POST", "/tenants", { name: "Boutique Deux Routes", storeName: "Boutique Dakar" });
      expect(created.status).toBe(200);
      const tenantId = created.body.tenant.id as string;
      const token = await mintToken(config.jwt, { sub: `tenant:${tenantId}`, tenantId, environment: "sandbox" });
      const keys = async () => (await fetch(`${first}/sandbox/providerB/_sim/accounts`, { method: "POST" })).json();
      const storedB = await call(token, first, "PUT", `/tenants/${tenantId}/credentials/providerB`, { ...(await keys()), environment: "sandbox" });
      expect(storedB.status).toBe(200);

      const pay = (through: string, body: Body) => call(token, through, "POST", "/payments", body);
      const routesQuoted = async (through: string, body: Body) => {
        const quote = await call(token, through, "POST", "/payments/quote", body);
        expect(quote.status).toBe(200);
        return { routes: quote.body.routes.map((r: Body) => r.provider), notConfigured: quote.body.notConfigured };
      };

      // The second process pays with the default list (provider A first) and keeps it.
      expect((await pay(second, mtn())).body.provider).toBe("providerA");
      expect((await pay(second, mtn())).body.provider).toBe("providerA");
      expect((await routesQuoted(second, mtn())).routes).toEqual(["providerA", "providerB"]);

      // A route list set through the first: the second's next payment follows it.
      const put = await call(token, first, "PUT", "/routing", { rules: [{ operator: "mtn", country: "bj", providers: ["providerB", "providerA"] }] });
      expect(put.status).toBe(200);
      expect(await pay(second, mtn())).toMatchObject({ status: 200, body: { provider: "providerB", credentialVersion: storedB.body.version } });
      expect((await routesQuoted(second, mtn())).routes).toEqual(["providerB", "providerA"]);
      expect(await pay(second, wave())).toMatchObject({ status: 200, body: { provider: "providerB" } });

      // Provider B's credentials deactivated through the first: the second has no provider B account for the tenant.
      expect((await call(token, first, "DELETE", `/tenants/${tenantId}/credentials/providerB/sandbox`)).status).toBe(200);
      expect(await pay(second, mtn())).toMatchObject({ status: 200, body: { provider: "providerA" } });
      expect(await pay(second, wave())).toMatchObject({ status: 424, body: { code: "not_configured" } });
      expect(await routesQuoted(second, wave())).toMatchObject({ routes: [], notConfigured: expect.stringContaining("provider B credentials") });

      // Stored again through the first (a new version): the second pays on it at once, though it had just refused.
      const again = await call(token, first, "PUT", `/tenants/${tenantId}/credentials/providerB`, { ...(await keys()), environment: "sandbox" });
      expect(again.status).toBe(200);
      expect(again.body.version).toBeGreaterThan(storedB.body.version);
      expect(await pay(second, wave())).toMatchObject({ status: 200, body: { provider: "providerB", credentialVersion: again.body.version } });
      expect(await pay(second, mtn())).toMatchObject({ status: 200, body: { provider: "providerB", credentialVersion: again.body.version } });

      // And back to the default list through the first.
      expect((await call(token, first, "PUT", "/routing", { rules: [{ operator: "mtn", country: "bj", providers: [] }] })).status).toBe(200);
      expect(await pay(second, mtn())).toMatchObject({ status: 200, body: { provider: "providerA" } });
    },
    120_000,
  );
});
