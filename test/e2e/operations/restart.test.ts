/**
 * Restarting the quick start keeps payments working (issue 25, point 1). `bun src/main.ts serve` on a fresh
 * DATA_DIR, with the simulators mounted as `bun run start` has them: a tenant stores provider B sandbox
 * keys made on the provider B simulator and pays three times (two `POST /payments` on the pooled provider A
 * account, one spec `POST /providerA/direct-payment`) and once with the provider B keys; the process stops
 * on SIGTERM and starts again on the same DATA_DIR. The next three payments and the provider B one all
 * succeed, with provider ids never seen before, and a refund of a payment made before the restart is sent
 * from the pooled account. Then the process is killed (SIGKILL) and started again: four more payments
 * succeed, still with new provider ids. (Before issue 25 the provider A simulator started its ids at 1 again — a 500 —
 * and the provider B simulator had forgotten the keys.)
 *
 * Embedded pass: PGlite under DATA_DIR and in-process jobs, the quick start itself. Server pass: the same
 * process on a database and a Redis prefix of its own.
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
import { cleanEnv, waitReady } from "../../support/spawned-gateway.ts";
import { waitUntil } from "../../support/wait.ts";

type Body = Record<string, any>;

const ROOT = join(import.meta.dir, "..", "..", "..");
const { DATABASE_URL, REDIS_URL } = process.env;
const onServers = Boolean(DATABASE_URL && REDIS_URL);

let dataDir: string;
let env: Record<string, string>;
let base: string;
let named: { url: string; dispose(): Promise<void> } | undefined;
let prefix: string | undefined;
let server: Bun.Subprocess | undefined;

async function startServe(): Promise<void> {
  server = Bun.spawn(["bun", "src/main.ts", "serve"], { cwd: ROOT, env: cleanEnv(env), stdout: "ignore", stderr: "inherit" });
  await waitReady(Number(env.PORT), 60_000);
}

async function stopServe(): Promise<void> {
  server!.kill("SIGTERM");
  expect(await server!.exited).toBe(0);
  server = undefined;
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "passerelle-restart-"));
  const port = await freePort();
  base = `http://127.0.0.1:${port}`;
  env = { PORT: String(port), METRICS_PORT: String(await freePort()), DATA_DIR: dataDir, SIMULATOR_APPROVE_DELAY_MS: "200" };
  if (onServers) {
    named = await createNamedServerDatabase(DATABASE_URL!);
    prefix = testQueuePrefix();
    Object.assign(env, { DATABASE_URL: named.url, REDIS_URL: REDIS_URL!, QUEUE_PREFIX: prefix });
  }
}, 30_000);

afterAll(async () => {
  server?.kill("SIGKILL");
  await server?.exited;
  await named?.dispose();
  if (prefix) await deleteKeysUnderPrefix(REDIS_URL!, prefix);
  rmSync(dataDir, { recursive: true, force: true });
});

async function call(token: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
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
    { what: `${path} settled`, timeoutMs: 30_000, intervalMs: 100 },
  );
}

/** Three provider A payments (two `POST /payments`, one spec call) and one provider B payment with the stored keys; each must succeed. Answers their payments. */
async function payFourTimes(token: string, round: string): Promise<Body[]> {
  const answers = [
    await call(token, "POST", "/payments", {
      amount: 600,
      description: `${round} 1`,
      operator: "mtn",
      customer: { phone: { number: "+22997000000", country: "bj" } },
    }),
    await call(token, "POST", "/payments", {
      amount: 700,
      description: `${round} 2`,
      operator: "mtn",
      customer: { phone: { number: "+22997000001", country: "bj" } },
    }),
    await call(token, "POST", "/providerA/direct-payment", {
      amount: 800,
      description: `${round} 3`,
      payment_method: "mnoA_open",
      phone_number: { number: "+22997000002", country: "bj" },
    }),
    await call(token, "POST", "/payments", {
      amount: 500,
      description: `${round} provider B`,
      operator: "orange",
      otp: "123456",
      customer: { phone: { number: "+2250701020304", country: "ci" } },
    }),
  ];
  for (const answer of answers) expect({ status: answer.status, body: answer.body }).toMatchObject({ status: 200 });
  const ids = answers.map((answer, index) => (index === 2 ? (answer.body.paymentId as string | undefined) : (answer.body.id as string | undefined)));
  // The spec's answer names provider A's transaction; our payment is found by it.
  if (!ids[2]) {
    const listed = await call(token, "GET", `/payments?providerTransactionId=${answers[2]!.body.transactionId}`);
    ids[2] = listed.body.data[0].id;
  }
  const payments: Body[] = [];
  for (const id of ids) payments.push(await settled(token, `/payments/${id}`));
  for (const payment of payments) expect({ id: payment.id, state: payment.state }).toEqual({ id: payment.id, state: "succeeded" });
  expect(payments.map((payment) => payment.provider)).toEqual(["providerA", "providerA", "providerA", "providerB"]);
  return payments;
}

describe(`passerelle serve, stopped and started again on the same DATA_DIR${onServers ? " (real servers)" : " (the quick start: PGlite, in-process jobs)"}`, () => {
  it("keeps taking payments on the pooled provider A account and with provider B keys stored before the restart", async () => {
    await startServe();
    const config = loadConfig({ DATA_DIR: dataDir }, { createDevelopmentSecrets: false });
    const admin = await mintToken(config.jwt, { sub: "operator", role: "admin", environment: "sandbox" });
    const created = await call(admin, "POST", "/tenants", { name: "Boutique Restart" });
    expect(created.status).toBe(200);
    const tenantId = created.body.tenant.id as string;
    const token = await mintToken(config.jwt, { sub: `tenant:${tenantId}`, tenantId, environment: "sandbox" });
    const keys = (await (await fetch(`${base}/sandbox/providerB/_sim/accounts`, { method: "POST" })).json()) as Body;
    const stored = await call(token, "PUT", `/tenants/${tenantId}/credentials/providerB`, { environment: "sandbox", ...keys });
    expect(stored.status).toBe(200);

    const before = await payFourTimes(token, "Before");
    await stopServe();
    await startServe();
    const after = await payFourTimes(token, "After");

    // Provider ids are never handed out twice for one account.
    const providerA = [...before, ...after].filter((payment) => payment.provider === "providerA").map((payment) => payment.providerTransactionId);
    expect(new Set(providerA).size).toBe(6);

    // A payment of before the restart is refunded from the pooled account.
    const refund = await call(token, "POST", `/payments/${before[0]!.id}/refunds`, { amount: 300, reason: "After the restart" });
    expect(refund.status).toBe(200);
    expect((await settled(token, `/refunds/${refund.body.id}`)).state).toBe("succeeded");

    // Killed rather than stopped: the simulators' last writes may be lost, their ids jump ahead instead of repeating.
    server!.kill("SIGKILL");
    await server!.exited;
    await startServe();
    const afterKill = await payFourTimes(token, "After a kill");
    const allProviderA = [...before, ...after, ...afterKill].filter((payment) => payment.provider === "providerA");
    expect(new Set(allProviderA.map((payment) => payment.providerTransactionId)).size).toBe(9);
    await stopServe();
  }, 180_000);
});
