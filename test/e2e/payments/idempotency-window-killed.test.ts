/**
 * The API process SIGKILLed after provider A pushed a `POST /payments`' prompt, before its answer was stored (issue
 * 28, the idempotency window, for money in), on the real servers: the merchant's client retries the same key on
 * another API node — 409 while the dead node's lock lasts, then the payment the dead node made, as it stands.
 * Before migration 0034 the retry made a second payment, and provider A pushed a second prompt to the phone.
 *
 * Provider A's own books (`GET /_sim/transactions`: one transaction, one push) and the merchant's list are asserted.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { openDatabase } from "../../../src/db/connect.ts";
import { createProviderASimulator, type ProviderASimulator } from "../../../src/providers/providerA/simulator/mod.ts";
import type { TestDatabase } from "../../support/db.ts";
import { createNamedServerDatabase } from "../../support/delivery-gateway.ts";
import { TEST_ENV } from "../../support/gateway.ts";
import type { Json } from "../../support/json.ts";
import { freePort } from "../../support/ports.ts";
import { startRigGateway, startSimulator, type RigGateway, type SimulatorServer } from "../../support/provider-b-rig.ts";
import { deleteKeysUnderPrefix, testQueuePrefix } from "../../support/redis.ts";
import { waitForStart, waitReady } from "../../support/spawned-gateway.ts";
import { waitUntil } from "../../support/wait.ts";

const { DATABASE_URL, REDIS_URL } = process.env;
const onServers = Boolean(DATABASE_URL && REDIS_URL);
const SKIP_NOTE = onServers ? "" : " (SKIPPED: needs DATABASE_URL and REDIS_URL)";

let simA: ProviderASimulator;
let simAServer: ReturnType<typeof Bun.serve> | undefined;
let proxy: ReturnType<typeof Bun.serve> | undefined;
let proxyUrl: string;
let account: { secretKey: string; webhookSecret: string };
/** Runs after provider A answered a push (the prompt is on the phone), before the answer goes back. */
let afterPush: (() => Promise<void>) | undefined;

let simB: SimulatorServer;
let named: { url: string; dispose(): Promise<void> };
let db: TestDatabase;
let parent: RigGateway;
let prefix: string;

/** Provider A's own books: the transactions it made for the tenant's payments (by our id, its merchant reference). */
async function providerTransactionsOf(tenantId: string): Promise<Json[]> {
  const ours = new Set((await parent.gateway.deps.db.selectFrom("payments").select("id").where("tenant_id", "=", tenantId).execute()).map((r) => r.id));
  const books = (await (await fetch(`${proxyUrl}/_sim/transactions`)).json()) as { transactions: Json[] };
  return books.transactions.filter((t) => ours.has(t.merchant_reference));
}

beforeAll(async () => {
  if (!onServers) return;
  simA = createProviderASimulator({ approveDelayMs: 50 });
  simAServer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: simA.fetch });
  const simBase = simAServer.url.toString().replace(/\/$/, "");
  // In front of provider A: a push (`POST /v1/{mode}`) is answered by the simulator, then held by `afterPush`.
  proxy = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 60,
    async fetch(request) {
      const url = new URL(request.url);
      const body = request.method === "GET" ? undefined : await request.arrayBuffer();
      const headers = new Headers(request.headers);
      headers.delete("host");
      const upstream = await fetch(`${simBase}${url.pathname}${url.search}`, { method: request.method, headers, body, redirect: "manual" });
      const isPush =
        request.method === "POST" && /^\/v1\/[a-z0-9_]+$/.test(url.pathname) && url.pathname !== "/v1/transactions" && url.pathname !== "/v1/payouts";
      if (!isPush || !afterPush) return upstream;
      const answer = await upstream.arrayBuffer();
      await afterPush();
      return new Response(answer, { status: upstream.status, headers: upstream.headers });
    },
  });
  proxyUrl = proxy.url.toString().replace(/\/$/, "");
  account = (await (await fetch(`${proxyUrl}/_sim/accounts`, { method: "POST" })).json()) as typeof account;
  simB = await startSimulator();
  named = await createNamedServerDatabase(DATABASE_URL!);
  const handle = await openDatabase({ driver: "postgres", url: named.url, max: 5 });
  db = { ...handle, audited: true, dispose: async () => (await handle.close(), await named.dispose()) } as TestDatabase;
  prefix = testQueuePrefix();
  parent = await startRigGateway({
    sim: simB,
    database: db,
    prefix,
    env: { PROVIDER_A_SANDBOX_URL: proxyUrl, PROVIDER_A_SANDBOX_SECRET_KEY: account.secretKey, PROVIDER_A_SANDBOX_WEBHOOK_SECRET: account.webhookSecret },
  });
}, 60_000);

afterAll(async () => {
  if (!onServers) return;
  await parent?.close();
  await deleteKeysUnderPrefix(REDIS_URL!, prefix);
  await db?.dispose();
  await simB?.stop();
  await proxy?.stop(true);
  simA?.close();
  await simAServer?.stop(true);
});

describe("POST /payments on an API process killed after the push", () => {
  it.skipIf(!onServers)(
    `the retry on another node answers the dead node's payment: one payment, one push${SKIP_NOTE}`,
    async () => {
      const { tenantId } = await parent.tenantWithAccount(simB);
      const port = await freePort();
      // Another API node on the same database and Redis; its lock term is short so the test need not wait a minute.
      const node = Bun.spawn(["bun", "src/main.ts", "serve", "--no-workers"], {
        env: {
          ...(process.env as Record<string, string>),
          ...TEST_ENV,
          PORT: String(port),
          METRICS_PORT: String(await freePort()),
          LOG_LEVEL: "info",
          DATABASE_URL: named.url,
          REDIS_URL: REDIS_URL!,
          QUEUE_PREFIX: prefix,
          PUBLIC_BASE_URL: parent.url,
          PROVIDER_A_SANDBOX_URL: proxyUrl,
          PROVIDER_A_SANDBOX_SECRET_KEY: account.secretKey,
          PROVIDER_A_SANDBOX_WEBHOOK_SECRET: account.webhookSecret,
          PROVIDER_B_SANDBOX_URL: `${simB.url}/sandbox-api/v1`,
          PROVIDER_B_LIVE_URL: `${simB.url}/api/v1`,
          PROVIDER_TIMEOUT_MS: "1000",
          IDEMPOTENCY_LOCK_MS: "8000",
        },
        stdin: "ignore",
        stdout: "pipe",
        stderr: "inherit",
      });
      try {
        await waitForStart(node, 20_000);
        await waitReady(port);
        const key = `order-${crypto.randomUUID()}`;
        // 1000–5000: the sandbox keeps it pending until its console settles it.
        const body = { amount: 2500, description: "Order 11", operator: "mtn", customer: { phone: { number: "+22997000301", country: "bj" } } };
        let pushed = 0;
        afterPush = async () => {
          if (pushed++ > 0) return;
          node.kill("SIGKILL");
          await node.exited;
        };
        const token = await parent.tenantToken(tenantId);
        const lost = await fetch(`http://127.0.0.1:${port}/payments`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "idempotency-key": key },
          body: JSON.stringify(body),
        }).then(
          async (r) => `${r.status} ${await r.text()}`,
          (error: unknown) => `no answer (${String(error)})`,
        );
        await node.exited;
        expect(node.signalCode, lost).toBe("SIGKILL");
        expect(lost).toStartWith("no answer");
        afterPush = undefined;
        const pushedOnce = await providerTransactionsOf(tenantId);
        expect(pushedOnce.map((t) => t.push_sent)).toEqual([true]);

        // The merchant's client tries the other node with the same key: 409 while the dead node's lock lasts, then the payment.
        const answer = await waitUntil(
          async () => {
            const tried = await parent.call("POST", "/payments", tenantId, body, { "idempotency-key": key });
            if (tried.status === 409) return undefined;
            return { status: tried.status, body: (await tried.json()) as Json };
          },
          { what: "the retry past the dead node's lock", timeoutMs: 30_000, intervalMs: 250 },
        );
        expect(answer.status, JSON.stringify(answer.body)).toBe(200);
        expect(answer.body).toMatchObject({ id: pushedOnce[0]!.merchant_reference, state: "pending" });
        const twice = await Promise.all([
          parent.call("POST", "/payments", tenantId, body, { "idempotency-key": key }).then(async (r) => (await r.json()) as Json),
          parent.call("POST", "/payments", tenantId, body, { "idempotency-key": key }).then(async (r) => (await r.json()) as Json),
        ]);
        for (const t of twice) expect(t.id).toBe(answer.body.id);

        const listed = (await (await parent.call("GET", "/payments", tenantId)).json()) as Json;
        expect(listed.data.map((p: Json) => p.id)).toEqual([answer.body.id]);
        expect((await providerTransactionsOf(tenantId)).map((t) => [t.merchant_reference, t.push_sent])).toEqual([[answer.body.id, true]]);
      } finally {
        afterPush = undefined;
        node.kill("SIGKILL");
        await node.exited;
      }
    },
    90_000,
  );
});
