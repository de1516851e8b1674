#!/usr/bin/env bun
/**
 * Provider B figures (issue 6, point 6), on PostgreSQL + Redis: `bun bench/provider-b.ts [--n 2000] [--c 20]`.
 *
 * - checkout creation: `POST /providerB/checkout` through the gateway vs `POST …/checkout-invoice/create`
 *   straight to the simulator, same body size, same concurrency (ratio);
 * - IPN intake: verified IPNs (bracket form, correct hash) posted to `POST /providerB/webhook`, stored and
 *   answered per second, and the time from posting each IPN until the tenant's webhook receives its
 *   `payment.completed`.
 *
 * Unlike `bun run bench`, this runs the gateway in this process (the test rig: the same code as `serve`,
 * HTTP on its own port, BullMQ workers) and a fetch loop as the load: the generator, the gateway and the
 * simulator share one process and the machine's two cores, so read the ratio rather than the rates.
 */
import { parseArgs } from "node:util";
import { encodePhpForm } from "../src/providers/simulators/providerB/php-form.ts";
import { createTestDatabase, startRigGateway, startSimulator } from "../test/support/provider-b-rig.ts";
import { startReceiver } from "../test/support/webhook-receiver.ts";

const { values } = parseArgs({ options: { n: { type: "string", default: "2000" }, c: { type: "string", default: "20" } } });
const N = Number(values.n);
const C = Number(values.c);
process.env.DATABASE_URL ??= "postgres://postgres@127.0.0.1:5432/postgres";
process.env.REDIS_URL ??= "redis://127.0.0.1:6379";

/** Runs `task(i)` for i in [0, n) with `c` in flight; returns seconds and sorted latencies (ms). */
async function loop(n: number, c: number, task: (i: number) => Promise<void>): Promise<{ seconds: number; latencies: number[] }> {
  let next = 0;
  const latencies: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: c }, async () => {
      for (let i = next++; i < n; i = next++) {
        const t = performance.now();
        await task(i);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { seconds: (performance.now() - started) / 1000, latencies: latencies.sort((a, b) => a - b) };
}
const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const fmt = (name: string, n: number, r: { seconds: number; latencies: number[] }) =>
  `${name.padEnd(58)} ${(n / r.seconds).toFixed(0).padStart(7)}/s  p50 ${pct(r.latencies, 50).toFixed(2).padStart(7)} ms  p99 ${pct(r.latencies, 99).toFixed(2).padStart(7)} ms`;

const sim = await startSimulator({ ipnRetryDelaysMs: [] });
const database = await createTestDatabase();
const receiver = await startReceiver();
// Provider B's own IPNs go nowhere: the bench posts the IPNs itself.
const gw = await startRigGateway({ sim, database, publicBaseUrl: "http://127.0.0.1:9", logLevel: "warn", workerOptions: { sweepEveryMs: 600_000 } });
try {
  const { tenantId, keys } = await gw.tenantWithAccount(sim);
  await gw.call("POST", "/webhooks", tenantId, { url: `${receiver.url}/hook` });
  // The tenant's rate limit is not what this measures.
  await fetch(`${gw.url}/tenants/${tenantId}`, {
    method: "PATCH",
    headers: { authorization: `Bearer ${await gw.adminToken()}`, "content-type": "application/json" },
    body: JSON.stringify({ rateLimit: { rps: 100_000, burst: 1_000_000 } }),
  });
  const token = await gw.tenantToken(tenantId);
  const body = JSON.stringify({ amount: 5000, description: "Bench", returnUrl: "https://shop.example/ok", cancelUrl: "https://shop.example/ko", customer: { name: "Awa" }, customData: { orderRef: "B-1" } });
  const gatewayHeaders = { authorization: `Bearer ${token}`, "x-tenant-id": tenantId, "content-type": "application/json" };
  const wireBody = JSON.stringify({
    invoice: { total_amount: 5000, description: "Bench", customer: { name: "Awa" }, items: { item_0: { name: "Bench", quantity: 1, unit_price: 5000, total_price: 5000 } } },
    store: { name: "Bench" },
    custom_data: { orderRef: "B-1", passerelle_payment_id: "pay_x" },
    actions: { cancel_url: "https://shop.example/ko", return_url: "https://shop.example/ok", callback_url: "http://127.0.0.1:9/providerB/webhook" },
  });
  const simHeaders = { "PAYDUNYA-MASTER-KEY": keys.masterKey, "PAYDUNYA-PRIVATE-KEY": keys.privateKey, "PAYDUNYA-TOKEN": keys.token, "content-type": "application/json" };

  // Warm-up, then the two rows.
  await loop(200, C, async () => void (await (await fetch(`${gw.url}/providerB/checkout`, { method: "POST", headers: gatewayHeaders, body })).arrayBuffer()));
  const direct = await loop(N, C, async () => void (await (await fetch(`${sim.url}/sandbox-api/v1/checkout-invoice/create`, { method: "POST", headers: simHeaders, body: wireBody })).arrayBuffer()));
  const tokens: string[] = [];
  let failures = 0;
  const viaGateway = await loop(N, C, async () => {
    const response = await fetch(`${gw.url}/providerB/checkout`, { method: "POST", headers: gatewayHeaders, body });
    const answer = (await response.json()) as { token?: string };
    if (response.status !== 200 || !answer.token) {
      if (failures++ === 0) console.error(`first failure: ${response.status} ${JSON.stringify(answer)}`);
    }
    else tokens.push(answer.token);
  });

  // IPN intake: pay each invoice at the simulator (its IPN goes nowhere), then post the IPN ourselves.
  const M = Math.min(N, tokens.length);
  await loop(M, C, async (i) => void (await sim.press(tokens[i]!, "pay")));
  const ipnBodies = await Promise.all(
    tokens.slice(0, M).map(async (t) => {
      const confirm = await fetch(`${sim.url}/sandbox-api/v1/checkout-invoice/confirm/${t}`, { headers: simHeaders });
      return encodePhpForm({ data: (await confirm.json()) as Record<string, unknown> });
    }),
  );
  const sentAt = new Map<string, number>();
  let ipnFailures = 0;
  const intake = await loop(M, C, async (i) => {
    sentAt.set(tokens[i]!, performance.now() + performance.timeOrigin);
    const response = await fetch(`${gw.url}/providerB/webhook`, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: ipnBodies[i]! });
    await response.arrayBuffer();
    if (response.status !== 200) ipnFailures++;
  });
  const deadline = Date.now() + 120_000;
  while (receiver.receipts.length < M && Date.now() < deadline) await Bun.sleep(50);
  const toWebhook = receiver.receipts
    .map((r) => {
      const event = JSON.parse(r.body) as { data: { providerTransactionId: string } };
      return r.receivedAt - sentAt.get(event.data.providerTransactionId)!;
    })
    .sort((a, b) => a - b);
  const lastArrival = Math.max(...receiver.receipts.map((r) => r.receivedAt));
  const firstSent = Math.min(...sentAt.values());

  console.log(`\nprovider B bench: ${N} requests, ${C} in flight, PostgreSQL + Redis (BullMQ), Bun ${Bun.version}\n`);
  console.log(fmt("straight to the simulator: checkout-invoice/create", N, direct));
  console.log(fmt("gateway: POST /providerB/checkout", N, viaGateway) + `  errors ${failures}  ratio ${(direct.seconds / viaGateway.seconds).toFixed(3)}`);
  console.log(fmt("gateway: POST /providerB/webhook (verified, stored, 200)", M, intake) + `  errors ${ipnFailures}`);
  console.log(
    `${"IPN posted → tenant webhook received payment.completed".padEnd(58)} ${(receiver.receipts.length / ((lastArrival - firstSent) / 1000)).toFixed(0).padStart(7)}/s  p50 ${pct(toWebhook, 50).toFixed(2).padStart(7)} ms  p99 ${pct(toWebhook, 99).toFixed(2).padStart(7)} ms  received ${receiver.receipts.length}/${M}`,
  );
} finally {
  await gw.close();
  await sim.stop();
  await receiver.stop();
  await database.dispose();
}
process.exit(0);
