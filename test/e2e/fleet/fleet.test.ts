/**
 * The gateway as a fleet (issue 28 point 1): `deploy/fleet/fleet.ts` starts HAProxy in front of two API nodes,
 * two workers, PgBouncer in transaction mode in front of PostgreSQL, a Redis Cluster of three masters and one
 * provider sandbox; this
 * file talks to the balancer only, as a merchant would. A payment, its webhook, a refund and a payout go
 * through whichever node and worker take them; one Idempotency-Key sent to each node answers one payout;
 * the rate limit is one bucket across the nodes; a node killed mid-run leaves the fleet answering; and what
 * the balancer answers itself is in the contract's error shape.
 *
 * Real servers only (the fleet is PostgreSQL and Redis behind their poolers); skipped, saying so, without
 * Debian's haproxy, pgbouncer and redis-server.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { join } from "node:path";
import { type Fleet, startFleet } from "../../../deploy/fleet/fleet.ts";
import { hasBinary, REPO_ROOT } from "../../../deploy/fleet/processes.ts";
import { onServerPass } from "../../support/passes.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";
import { waitUntil } from "../../support/wait.ts";

const missing = ["haproxy", "pgbouncer", "redis-server", "redis-cli"].filter((name) => !hasBinary(name));
const runs = onServerPass && missing.length === 0;
const why = !onServerPass ? "the real-server pass runs it (PostgreSQL and Redis)" : `not installed: ${missing.join(", ")}`;

let fleet: Fleet;
let receiver: WebhookReceiver;
let token: string;
type Body = Record<string, unknown>;

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
  base?: string,
): Promise<{ status: number; body: Body; headers: Headers }> {
  const response = await fetch(`${base ?? fleet.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Body, headers: response.headers };
}

async function until(what: string, path: string, done: (body: Body) => boolean): Promise<Body> {
  return waitUntil(
    async () => {
      const read = await call("GET", path);
      return done(read.body) ? read.body : undefined;
    },
    { what, timeoutMs: 30_000, intervalMs: 250 },
  );
}

/** A payment from an MTN Benin phone through the balancer, followed until it succeeds; its id. */
async function paidPayment(amount: number, description: string): Promise<string> {
  const created = await call("POST", "/payments", { amount, description, operator: "mtn", customer: { phone: { number: "+22997000000", country: "bj" } } });
  expect(created.status).toBe(200);
  const paymentId = created.body.id as string;
  await until(`payment ${paymentId} to succeed`, `/payments/${paymentId}`, (body) => body.state === "succeeded");
  return paymentId;
}

function adminToken(): string {
  const minted = Bun.spawnSync([process.execPath, join(REPO_ROOT, "src", "main.ts"), "token", "--admin"], {
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...fleet.env },
    stdout: "pipe",
  });
  return minted.stdout.toString().trim();
}

beforeAll(async () => {
  if (!runs) return;
  fleet = await startFleet({
    api: 2,
    workers: 2,
    postgresUrl: process.env.DATABASE_URL!,
    // BullMQ's queues and the rate limiter on a Redis Cluster of three masters (hash-tagged keys).
    redisCluster: true,
    // A small bucket, so that the test can spend it: 5 a second, 10 at once, per tenant.
    env: { RATE_LIMIT_RPS: "5", RATE_LIMIT_BURST: "40", LOG_LEVEL: "warn" },
  });
  receiver = await startReceiver();
  const admin = adminToken();
  const created = await fetch(`${fleet.url}/tenants`, {
    method: "POST",
    headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "Boutique Fleet" }),
  });
  const tenant = (await created.json()) as { apiKey: { id: string; secret: string } };
  const issued = await fetch(`${fleet.url}/auth/token`, {
    method: "POST",
    headers: { authorization: `Basic ${btoa(`${tenant.apiKey.id}:${tenant.apiKey.secret}`)}`, "content-type": "application/x-www-form-urlencoded" },
    body: "grant_type=client_credentials",
  });
  token = ((await issued.json()) as { access_token: string }).access_token;
}, 120_000);

afterAll(async () => {
  await receiver?.stop();
  await fleet?.stop();
}, 60_000);

describe.skipIf(!runs)(`a fleet behind HAProxy, PgBouncer and a Redis Cluster${runs ? "" : ` — SKIPPED: ${why}`}`, () => {
  it("takes a payment, delivers its webhook, refunds part of it and pays some out, across nodes and workers", async () => {
    const endpoint = await call("POST", "/webhooks", { url: `${receiver.url}/fleet`, events: ["payment.completed", "refund.succeeded", "payout.sent"] });
    expect(endpoint.status).toBe(200);

    const paymentId = await paidPayment(800, "Order on the fleet");

    const refund = await call("POST", `/payments/${paymentId}/refunds`, { amount: 300, reason: "One item out of stock" });
    expect(refund.status).toBe(200);
    const payout = await call(
      "POST",
      "/payouts",
      { amount: 200, description: "Supplier", recipient: { phone: { number: "+22996000001", country: "bj" }, operator: "mtn" } },
      { "idempotency-key": "fleet-supplier-1" },
    );
    expect(payout.status).toBe(200);
    expect((await until("the refund to be sent", `/refunds/${refund.body.id}`, (body) => body.state !== "pending")).state).toBe("succeeded");
    expect((await until("the payout to be sent", `/payouts/${payout.body.id}`, (body) => body.state !== "pending")).state).toBe("sent");

    const balance = await call("GET", "/balance");
    expect(balance.body).toMatchObject({ balances: [{ currency: "XOF", available: 300, pending: 0 }] });
    // Each event once at the receiver, whichever worker delivered it.
    const types = await waitUntil(
      () => {
        const seen = receiver.receipts.filter((r) => r.status === 200).map((r) => (JSON.parse(r.body) as { type: string }).type);
        return seen.length >= 3 ? seen.sort() : undefined;
      },
      { what: "three webhooks at the receiver", timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(types).toEqual(["payment.completed", "payout.sent", "refund.succeeded"]);
    // The workers delivered them, and say so on their own metrics.
    const delivered = await Promise.all(
      fleet.workerMetricsPorts.map(async (port) => {
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        return [...text.matchAll(/^passerelle_webhook_delivery_duration_seconds_count\{[^}]*\} (\d+)$/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
      }),
    );
    expect(delivered.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(3);
    // The jobs went through the cluster: its masters hold the fleet's (hash-tagged) keys.
    const called = Bun.spawnSync(["redis-cli", "--cluster", "call", fleet.redisCluster!.nodes[0]!, "DBSIZE"], { stdout: "pipe" }).stdout.toString();
    const keys = [...called.matchAll(/: (\d+)$/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
    expect(keys).toBeGreaterThan(0);
  }, 90_000);

  it("takes a Wave payment through provider B's sandbox, whose IPN comes in through the balancer", async () => {
    const keys = (await (await fetch(`${fleet.sandbox.providerB}/_sim/accounts`, { method: "POST" })).json()) as Record<string, string>;
    const tenantId = (await call("GET", "/auth/whoami")).body.tenantId as string;
    expect((await call("PUT", `/tenants/${tenantId}/credentials/providerB`, { environment: "sandbox", ...keys })).status).toBe(200);
    const created = await call("POST", "/payments", {
      amount: 900,
      description: "Commande 42",
      operator: "wave",
      customer: { phone: { number: "+221771234567", country: "sn" } },
    });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({ state: "pending", provider: "providerB", nextAction: { type: "open_url" } });
    const invoice = created.body.providerTransactionId as string;
    // The page's Pay button: the sandbox marks the invoice paid and posts its IPN to PUBLIC_BASE_URL, the balancer.
    const pay = await fetch(`${fleet.sandbox.providerB}/_sim/invoices/${encodeURIComponent(invoice)}/pay`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "payment_method=wave-senegal",
      redirect: "manual",
    });
    expect(pay.status).toBeLessThan(400);
    const ipn = await waitUntil(
      async () => {
        const { deliveries } = (await (await fetch(`${fleet.sandbox.providerB}/_sim/ipns`)).json()) as {
          deliveries: { url: string; token: string; delivered: boolean; lastHttpStatus: number | null }[];
        };
        return deliveries.find((delivery) => delivery.token === invoice && delivery.delivered);
      },
      { what: "the sandbox's IPN delivered", timeoutMs: 15_000, intervalMs: 100 },
    );
    expect(ipn).toMatchObject({ url: `${fleet.url}/providerB/webhook`, lastHttpStatus: 200 });
    await until("the Wave payment to succeed", `/payments/${created.body.id}`, (body) => body.state === "succeeded");
  }, 45_000);

  it("answers one Idempotency-Key with one payout, whichever node takes each retry", async () => {
    const [first, second] = fleet.apiPorts.map((port) => `http://127.0.0.1:${port}`) as [string, string];
    const body = { amount: 50, description: "Twice", recipient: { phone: { number: "+22996000002", country: "bj" }, operator: "mtn" } };
    const headers = { "idempotency-key": "fleet-twice-1" };
    const answers = await Promise.all([
      call("POST", "/payouts", body, headers, first),
      call("POST", "/payouts", body, headers, second),
      call("POST", "/payouts", body, headers, first),
      call("POST", "/payouts", body, headers, second),
    ]);
    const made = answers.filter((a) => a.status === 200).map((a) => a.body.id);
    // In flight elsewhere (409) or replayed (200, the same payout): never a second payout.
    for (const answer of answers) expect([200, 409]).toContain(answer.status);
    expect(new Set(made).size).toBe(1);
    const later = await call("POST", "/payouts", body, headers);
    expect(later.body.id).toBe(made[0]!);
    const listed = await call("GET", "/payouts");
    expect((listed.body.data as Body[]).filter((p) => p.description === "Twice")).toHaveLength(1);
  }, 30_000);

  it("answers a header with a control character in the contract's error shape (the balancer's refusal)", async () => {
    const port = fleet.haproxy.port;
    const raw = await new Promise<string>((resolve) => {
      let text = "";
      void Bun.connect({
        hostname: "127.0.0.1",
        port,
        socket: {
          open: (socket) => void socket.write("GET /auth/whoami HTTP/1.1\r\nHost: fleet\r\nX-Note: a\x01b\r\n\r\n"),
          data: (socket, chunk) => {
            text += chunk.toString();
            // The whole answer is in once its body is as long as it says.
            const head = text.indexOf("\r\n\r\n");
            const length = /content-length: (\d+)/i.exec(text)?.[1];
            if (head >= 0 && length !== undefined && text.length - head - 4 >= Number(length)) socket.end();
          },
          close: () => resolve(text),
          error: () => resolve(text),
        },
      });
      setTimeout(() => resolve(text), 3000);
    });
    expect(raw).toStartWith("HTTP/1.1 400");
    const body = JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4)) as Body;
    expect(body).toMatchObject({ statusCode: 400, error: "Bad Request", code: "validation_failed" });
    expect(raw.toLowerCase()).toContain(`x-request-id: ${String(body.requestId).toLowerCase()}`);
  });

  it("keeps answering when an API node is killed, and takes it back when it returns", async () => {
    const victim = fleet.api[0]!;
    victim.child.kill("SIGKILL");
    await victim.child.exited;
    // HAProxy retries a refused connection on the other node; its check takes the dead one out within 2 s.
    for (let i = 0; i < 10; i++) expect((await call("GET", "/auth/whoami")).status).toBe(200);
    await victim.restart();
    await waitUntil(async () => (await fetch(`http://127.0.0.1:${fleet.apiPorts[0]}/health/ready`)).status === 200, {
      what: "the restarted node",
      timeoutMs: 20_000,
      intervalMs: 200,
    });
    await paidPayment(600, "After the kill");
  }, 60_000);
  it("spends one rate-limit bucket across the nodes", async () => {
    // 60 reads in one go over both nodes: a bucket of 40 per node would take them all; one shared bucket refuses some.
    const bases = fleet.apiPorts.map((port) => `http://127.0.0.1:${port}`);
    const statuses = await Promise.all(Array.from({ length: 60 }, (_, i) => call("GET", "/balance", undefined, {}, bases[i % 2]).then((a) => a.status)));
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(statuses.filter((s) => s === 200).length).toBeLessThanOrEqual(45);
  }, 30_000);
});
