/**
 * Failover that never charges twice (issue 16, point 4), with both simulators over real HTTP: MTN Benin is
 * served by provider A (USSD push) and provider B (SoftPay). Provider A down → the same payment goes to
 * provider B in the same request; provider B acting and then not answering → no failover, one charge,
 * settled from the provider; a late success on an abandoned attempt recorded once; 50 concurrent payments while provider B refuses every other call → each
 * completed exactly once, on one provider.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createProviderASimulator, type ProviderASimulator } from "../../../src/providers/providerA/simulator/mod.ts";
import type { TestDatabase } from "../../support/db.ts";
import { createTestDatabase, startRigGateway, startSimulator, type RigGateway, type SimulatorServer } from "../../support/provider-b-rig.ts";
import { waitUntil } from "../../support/wait.ts";

type Body = Record<string, any>;

/** Provider A behind a switch: `down` closes its port (connection refused), `up` serves it again on the same port. */
interface SwitchedProviderA {
  simulator: ProviderASimulator;
  url: string;
  down(): Promise<void>;
  up(): void;
}

function switchedProviderA(): SwitchedProviderA {
  const simulator = createProviderASimulator({ approveDelayMs: 50 });
  let server: ReturnType<typeof Bun.serve> | undefined = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: simulator.fetch });
  const port = server.port!;
  return {
    simulator,
    url: `http://127.0.0.1:${port}`,
    async down() {
      await server?.stop(true);
      server = undefined;
    },
    up() {
      server ??= Bun.serve({ hostname: "127.0.0.1", port, fetch: simulator.fetch });
    },
  };
}

/** Provider B's SoftPay calls, counted; every other one refused (`success: false`) while `flaky` is on. */
let flaky = false;
let softpayCalls = 0;

let providerA: SwitchedProviderA;
let simB: SimulatorServer;
let database: TestDatabase;
let gw: RigGateway;
let tenantId: string;

async function call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }> {
  const response = await gw.call(method, path, tenantId, body);
  return { status: response.status, body: (await response.json()) as Body };
}

const mtn = (number: string) => ({
  amount: 500,
  description: "Order",
  operator: "mtn",
  customer: { phone: { number, country: "bj" }, email: "client@example.com" },
});

async function settled(paymentId: string): Promise<Body> {
  return waitUntil(
    async () => {
      const read = await call("GET", `/payments/${paymentId}`);
      return read.body.state === "pending" ? undefined : read.body;
    },
    { what: `${paymentId} settled`, timeoutMs: 30_000, intervalMs: 200 },
  );
}

/** Provider A's transactions that carry our payment id. */
async function transactionsAtA(paymentId: string): Promise<Body[]> {
  const listed = (await (await fetch(`${providerA.url}/_sim/transactions`)).json()) as { transactions: Body[] };
  return listed.transactions.filter((t) => t.merchant_reference === paymentId);
}

beforeAll(async () => {
  providerA = switchedProviderA();
  const accountA = (await (await fetch(`${providerA.url}/_sim/accounts`, { method: "POST" })).json()) as { secretKey: string; webhookSecret: string };
  simB = await startSimulator({
    async around(request, next) {
      if (request.method === "POST" && new URL(request.url).pathname.includes("/softpay/")) {
        softpayCalls++;
        if (flaky && softpayCalls % 2 === 0) return Response.json({ success: false, message: "Service momentanément indisponible" });
      }
      return next(request);
    },
  });
  database = await createTestDatabase();
  gw = await startRigGateway({
    sim: simB,
    database,
    env: {
      PROVIDER_A_SANDBOX_URL: providerA.url,
      PROVIDER_A_SANDBOX_SECRET_KEY: accountA.secretKey,
      PROVIDER_A_SANDBOX_WEBHOOK_SECRET: accountA.webhookSecret,
      // Long enough for 50 concurrent payments on a machine that runs other test files meanwhile; the
      // "acting then silent" case below outlasts it on purpose.
      PROVIDER_TIMEOUT_MS: "5000",
      // Every payment counts: the rates decide, the exploration share aside.
      ROUTING_EXPLORE_SHARE: "0",
    },
  });
  await fetch(`${providerA.url}/_sim/accounts/${accountA.secretKey}/webhook`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url: `${gw.url}/providerA/webhook/sandbox` }),
  });
  ({ tenantId } = await gw.tenantWithAccount(simB));
});

afterAll(async () => {
  await gw?.close();
  await simB?.stop();
  await providerA?.down();
  providerA?.simulator.close();
  await database?.dispose();
});

describe("failover between provider A and provider B for MTN Benin", () => {
  it("lists both routes, provider A first", async () => {
    const methods = await call("GET", "/payment-methods?country=bj");
    const mtnBj = methods.body.methods.find((m: Body) => m.operator === "mtn");
    expect(mtnBj.routes.map((r: Body) => r.provider)).toEqual(["providerA", "providerB"]);
  });

  it("follows the routes' success rates over the window, which every process shares through the database", async () => {
    // What other processes saw this minute: provider A failing MTN Benin, provider B paying it.
    const minute = new Date(Math.floor(Date.now() / 60_000) * 60_000);
    await gw.gateway.deps.db
      .insertInto("route_outcomes")
      .values([
        { environment: "sandbox", provider: "providerA", operator: "mtn", country: "bj", minute, succeeded: 3, failed: 27 },
        { environment: "sandbox", provider: "providerB", operator: "mtn", country: "bj", minute, succeeded: 29, failed: 1 },
      ])
      .onConflict((oc) =>
        oc.columns(["environment", "provider", "operator", "country", "minute", "slot"]).doUpdateSet((eb) => ({
          succeeded: eb("route_outcomes.succeeded", "+", eb.ref("excluded.succeeded")),
          failed: eb("route_outcomes.failed", "+", eb.ref("excluded.failed")),
        })),
      )
      .execute();
    try {
      const created = await call("POST", "/payments", mtn("+22997100009"));
      expect(created.body.provider).toBe("providerB");
      expect(created.body.attempts[0].reason).toMatch(/^best success rate \(success rate 0\.9\d over \d+ payments in the last 15 min\)$/);
      const stats = await call("GET", "/routing/stats");
      const a = stats.body.routes.find((r: Body) => r.provider === "providerA" && r.operator === "mtn");
      expect(a.failed).toBeGreaterThanOrEqual(27);
      await settled(created.body.id);
    } finally {
      await gw.gateway.deps.db.deleteFrom("route_outcomes").execute();
      // The gateway reuses a wallet's rates for up to a second (`routing/route-cache.ts`): the next test starts from none.
      gw.gateway.deps.caches.routing.stats.clear();
    }
  }, 40_000);

  it("takes provider A first again once it is back: its failures of 12 minutes ago weigh a fifth, and its rate is within the margin of provider B's", async () => {
    // Provider A refused 10 payments 12 minutes ago and paid 40 since; provider B paid 40. Counted flat, A's rate
    // (0.80) would leave B first for the rest of the window; weighed by age (half-life 5 min), A's is 0.95.
    const now = Math.floor(Date.now() / 60_000) * 60_000;
    const outcome = (provider: string, minutesAgo: number, succeeded: number, failed: number) => ({
      environment: "sandbox" as const,
      provider,
      operator: "mtn",
      country: "bj",
      minute: new Date(now - minutesAgo * 60_000),
      succeeded,
      failed,
    });
    await gw.gateway.deps.db
      .insertInto("route_outcomes")
      .values([outcome("providerA", 12, 0, 10), outcome("providerA", 0, 40, 0), outcome("providerB", 0, 40, 0)])
      .execute();
    try {
      const stats = await call("GET", "/routing/stats");
      const a = stats.body.routes.find((r: Body) => r.provider === "providerA" && r.operator === "mtn");
      expect(a).toMatchObject({ succeeded: 40, failed: 10 });
      expect(a.successRate).toBeGreaterThan(0.95);
      expect(a.successRate).toBeLessThan(0.96);
      const created = await call("POST", "/payments", mtn("+22997100019"));
      expect(created.body.provider).toBe("providerA");
      expect(created.body.attempts[0].reason).toMatch(
        /^first of the route list within 5 points of the best success rate \(success rate 0\.95 over 50 payments in the last 15 min\)$/,
      );
      await settled(created.body.id);
    } finally {
      await gw.gateway.deps.db.deleteFrom("route_outcomes").execute();
      gw.gateway.deps.caches.routing.stats.clear();
    }
  }, 40_000);

  it("provider A down: the same payment goes to provider B in the same request, and is paid once", async () => {
    await providerA.down();
    try {
      const created = await call("POST", "/payments", mtn("+22997100001"));
      expect(created.status).toBe(200);
      expect(created.body).toMatchObject({ provider: "providerB", state: "pending" });
      expect(created.body.attempts.map((a: Body) => [a.provider, a.outcome])).toEqual([
        ["providerA", "unreachable"],
        ["providerB", "started"],
      ]);
      const paid = await settled(created.body.id);
      expect(paid).toMatchObject({ state: "succeeded", provider: "providerB" });
      const events = await gw.gateway.deps.db.selectFrom("events").select("type").where("payment_id", "=", created.body.id).execute();
      expect(events.map((e) => e.type)).toEqual(["payment.completed"]);
    } finally {
      providerA.up();
    }
    expect(await transactionsAtA((await call("GET", "/payments")).body.data[0].id)).toEqual([]);
  }, 40_000);

  it("provider B acting and then not answering: no failover, one charge, settled from the provider", async () => {
    const routing = await call("PUT", "/routing", { rules: [{ operator: "mtn", country: "bj", providers: ["providerB", "providerA"] }] });
    expect(routing.status).toBe(200);
    try {
      await fetch(`${simB.url}/_sim/softpay/next`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ answer: "timeout_after", delayMs: 6_000 }),
      });
      const created = await call("POST", "/payments", mtn("+22997100002"));
      expect([502, 504]).toContain(created.status);
      const paymentId = created.body.paymentId as string;
      expect(paymentId).toMatch(/^pay_/);
      const paid = await settled(paymentId);
      expect(paid).toMatchObject({ state: "succeeded", provider: "providerB" });
      expect(paid.attempts.map((a: Body) => [a.provider, a.outcome])).toEqual([["providerB", "unknown"]]);
      // Provider A never heard of it.
      expect(await transactionsAtA(paymentId)).toEqual([]);
    } finally {
      await call("PUT", "/routing", { rules: [{ operator: "mtn", country: "bj", providers: [] }] });
    }
  }, 40_000);

  it("a late success on an abandoned attempt is recorded, and counted once; a second one is kept for the accountant", async () => {
    await call("PUT", "/routing", { rules: [{ operator: "mtn", country: "bj", providers: ["providerB", "providerA"] }] });
    try {
      await fetch(`${simB.url}/_sim/softpay/next`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ answer: "refuse" }),
      });
      // 3000: provider A's sandbox waits for its console.
      const created = await call("POST", "/payments", { ...mtn("+22997100003"), amount: 3000 });
      expect(created.status).toBe(200);
      expect(created.body.attempts.map((a: Body) => [a.provider, a.outcome])).toEqual([
        ["providerB", "refused"],
        ["providerA", "started"],
      ]);
      const [atB, atA] = created.body.attempts as [Body, Body];
      // The customer pays provider B's abandoned invoice anyway: its IPN names no payment of ours any more.
      expect((await simB.press(atB.providerTransactionId, "pay", { payment_method: "mtn-benin" })).status).toBe(200);
      const paid = await settled(created.body.id);
      expect(paid).toMatchObject({ state: "succeeded", provider: "providerB", providerTransactionId: atB.providerTransactionId });
      expect(paid.attempts[0].error).toContain("paid at Provider B after the payment had moved on");
      // Then provider A's push is approved too: the customer paid twice.
      expect((await fetch(`${providerA.url}/_sim/transactions/${atA.providerTransactionId}/approve`, { method: "POST" })).status).toBe(200);
      const report = await waitUntil(
        async () => {
          const read = await call("GET", "/reports/reconciliation");
          return read.body.differences.find((d: Body) => d.id === created.body.id);
        },
        { what: "the second payment kept as a difference", timeoutMs: 15_000, intervalMs: 200 },
      );
      expect(report).toMatchObject({ kind: "payment", provider: "providerA", ourState: "succeeded", providerState: "succeeded" });
      expect(report.providerStatus).toContain("paid again through attempt 2");
      const events = await gw.gateway.deps.db.selectFrom("events").select("type").where("payment_id", "=", created.body.id).execute();
      expect(events.map((e) => e.type)).toEqual(["payment.completed"]);
      expect((await call("GET", `/payments/${created.body.id}`)).body).toMatchObject({ state: "succeeded", provider: "providerB" });
    } finally {
      await call("PUT", "/routing", { rules: [{ operator: "mtn", country: "bj", providers: [] }] });
    }
  }, 40_000);

  it("50 concurrent payments while provider B refuses every other call: each completed exactly once, on one provider", async () => {
    await call("PUT", "/routing", { rules: [{ operator: "mtn", country: "bj", providers: ["providerB", "providerA"] }] });
    flaky = true;
    try {
      const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => call("POST", "/payments", mtn(`+229972${String(i).padStart(5, "0")}`))));
      expect(answers.map((a) => a.status)).toEqual(Array(50).fill(200));
      const finals = await Promise.all(answers.map((a) => settled(a.body.id)));
      expect(finals.every((p) => p.state === "succeeded")).toBe(true);
      const providers = new Set(finals.map((p) => p.provider));
      expect([...providers].every((p) => p === "providerA" || p === "providerB")).toBe(true);
      for (const payment of finals) {
        const started = payment.attempts.filter((a: Body) => a.outcome === "started");
        expect(started).toHaveLength(1);
        expect(started[0].provider).toBe(payment.provider);
        // Refused attempts on provider B, never after a provider took it.
        expect(payment.attempts.at(-1).outcome).toBe("started");
        const atA = await transactionsAtA(payment.id);
        expect(atA).toHaveLength(payment.provider === "providerA" ? 1 : 0);
      }
      const ids = finals.map((p) => p.id);
      const completed = await gw.gateway.deps.db.selectFrom("events").select(["payment_id", "type"]).where("payment_id", "in", ids).execute();
      expect(completed.filter((e) => e.type === "payment.completed")).toHaveLength(50);
      expect(new Set(completed.map((e) => e.payment_id)).size).toBe(50);
      // Some went each way: provider B took the calls it did not refuse.
      expect(finals.some((p) => p.provider === "providerA")).toBe(true);
      expect(finals.some((p) => p.provider === "providerB")).toBe(true);
      const stats = await call("GET", "/routing/stats");
      const b = stats.body.routes.find((r: Body) => r.provider === "providerB" && r.operator === "mtn" && r.country === "bj");
      expect(b.failed).toBeGreaterThan(0);
    } finally {
      flaky = false;
      await call("PUT", "/routing", { rules: [{ operator: "mtn", country: "bj", providers: [] }] });
    }
  }, 90_000);
});
