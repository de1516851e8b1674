/**
 * Never twice, on the real servers (issue 15, point 3): a `passerelle worker` process SIGKILLed between
 * the steps of a payout — after provider A created it and before its start reached the provider, after the
 * start acted but before its answer came back; after provider B's get-invoice and before its submit — and
 * a fresh worker settles it from the provider: exactly one payout (or disbursement) at the provider for
 * the one request, and ours `sent` once.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { openDatabase } from "../../../src/db/connect.ts";
import { createProviderASimulator, type ProviderASimulator } from "../../../src/providers/providerA/simulator/mod.ts";
import { sweepPayoutSyncs } from "../../../src/services/payouts/advance-payout.ts";
import { createNamedServerDatabase } from "../../support/delivery-gateway.ts";
import type { TestDatabase } from "../../support/db.ts";
import { TEST_ENV } from "../../support/gateway.ts";
import { startRigGateway, startSimulator, type RigGateway, type SimulatorServer } from "../../support/provider-b-rig.ts";
import { deleteKeysUnderPrefix, testQueuePrefix } from "../../support/redis.ts";
import { waitForStart } from "../../support/spawned-gateway.ts";
import { waitUntil } from "../../support/wait.ts";

const { DATABASE_URL, REDIS_URL } = process.env;
const onServers = Boolean(DATABASE_URL && REDIS_URL);
const SKIP_NOTE = onServers ? "" : " (SKIPPED: needs DATABASE_URL and REDIS_URL)";

type Body = Record<string, any>;

/** What the test does when a sending call reaches the provider: nothing, or kill the worker before or after the provider acts. */
type Fault = { when: "before" | "after"; path: RegExp } | undefined;

let fault: Fault;
let killWorker: () => Promise<void> = async () => undefined;
const sendingCalls: string[] = [];

/** Forwards to `next`, killing the worker around a sending call when a fault is set (a killed worker's call is never answered). */
async function around(request: Request, next: (request: Request) => Promise<Response>): Promise<Response> {
  const path = new URL(request.url).pathname;
  const armed = fault?.path.test(path) ? fault : undefined;
  if (/payouts\/start|submit-invoice/.test(path)) sendingCalls.push(path);
  if (!armed) return next(request);
  fault = undefined;
  if (armed.when === "before") {
    await killWorker();
    return new Response("worker gone", { status: 503 });
  }
  const answer = await next(request);
  await killWorker();
  return answer;
}

let simA: ProviderASimulator;
let serverA: ReturnType<typeof Bun.serve>;
let simB: SimulatorServer;
let named: { url: string; dispose(): Promise<void> };
let db: TestDatabase;
let parent: RigGateway;
let prefix: string;
let workerEnv: Record<string, string>;
let worker: Bun.Subprocess<"ignore", "pipe", "inherit"> | undefined;

async function startWorker(): Promise<void> {
  const child = Bun.spawn(["bun", "src/main.ts", "worker"], { env: workerEnv, stdin: "ignore", stdout: "pipe", stderr: "inherit" });
  worker = child;
  killWorker = async () => {
    child.kill("SIGKILL");
    await child.exited;
  };
  await waitForStart(child, 20_000);
}

async function call(tenantId: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }> {
  const response = await parent.call(method, path, tenantId, body);
  return { status: response.status, body: (await response.json()) as Body };
}

/** Waits until the payout is final, sweeping (as the sweeper's repeatable job does) while it waits. */
async function settledPayout(tenantId: string, payoutId: string): Promise<Body> {
  return waitUntil(
    async () => {
      await sweepPayoutSyncs(parent.gateway.deps);
      const read = await call(tenantId, "GET", `/payouts/${payoutId}`);
      return read.body.state === "pending" ? undefined : read.body;
    },
    { what: `payout ${payoutId} settled by the restarted worker`, timeoutMs: 60_000, intervalMs: 500 },
  );
}

/** A tenant whose ledger holds `amount` XOF collected (a succeeded payment: the ledger's trigger credits it). */
async function tenantWithBalance(amount: number): Promise<string> {
  const tenantId = `ten_${crypto.randomUUID().replaceAll("-", "").slice(0, 26).toUpperCase()}`;
  await db.db.insertInto("tenants").values({ id: tenantId, name: "Killed", store_name: "Killed" }).execute();
  await db.db
    .insertInto("payments")
    .values({
      id: `pay_${crypto.randomUUID().replaceAll("-", "").slice(0, 26).toUpperCase()}`,
      tenant_id: tenantId,
      environment: "sandbox",
      provider: "providerA",
      kind: "direct_payment",
      provider_account: "service",
      state: "succeeded",
      amount,
      currency: "XOF",
      description: "collected",
    })
    .execute();
  return tenantId;
}

beforeAll(async () => {
  if (!onServers) return;
  simA = createProviderASimulator({ approveDelayMs: 50 });
  serverA = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: (request) => around(request, async (r) => simA.fetch(r)) });
  const simABase = serverA.url.toString().replace(/\/$/, "");
  const accountA = (await (await fetch(`${simABase}/_sim/accounts`, { method: "POST" })).json()) as { secretKey: string; webhookSecret: string };
  simB = await startSimulator({ around });
  named = await createNamedServerDatabase(DATABASE_URL!);
  const handle = await openDatabase({ driver: "postgres", url: named.url, max: 5 });
  db = { ...handle, dispose: async () => (await handle.close(), await named.dispose()) } as TestDatabase;
  prefix = testQueuePrefix();
  const env = {
    PROVIDER_A_SANDBOX_URL: simABase,
    PROVIDER_A_SANDBOX_SECRET_KEY: accountA.secretKey,
    PROVIDER_A_SANDBOX_WEBHOOK_SECRET: accountA.webhookSecret,
    PROVIDER_TIMEOUT_MS: "1000",
  };
  // The HTTP side only; `passerelle worker` runs every job.
  parent = await startRigGateway({ sim: simB, database: db, workers: false, prefix, env });
  workerEnv = {
    ...(process.env as Record<string, string>),
    ...TEST_ENV,
    ...env,
    LOG_LEVEL: "info",
    DATABASE_URL: named.url,
    REDIS_URL: REDIS_URL!,
    QUEUE_PREFIX: prefix,
    PUBLIC_BASE_URL: parent.url,
    PROVIDER_B_SANDBOX_URL: `${simB.url}/sandbox-api/v1`,
    PROVIDER_B_LIVE_URL: `${simB.url}/api/v1`,
  };
});

afterAll(async () => {
  if (!onServers) return;
  worker?.kill("SIGKILL");
  await parent?.close();
  simA?.close();
  await serverA?.stop(true);
  await simB?.stop();
  await db?.dispose();
  await deleteKeysUnderPrefix(REDIS_URL!, prefix);
});

describe("a worker killed between the steps of a payout", () => {
  for (const when of ["before", "after"] as const) {
    it.skipIf(!onServers)(
      `provider A: killed ${when === "before" ? "after the create, before the start reached the provider" : "after the start acted, before its answer"}; one payout, sent once${SKIP_NOTE}`,
      async () => {
        await startWorker();
        const tenantId = await tenantWithBalance(5000);
        fault = { when, path: /\/v1\/payouts\/start$/ };
        const startsBefore = sendingCalls.length;
        const created = await call(tenantId, "POST", "/payouts", {
          amount: 700,
          description: "Killed mid-way",
          recipient: { phone: { number: when === "before" ? "+22996100001" : "+22996100002", country: "bj" }, operator: "mtn" },
        });
        expect(created.status).toBe(200);
        await waitUntil(() => worker?.signalCode === "SIGKILL", { what: "the worker killed at the start call", timeoutMs: 20_000, intervalMs: 50 });
        await startWorker();
        const settled = await settledPayout(tenantId, created.body.id);
        expect(settled.state).toBe("sent");
        const atProvider = (await (await fetch(`${serverA.url}_sim/payouts`)).json()) as { payouts: Body[] };
        const ours = atProvider.payouts.filter((p) => p.merchant_reference === created.body.id);
        expect(ours).toHaveLength(1);
        expect(ours[0]!.status).toBe("sent");
        // Killed before: the start never reached the provider, the new worker started it (once). After: the provider had it, nobody started it again.
        expect(sendingCalls.length - startsBefore).toBe(when === "before" ? 2 : 1);
        const ledger = await db.db.selectFrom("ledger_entries").select(["journal", "account", "amount"]).where("subject_id", "=", created.body.id).execute();
        expect(ledger.map((e) => e.journal.split(".")[1]).sort()).toEqual(["reserved", "reserved", "sent", "sent"]);
        await killWorker();
      },
      90_000,
    );
  }

  it.skipIf(!onServers)(
    `provider B: killed after get-invoice, before the submit reached the provider; one disbursement, submitted once${SKIP_NOTE}`,
    async () => {
      await startWorker();
      const tenantId = await tenantWithBalance(1);
      const keys = await simB.account();
      await fetch(`${simB.url}/_sim/accounts/${keys.masterKey}/balances`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ SN: 50_000 }),
      });
      const stored = await call(tenantId, "PUT", `/tenants/${tenantId}/credentials/providerB`, { environment: "sandbox", ...keys });
      expect(stored.status).toBe(200);
      fault = { when: "before", path: /submit-invoice$/ };
      const submitsBefore = sendingCalls.length;
      const created = await call(tenantId, "POST", "/payouts", {
        amount: 700,
        description: "Killed mid-way",
        recipient: { phone: { number: "+221770000001", country: "sn" }, operator: "wave" },
      });
      expect(created.status).toBe(200);
      expect(created.body.provider).toBe("providerB");
      await waitUntil(() => worker?.signalCode === "SIGKILL", { what: "the worker killed at the submit call", timeoutMs: 20_000, intervalMs: 50 });
      // The token was recorded before the submit was sent.
      const row = await db.db.selectFrom("payouts").selectAll().where("id", "=", created.body.id).executeTakeFirstOrThrow();
      expect(row.provider_payout_id).not.toBeNull();
      await startWorker();
      const settled = await settledPayout(tenantId, created.body.id);
      expect(settled).toMatchObject({ state: "sent", providerPayoutId: row.provider_payout_id });
      expect(sendingCalls.length - submitsBefore).toBe(2);
      const disbursements = ((await (await fetch(`${simB.url}/_sim/disbursements`)).json()) as { disbursements: Body[] }).disbursements;
      const ours = disbursements.filter((d) => d.disburse_id === created.body.id);
      expect(ours).toHaveLength(1);
      expect(ours[0]).toMatchObject({ status: "success", submits: 1 });
      await killWorker();
    },
    90_000,
  );
});
