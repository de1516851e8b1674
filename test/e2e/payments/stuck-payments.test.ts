/**
 * Contract §8: payments still pending after the 24 h sync window are flagged for the operator — the
 * `passerelle_payments_stuck_pending{provider}` gauge and `GET /admin/payments/stuck` — and never assumed
 * failed. Both providers, over real HTTP (the simulators on their own ports, the gateway's HTTP and
 * metrics listeners), with the gateway's clock injected and moved 25 h on.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mintToken } from "../../../src/mod.ts";
import { createProviderASimulator, type ProviderASimulator } from "../../../src/providers/providerA/simulator/mod.ts";
import { DIRECT_PAYMENT_SYNC, syncDirectPayment } from "../../../src/services/direct-payments/mod.ts";
import { syncCheckout } from "../../../src/services/checkout/checkout-sync.ts";
import { syncQueueOf } from "../../../src/jobs/queues.ts";
import { syncOffsetMs } from "../../../src/services/payments/sync-chain.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { startSimulator, type SimulatorServer } from "../../support/provider-b-rig.ts";
import { logStatements } from "../../support/statement-log.ts";
import { waitUntil } from "../../support/wait.ts";

const HOUR_MS = 3_600_000;
let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);

let simA: ProviderASimulator;
let simAServer: ReturnType<typeof Bun.serve>;
let simABase: string;
let simB: SimulatorServer;
let tg: TestGateway;
let base: string;
let metricsUrl: string;
let admin: string;
let tenant: { id: string; token: string };
const ids: { aPending?: string; aPendingTrx?: number; aApproved?: string; aApprovedTrx?: number; bPending?: string } = {};

/** Tokens that outlive the clock's jump (verification uses the gateway's clock). */
const longToken = (claims: { role?: "admin"; tenantId?: string }) =>
  mintToken(tg.config.jwt, { sub: claims.tenantId ? `tenant:${claims.tenantId}` : "operator", environment: "sandbox", ttlSeconds: 3 * 86_400, ...claims });

async function api(path: string, init: RequestInit & { token?: string; json?: unknown } = {}): Promise<{ status: number; body: any }> {
  const headers = new Headers(init.headers);
  if (init.token !== undefined) headers.set("authorization", `Bearer ${init.token}`);
  if (init.json !== undefined) headers.set("content-type", "application/json");
  const response = await fetch(`${base}${path}`, { ...init, headers, body: init.json !== undefined ? JSON.stringify(init.json) : init.body });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null };
}

async function gauge(): Promise<Record<string, number>> {
  const text = await (await fetch(`${metricsUrl}/metrics`)).text();
  const values: Record<string, number> = {};
  for (const match of text.matchAll(/^passerelle_payments_stuck_pending\{provider="(\w+)"\} (\d+)$/gm)) values[match[1]!] = Number(match[2]);
  return values;
}

const stuckIds = async (query = "") => ((await api(`/admin/payments/stuck${query}`, { token: admin })).body.data as { id: string }[]).map((p) => p.id).sort();

const directPayment = (amount: number) => ({
  description: "Stuck?",
  amount,
  payment_method: "mnoA_open",
  phone_number: { number: "+22997000000", country: "bj" },
});

beforeAll(async () => {
  simA = createProviderASimulator({ approveDelayMs: 100 });
  simAServer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: simA.fetch });
  simABase = simAServer.url.toString().replace(/\/$/, "");
  const account = (await (await fetch(`${simABase}/_sim/accounts`, { method: "POST" })).json()) as { secretKey: string; webhookSecret: string };
  simB = await startSimulator();
  tg = await startTestGateway(
    {
      PROVIDER_A_SANDBOX_URL: simABase,
      PROVIDER_A_SANDBOX_SECRET_KEY: account.secretKey,
      PROVIDER_A_SANDBOX_WEBHOOK_SECRET: account.webhookSecret,
      PROVIDER_B_SANDBOX_URL: `${simB.url}/sandbox-api/v1`,
      PROVIDER_B_LIVE_URL: `${simB.url}/api/v1`,
    },
    { now: clock },
  );
  const started = await tg.gateway.start();
  base = started.url!;
  metricsUrl = started.metricsUrl!;
  admin = await longToken({ role: "admin" });
  const created = await api("/tenants", { method: "POST", token: admin, json: { name: "Stuck shop" } });
  expect(created.status).toBe(200);
  tenant = { id: created.body.tenant.id, token: await longToken({ tenantId: created.body.tenant.id }) };
  const keys = await simB.account();
  expect(
    (await api(`/tenants/${tenant.id}/credentials/providerB`, { method: "PUT", token: tenant.token, json: { ...keys, environment: "sandbox" } })).status,
  ).toBe(200);
});

afterAll(async () => {
  simA?.close();
  await tg?.close();
  await simAServer?.stop(true);
  await simB?.stop();
});

describe("payments still pending after the 24 h sync window", () => {
  it("nothing is flagged within the window", async () => {
    const a = await api("/providerA/direct-payment", { method: "POST", token: tenant.token, json: directPayment(2000) });
    expect(a.status).toBe(200);
    ids.aPending = a.body.paymentId;
    ids.aPendingTrx = a.body.transactionId;
    const approved = await api("/providerA/direct-payment", { method: "POST", token: tenant.token, json: directPayment(500) });
    ids.aApproved = approved.body.paymentId;
    ids.aApprovedTrx = approved.body.transactionId;
    const b = await api("/providerB/checkout", {
      method: "POST",
      token: tenant.token,
      headers: { "x-tenant-id": tenant.id },
      json: {
        amount: 5000,
        description: "Stuck checkout",
        returnUrl: "https://shop.example/ok",
        cancelUrl: "https://shop.example/ko",
        customer: { name: "Awa" },
      },
    });
    expect(b.status).toBe(200);
    ids.bPending = b.body.paymentId;
    // A status read refreshes it from provider A (no webhooks here).
    await waitUntil(
      async () => ((await api(`/providerA/transaction/${ids.aApprovedTrx}/status`, { token: tenant.token })).body.status === "approved" ? true : undefined),
      {
        what: "the small payment approved",
        timeoutMs: 8_000,
        intervalMs: 100,
      },
    );
    offsetMs = 23 * HOUR_MS;
    expect(await stuckIds()).toEqual([]);
    expect(await gauge()).toEqual({ providerA: 0, providerB: 0 });
  }, 15_000);

  it("after 24 h: the sync jobs stop without failing them, and both are flagged (admin list + gauge)", async () => {
    offsetMs = 25 * HOUR_MS;
    const deps = tg.gateway.deps;
    // The last steps of both sync chains: still pending at the provider → left pending, no further step.
    let lastStep = 0;
    while (syncOffsetMs(lastStep + 1) <= 24 * HOUR_MS) lastStep++;
    await syncDirectPayment(deps, { paymentId: ids.aPending!, step: lastStep });
    // The sync step reads the checkout once, and decides from that read (the rest in the apply's transaction).
    const sent = logStatements(tg.database);
    await syncCheckout({ ...deps, db: sent.database.db }, { paymentId: ids.bPending!, step: lastStep });
    expect(sent.statements.filter((sql) => /^select .* from "payments"/.test(sql))).toHaveLength(1);
    const rows = await deps.db.selectFrom("payments").select(["id", "state"]).where("id", "in", [ids.aPending!, ids.bPending!]).execute();
    expect(rows.every((r) => r.state === "pending")).toBe(true);
    expect(await deps.queue.has(syncQueueOf("providerA"), DIRECT_PAYMENT_SYNC.jobId(ids.aPending!, lastStep + 1))).toBe(false);
    expect(tg.logs.some((l) => l.msg === "direct payment still pending after 24 h: left for the operator" && l.paymentId === ids.aPending)).toBe(true);
    expect(tg.logs.some((l) => l.alert === "providerB_checkout_stuck" && l.paymentId === ids.bPending)).toBe(true);

    expect(await stuckIds()).toEqual([ids.aPending!, ids.bPending!].sort());
    const list = await api("/admin/payments/stuck", { token: admin });
    const a = list.body.data.find((p: { id: string }) => p.id === ids.aPending);
    expect(a).toMatchObject({ tenantId: tenant.id, provider: "providerA", kind: "direct_payment", state: "pending", environment: "sandbox" });
    expect(a.pendingSeconds).toBeGreaterThanOrEqual(25 * 3600 - 60);
    expect(await stuckIds("?provider=providerA")).toEqual([ids.aPending!]);
    expect(await stuckIds("?provider=providerB")).toEqual([ids.bPending!]);
    expect(await stuckIds(`?tenantId=${tenant.id}&environment=live`)).toEqual([]);
    expect(await gauge()).toEqual({ providerA: 1, providerB: 1 });

    // Paging, oldest first.
    const first = await api("/admin/payments/stuck?limit=1", { token: admin });
    expect(first.body.data.length).toBe(1);
    const second = await api(`/admin/payments/stuck?limit=1&cursor=${first.body.nextCursor}`, { token: admin });
    expect([first.body.data[0].id, second.body.data[0].id].sort()).toEqual([ids.aPending!, ids.bPending!].sort());
    expect(second.body.nextCursor).toBeNull();
  });

  it("is an operator's list only", async () => {
    expect((await api("/admin/payments/stuck", { token: tenant.token })).status).toBe(403);
    expect((await api("/admin/payments/stuck")).status).toBe(401);
    expect((await api("/admin/payments/stuck?provider=providerC", { token: admin })).status).toBe(400);
  });

  it("a payment created now is not flagged, and a late settlement takes a payment off the list", async () => {
    const fresh = await api("/providerA/direct-payment", { method: "POST", token: tenant.token, json: directPayment(3000) });
    expect(fresh.status).toBe(200);
    expect(await stuckIds()).toEqual([ids.aPending!, ids.bPending!].sort());
    // The customer finally pays: a status read (past the one-second floor) learns it from provider A.
    offsetMs += 2 * 60_000;
    expect((await fetch(`${simABase}/_sim/transactions/${ids.aPendingTrx}/approve`, { method: "POST" })).status).toBe(200);
    const read = await api(`/providerA/transaction/${ids.aPendingTrx}/status`, { token: tenant.token });
    expect(read.body.status).toBe("approved");
    expect(await stuckIds()).toEqual([ids.bPending!]);
    expect(await gauge()).toEqual({ providerA: 0, providerB: 1 });
  });
});
