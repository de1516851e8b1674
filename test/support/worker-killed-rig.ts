/**
 * The rig of the worker-killed tests (test/e2e/money-out/worker-killed-provider-*.test.ts), on the real servers:
 * provider A's and provider B's simulators behind a proxy that can SIGKILL the `passerelle worker` process
 * around a sending call (before it reaches the provider, or after the provider acted and before the answer),
 * a gateway serving HTTP only on a database of its own, and that worker, started again at will. Call
 * `workerKilledRig()` once at a file's top level: it starts the rig before the file's tests (on the real-server
 * pass only) and stops it after them.
 */
import { afterAll, beforeAll, expect } from "bun:test";
import { openDatabase } from "../../src/db/connect.ts";
import { createProviderASimulator, type ProviderASimulator } from "../../src/providers/providerA/simulator/mod.ts";
import { sweepPayoutSyncs } from "../../src/services/payouts/advance-payout.ts";
import type { TestDatabase } from "./db.ts";
import { createNamedServerDatabase } from "./delivery-gateway.ts";
import { TEST_ENV } from "./gateway.ts";
import { startRigGateway, startSimulator, type RigGateway, type SimulatorServer } from "./provider-b-rig.ts";
import { deleteKeysUnderPrefix, testQueuePrefix } from "./redis.ts";
import { waitForStart } from "./spawned-gateway.ts";
import { waitUntil } from "./wait.ts";

const { DATABASE_URL, REDIS_URL } = process.env;
export const onServers = Boolean(DATABASE_URL && REDIS_URL);
export const SKIP_NOTE = onServers ? "" : " (SKIPPED: needs DATABASE_URL and REDIS_URL)";

export type Body = Record<string, any>;

/** What the rig does when a sending call reaches the provider: nothing, or kill the worker before or after the provider acts. */
export type Fault = { when: "before" | "after"; path: RegExp } | undefined;

export type WorkerKilledRig = ReturnType<typeof workerKilledRig>;

export function workerKilledRig() {
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

  /**
   * Waits until the payout is final, sweeping (as the sweeper's repeatable job does) while it waits: up to its
   * sync chain's 60-s step and beyond (a worker killed before the start leaves it to a later step; on a loaded
   * machine the 30-s step's read can come after the 60-s step's due time, and 60 s from the restart ran out).
   */
  async function settledPayout(tenantId: string, payoutId: string): Promise<Body> {
    return waitUntil(
      async () => {
        await sweepPayoutSyncs(parent.gateway.deps);
        const read = await call(tenantId, "GET", `/payouts/${payoutId}`);
        return read.body.state === "pending" ? undefined : read.body;
      },
      { what: `payout ${payoutId} settled by the restarted worker`, timeoutMs: 120_000, intervalMs: 500 },
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

  return {
    /** The paths of the sending calls (provider A's payout starts, provider B's invoice submits) the providers were sent, in order. */
    sendingCalls,
    /** Kills the worker around the next sending call whose path matches. */
    arm(next: Fault) {
      fault = next;
    },
    startWorker,
    killWorker: () => killWorker(),
    /** True once the current worker was SIGKILLed. */
    workerKilled: () => worker?.signalCode === "SIGKILL",
    call,
    settledPayout,
    tenantWithBalance,
    get db(): TestDatabase {
      return db;
    },
    /** Provider A's simulator, as the gateway reaches it. */
    get serverA(): ReturnType<typeof Bun.serve> {
      return serverA;
    },
    get simB(): SimulatorServer {
      return simB;
    },
  };
}

/**
 * Provider A (issue 15, point 3): a payout whose worker is SIGKILLed around its start call — `before` it
 * reaches the provider, or `after` the provider acted and before its answer — is settled by a fresh worker
 * from the provider: one payout at the provider for the one request, started once in all, ours `sent` once.
 */
export async function providerAKilledMidPayout(rig: WorkerKilledRig, when: "before" | "after"): Promise<void> {
  await rig.startWorker();
  const tenantId = await rig.tenantWithBalance(5000);
  rig.arm({ when, path: /\/v1\/payouts\/start$/ });
  const startsBefore = rig.sendingCalls.length;
  const created = await rig.call(tenantId, "POST", "/payouts", {
    amount: 700,
    description: "Killed mid-way",
    recipient: { phone: { number: when === "before" ? "+22996100001" : "+22996100002", country: "bj" }, operator: "mtn" },
  });
  expect(created.status).toBe(200);
  await waitUntil(() => rig.workerKilled(), { what: "the worker killed at the start call", timeoutMs: 20_000, intervalMs: 50 });
  await rig.startWorker();
  const settled = await rig.settledPayout(tenantId, created.body.id);
  expect(settled.state).toBe("sent");
  const atProvider = (await (await fetch(`${rig.serverA.url}_sim/payouts`)).json()) as { payouts: Body[] };
  const ours = atProvider.payouts.filter((p) => p.merchant_reference === created.body.id);
  expect(ours).toHaveLength(1);
  expect(ours[0]!.status).toBe("sent");
  // Killed before: the start never reached the provider, the new worker started it (once). After: the provider had it, nobody started it again.
  expect(rig.sendingCalls.length - startsBefore).toBe(when === "before" ? 2 : 1);
  const ledger = await rig.db.db.selectFrom("ledger_entries").select(["journal", "account", "amount"]).where("subject_id", "=", created.body.id).execute();
  expect(ledger.map((e) => e.journal.split(".")[1]).sort()).toEqual(["reserved", "reserved", "sent", "sent"]);
  await rig.killWorker();
}
