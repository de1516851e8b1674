/**
 * Charging provider B permits over real HTTP (issue 7 points 3, 3b, 5, 6): `POST/GET
 * /providerB/permits/{permit_id}/charges`, the charge IPN (`data[invoice][token]` of the charge's invoice),
 * the `providerB-sync` chain of a pending charge and its sweeper clause — and no double charge: the same
 * Idempotency-Key 20 times at once, concurrent executions, a provider answer lost on the way back, and a
 * worker process SIGKILLed right after provider B answered the charge.
 *
 * A small proxy sits in front of the standalone simulator and records every `POST …/permit/charge` answer
 * (provider B's word on what it charged); a test can make it lose an answer, or kill a worker process
 * right after provider B answered. Only 127.0.0.1 is contacted.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { Webhook } from "standardwebhooks";
import { openDatabase } from "../../../src/db/connect.ts";
import { sweepProviderB } from "../../../src/services/ipn/sweep-provider-b.ts";
import { syncPermitCharge } from "../../../src/services/permits/charge-sync.ts";
import { createPermitCharge, executePermitCharge } from "../../../src/services/permits/charges.ts";
import { createNamedServerDatabase } from "../../support/delivery-gateway.ts";
import type { TestDatabase } from "../../support/db.ts";
import { TEST_ENV } from "../../support/gateway.ts";
import { activePermit as authorisedPermit, createPermit, startPermitRig, type PermitRig } from "../../support/permit-rig.ts";
import { createTestDatabase, startRigGateway, startSimulator, type RigGateway, type SimulatorServer } from "../../support/provider-b-rig.ts";
import { deleteKeysUnderPrefix, testQueuePrefix } from "../../support/redis.ts";
import { waitForStart } from "../../support/spawned-gateway.ts";
import { waitUntil } from "../../support/wait.ts";
import type { WebhookReceiver } from "../../support/webhook-receiver.ts";
import type { Json } from "../../support/json.ts";

const { DATABASE_URL, REDIS_URL } = process.env;

/** One `POST …/permit/charge` as provider B answered it. */
interface ChargeCall {
  idempotencyKey: string;
  status: number;
  answer: Json;
}

/** What the proxy does with provider B's answer to a charge call: pass it on (undefined) or replace it. */
type ChargeHook = (call: ChargeCall) => Promise<Response | undefined> | Response | undefined;

interface SimulatorProxy {
  url: string;
  calls: ChargeCall[];
  onCharge(hook: ChargeHook | undefined): void;
  /** While set, calls whose path ends with this answer 502 without reaching provider B. */
  downFor(pathSuffix: string | undefined): void;
  /** The distinct invoices provider B made for one idempotency key (one invoice = one charge). */
  invoicesOf(idempotencyKey: string): string[];
  stop(): Promise<void>;
}

async function startSimulatorProxy(sim: SimulatorServer): Promise<SimulatorProxy> {
  const calls: ChargeCall[] = [];
  let hook: ChargeHook | undefined;
  let down: string | undefined;
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 30,
    async fetch(request) {
      const url = new URL(request.url);
      if (down && url.pathname.endsWith(down)) return new Response("bad gateway", { status: 502 });
      const body = request.method === "GET" ? undefined : await request.arrayBuffer();
      const headers = new Headers(request.headers);
      headers.delete("host");
      const upstream = await fetch(`${sim.url}${url.pathname}${url.search}`, { method: request.method, headers, body, redirect: "manual" });
      if (!url.pathname.endsWith("/permit/charge")) return upstream;
      const answer = (await upstream.json()) as Json;
      const sent = JSON.parse(new TextDecoder().decode(body)) as Json;
      const call: ChargeCall = { idempotencyKey: sent.idempotency_key, status: upstream.status, answer };
      calls.push(call);
      return (await hook?.(call)) ?? Response.json(answer, { status: upstream.status });
    },
  });
  const url = server.url.toString().replace(/\/$/, "");
  return {
    url,
    calls,
    onCharge: (next) => void (hook = next),
    downFor: (suffix) => void (down = suffix),
    invoicesOf: (key) => [...new Set(calls.filter((c) => c.idempotencyKey === key && c.answer.invoice_token).map((c) => c.answer.invoice_token as string))],
    stop: () => server.stop(true),
  };
}

let rig: PermitRig<SimulatorServer>;
let sim: SimulatorServer;
let proxy: SimulatorProxy;
let gw: RigGateway;
let receiver: WebhookReceiver;

async function json(response: Response): Promise<Json> {
  const text = await response.text();
  return text ? (JSON.parse(text) as Json) : {};
}

const simControl = (path: string) => fetch(`${sim.url}/_sim/${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });

/** A tenant with provider B credentials and an active permit (authorised on provider B's side, learnt by IPN). */
async function activePermit(on: RigGateway = gw, over: Json = {}): Promise<{ tenantId: string; permitId: string; token: string }> {
  const { tenantId } = await on.tenantWithAccount(sim);
  return { tenantId, ...(await authorisedPermit(on, sim, tenantId, { maxAmount: 100_000, ...over })) };
}

async function charge(tenantId: string, permitId: string, body: Json = { amount: 5000, description: "Mai" }, headers: Record<string, string> = {}) {
  const response = await gw.call("POST", `/providerB/permits/${permitId}/charges`, tenantId, body, headers);
  return { status: response.status, body: await json(response), headers: response.headers };
}

async function chargeEvents(rig: RigGateway, chargeId: string) {
  const rows = await rig.gateway.deps.db.selectFrom("events").selectAll().orderBy("id").execute();
  return rows.filter((row) => row.data.chargeId === chargeId);
}

async function chargeRow(rig: RigGateway, chargeId: string) {
  return rig.gateway.deps.db.selectFrom("permit_charges").selectAll().where("id", "=", chargeId).executeTakeFirstOrThrow();
}

beforeAll(async () => {
  sim = await startSimulator();
  proxy = await startSimulatorProxy(sim);
  // The gateway reaches provider B through the proxy; the rig stops the simulator with the rest.
  ({ gw, receiver } = rig = await startPermitRig({ sim: { ...sim, url: proxy.url }, workerOptions: { sweepEveryMs: 60_000 } }));
}, 60_000);

afterAll(async () => {
  await rig?.stop();
  await proxy?.stop();
});

describe("POST /providerB/permits/{permit_id}/charges", () => {
  it("create → authorise → IPN → active → charge now → succeeded, with a signed permit.charge.succeeded", async () => {
    const { tenantId, permitId } = await activePermit();
    const secret = ((await json(await gw.call("POST", "/webhooks", tenantId, { url: `${receiver.url}/charges` }))) as { secret: string }).secret;
    const { status, body } = await charge(tenantId, permitId, { amount: 5000, description: "Mai", customData: { invoice: "F-5" } });
    expect(status, JSON.stringify(body)).toBe(200);
    expect(body).toMatchObject({
      status: "succeeded",
      amount: 5000,
      currency: "XOF",
      permitId,
      customData: { invoice: "F-5" },
      failReason: null,
      scheduleId: null,
      attempt: 0,
    });
    expect(body.chargeId).toMatch(/^chg_[0-9A-Z]{26}$/);
    expect(body.paymentId).toMatch(/^pay_[0-9A-Z]{26}$/);
    // Provider B got our charge id as the idempotency key, and made one invoice for it.
    expect(proxy.invoicesOf(body.chargeId)).toEqual([body.invoiceToken]);

    const payment = await json(await gw.call("GET", `/payments/${body.paymentId}`, tenantId));
    expect(payment).toMatchObject({
      kind: "permit_charge",
      provider: "providerB",
      state: "succeeded",
      amount: 5000,
      providerTransactionId: body.invoiceToken,
      outcomeUnknown: false,
    });
    const listed = await json(await gw.call("GET", "/payments?kind=permit_charge", tenantId));
    expect(listed.data.map((p: Json) => p.id)).toEqual([body.paymentId]);
    const charges = await json(await gw.call("GET", `/providerB/permits/${permitId}/charges`, tenantId));
    expect(charges).toEqual({ data: [body], nextCursor: null });

    const receipt = await waitUntil(() => receiver.receipts.find((r) => r.path === "/charges" && r.body.includes("permit.charge.succeeded")), {
      what: "the event",
      timeoutMs: 8_000,
    });
    const event = new Webhook(secret).verify(receipt.body, receipt.headers) as Json;
    expect(event).toMatchObject({
      type: "permit.charge.succeeded",
      data: {
        permitId,
        chargeId: body.chargeId,
        paymentId: body.paymentId,
        amount: 5000,
        currency: "XOF",
        status: "succeeded",
        failReason: null,
        customData: { plan: "gold", seats: 3 },
      },
    });
    // The charge's own IPN (provider B sent it as it charged) is processed without a second event.
    await waitUntil(
      async () =>
        (await gw.gateway.deps.db.selectFrom("ipn_messages").select("state").where("payment_id", "=", body.paymentId).executeTakeFirst())?.state ===
        "processed",
      { what: "the charge IPN processed", timeoutMs: 8_000 },
    );
    expect((await chargeEvents(gw, body.chargeId)).map((e) => e.type)).toEqual(["permit.charge.succeeded"]);
    const deliveries = await json(await gw.call("GET", `/payments/${body.paymentId}/deliveries`, tenantId));
    expect(deliveries.data.map((d: Json) => d.eventType)).toEqual(["permit.charge.succeeded"]);
  });

  it("refuses an amount over maxAmount (422), a permit that is not active (409), another tenant's permit (404), and bad bodies (400)", async () => {
    const { tenantId, permitId } = await activePermit(gw, { maxAmount: 10_000 });
    const over = await charge(tenantId, permitId, { amount: 10_001, description: "Trop" });
    expect(over.status).toBe(422);
    expect(over.body).toMatchObject({ code: "amount_exceeds_permit", error: "Unprocessable Entity" });
    const { tenantId: otherTenant } = await gw.tenantWithAccount(sim);
    const foreign = await charge(otherTenant, permitId);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("not_found");
    const pending = await createPermit(gw, tenantId);
    const notActive = await charge(tenantId, pending.permitId);
    expect(notActive.status).toBe(409);
    expect(notActive.body.code).toBe("permit_not_active");
    const unknown = await charge(tenantId, "prm_00000000000000000000000000");
    expect(unknown.status).toBe(404);
    const invalid = await charge(tenantId, permitId, { amount: 1.5, description: "", customData: { a: { b: 1 } } });
    expect(invalid.status).toBe(400);
    expect((invalid.body.message as string[]).join("\n")).toMatch(/amount[\s\S]*description[\s\S]*customData\.a/);
    // Nothing was recorded for any of them.
    const rows = await gw.gateway.deps.db.selectFrom("permit_charges").select("id").where("tenant_id", "in", [tenantId, otherTenant]).execute();
    expect(rows).toHaveLength(0);
  });

  it("a charge provider B declines is failed with permit.charge.failed and its fail reason", async () => {
    const { tenantId, permitId, token } = await activePermit();
    await simControl(`permits/${token}/fail-next`);
    const { body } = await charge(tenantId, permitId);
    expect(body).toMatchObject({ status: "failed", failReason: "insufficient_funds" });
    const payment = await json(await gw.call("GET", `/payments/${body.paymentId}`, tenantId));
    expect(payment).toMatchObject({ state: "failed", failureCode: "insufficient_funds" });
    const events = await chargeEvents(gw, body.chargeId);
    expect(events.map((e) => [e.type, e.data.failReason, e.data.status])).toEqual([["permit.charge.failed", "insufficient_funds", "failed"]]);
  });

  it("a pending answer stays pending and is settled by the charge's IPN, never charged again", async () => {
    const { tenantId, permitId, token } = await activePermit();
    await simControl(`permits/${token}/pending-next`);
    const { body } = await charge(tenantId, permitId);
    expect(body).toMatchObject({ status: "pending" });
    expect(body.invoiceToken).toBeTruthy();
    expect((await chargeRow(gw, body.chargeId)).provider_answered_at).not.toBeNull();
    expect((await simControl(`invoices/${body.invoiceToken}/pay`)).status).toBe(200);
    await waitUntil(async () => (await chargeRow(gw, body.chargeId)).status === "succeeded", { what: "the charge settled by IPN", timeoutMs: 8_000 });
    // The sync chain finds it settled and does nothing; provider B was asked to charge once.
    await syncPermitCharge(gw.gateway.deps, { chargeId: body.chargeId, step: 0 });
    expect(proxy.calls.filter((c) => c.idempotencyKey === body.chargeId)).toHaveLength(1);
    expect((await chargeEvents(gw, body.chargeId)).map((e) => e.type)).toEqual(["permit.charge.succeeded"]);
  });

  it("a pending charge whose IPN is lost is settled by the providerB-sync job (a confirm of its invoice)", async () => {
    const { tenantId, permitId, token } = await activePermit();
    await simControl(`permits/${token}/pending-next`);
    const { body } = await charge(tenantId, permitId);
    await gw.down();
    await simControl(`invoices/${body.invoiceToken}/fail`);
    await syncPermitCharge(gw.gateway.deps, { chargeId: body.chargeId, step: 0 });
    gw.up();
    expect(await chargeRow(gw, body.chargeId)).toMatchObject({ status: "failed", fail_reason: "insufficient_funds" });
    expect(proxy.calls.filter((c) => c.idempotencyKey === body.chargeId)).toHaveLength(1);
    expect((await chargeEvents(gw, body.chargeId)).map((e) => e.type)).toEqual(["permit.charge.failed"]);
  });

  it("20 concurrent charges with the same Idempotency-Key make one charge", async () => {
    const { tenantId, permitId } = await activePermit();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => charge(tenantId, permitId, { amount: 2500, description: "Juin" }, { "idempotency-key": "juin-2025" })),
    );
    const ok = answers.filter((a) => a.status === 200);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    for (const a of answers) expect([200, 409], JSON.stringify(a.body)).toContain(a.status);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.code).toBe("idempotency_in_flight");
    const chargeIds = new Set(ok.map((a) => a.body.chargeId));
    expect(chargeIds.size).toBe(1);
    const rows = await gw.gateway.deps.db.selectFrom("permit_charges").selectAll().where("permit_id", "=", permitId).execute();
    expect(rows).toHaveLength(1);
    expect(proxy.invoicesOf(rows[0]!.id)).toHaveLength(1);
    // A retry afterwards replays the same answer.
    const replay = await charge(tenantId, permitId, { amount: 2500, description: "Juin" }, { "idempotency-key": "juin-2025" });
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(replay.body.chargeId).toBe(rows[0]!.id);
    const another = await charge(tenantId, permitId, { amount: 2600, description: "Juin" }, { "idempotency-key": "juin-2025" });
    expect(another.status).toBe(422);
    expect(another.body.code).toBe("idempotency_mismatch");
  });

  it("executing one charge 10 times at once calls provider B under one key: one invoice, one event", async () => {
    const { tenantId, permitId } = await activePermit();
    const { charge: row } = await createPermitCharge(gw.gateway.deps, { tenantId, environment: "sandbox", permitId, amount: 3000, description: "Juillet" });
    const results = await Promise.all(Array.from({ length: 10 }, () => executePermitCharge(gw.gateway.deps, row.id)));
    expect(new Set(results.map((r) => r.status))).toEqual(new Set(["succeeded"]));
    expect(proxy.invoicesOf(row.id)).toHaveLength(1);
    expect((await chargeEvents(gw, row.id)).map((e) => e.type)).toEqual(["permit.charge.succeeded"]);
  });

  it("an answer lost on the way back leaves the charge pending; the sync job sends it again under the same key and provider B charges once", async () => {
    const { tenantId, permitId } = await activePermit();
    let lost = 0;
    proxy.onCharge(() => (lost++ === 0 ? new Response("upstream gateway error", { status: 502 }) : undefined));
    try {
      const { status, body } = await charge(tenantId, permitId, { amount: 4000, description: "Août" });
      expect(status).toBe(200);
      expect(body).toMatchObject({ status: "pending", invoiceToken: null });
      expect((await json(await gw.call("GET", `/payments/${body.paymentId}`, tenantId))).outcomeUnknown).toBe(true);
      await syncPermitCharge(gw.gateway.deps, { chargeId: body.chargeId, step: 0 });
      const settled = await chargeRow(gw, body.chargeId);
      expect(settled.status).toBe("succeeded");
      const calls = proxy.calls.filter((c) => c.idempotencyKey === body.chargeId);
      expect(calls).toHaveLength(2);
      expect(proxy.invoicesOf(body.chargeId)).toEqual([settled.invoice_token!]);
      expect((await json(await gw.call("GET", `/payments/${body.paymentId}`, tenantId))).outcomeUnknown).toBe(false);
      // The charge's IPN came while we did not know its invoice: kept as an orphan, then matched.
      await waitUntil(
        async () =>
          (await gw.gateway.deps.db.selectFrom("ipn_messages").select("state").where("payment_id", "=", body.paymentId).executeTakeFirst())?.state ===
          "processed",
        { what: "the orphaned charge IPN processed", timeoutMs: 8_000 },
      );
      expect((await chargeEvents(gw, body.chargeId)).map((e) => e.type)).toEqual(["permit.charge.succeeded"]);
    } finally {
      proxy.onCharge(undefined);
    }
  });

  it("a renewal is one row per (schedule, period, attempt), however often and concurrently it is created", async () => {
    const { tenantId, permitId } = await activePermit();
    const scheduleId = "sch_01JD3Z6Q5W8B8Y4G1M7T2N9XKC";
    const now = new Date();
    await gw.gateway.deps.db
      .insertInto("permit_schedules")
      .values({
        id: scheduleId,
        permit_id: permitId,
        tenant_id: tenantId,
        environment: "sandbox",
        amount: 1000,
        interval: "month",
        interval_count: 1,
        description: "Mensuel",
        start_at: now,
        time_zone: "Africa/Abidjan",
        period_index: 0,
        period: "2025-05-31",
        due_at: now,
        next_attempt_at: now,
        status: "active",
      })
      .execute();
    const renewal = { scheduleId, period: "2025-05-31", attempt: 0 };
    const input = { tenantId, environment: "sandbox" as const, permitId, amount: 1000, description: "Mensuel", renewal };
    const made = await Promise.all(Array.from({ length: 8 }, () => createPermitCharge(gw.gateway.deps, input)));
    expect(new Set(made.map((m) => m.charge.id)).size).toBe(1);
    expect(made.filter((m) => m.created)).toHaveLength(1);
    const rows = await gw.gateway.deps.db.selectFrom("permit_charges").selectAll().where("schedule_id", "=", scheduleId).execute();
    expect(rows).toHaveLength(1);
    const payments = await gw.gateway.deps.db
      .selectFrom("payments")
      .select("id")
      .where("tenant_id", "=", tenantId)
      .where("kind", "=", "permit_charge")
      .execute();
    expect(payments).toHaveLength(1);
    // The next attempt of the same period is a row of its own (once the schedule expects it, as after a failure).
    await gw.gateway.deps.db.updateTable("permit_schedules").set({ attempt: 1 }).where("id", "=", scheduleId).execute();
    const retry = await createPermitCharge(gw.gateway.deps, { ...input, renewal: { ...renewal, attempt: 1 } });
    expect(retry.created).toBe(true);
  });

  it("the sweeper re-creates the sync chain of a pending charge whose job is missing", async () => {
    const db = await createTestDatabase();
    const first = await startRigGateway({ sim: { ...sim, url: proxy.url }, database: db, workers: true });
    try {
      const { tenantId, permitId } = await activePermit(first);
      await first.gateway.stop();
      // A charge row whose jobs went with the process (a restart on the in-process driver, or Redis lost).
      const second = await startRigGateway({ sim: { ...sim, url: proxy.url }, database: db, workers: false });
      try {
        const { charge: row } = await createPermitCharge(second.gateway.deps, {
          tenantId,
          environment: "sandbox",
          permitId,
          amount: 1500,
          description: "Sept",
        });
        const third = await startRigGateway({ sim: { ...sim, url: proxy.url }, database: db, workers: true });
        try {
          // This sweep re-creates it — or the third gateway's own sweeper already did: its scheduled job may run as soon as
          // the gateway's workers start. Either way one chain, then none missing, and the charge settles once.
          expect((await sweepProviderB(third.gateway.deps)).chargeSyncsEnqueued).toBeLessThanOrEqual(1);
          expect((await sweepProviderB(third.gateway.deps)).chargeSyncsEnqueued).toBe(0);
          await waitUntil(async () => (await chargeRow(third, row.id)).status === "succeeded", { what: "the swept charge", timeoutMs: 10_000 });
          expect(proxy.invoicesOf(row.id)).toHaveLength(1);
        } finally {
          await third.close();
        }
      } finally {
        await second.close();
      }
    } finally {
      await first.close().catch(() => undefined);
      await db.dispose();
    }
  }, 30_000);
});

describe("DELETE /providerB/permits/{permit_id} and the permit's schedule", () => {
  it("revoking cancels the permit's schedule in the same transaction; charges are refused afterwards", async () => {
    const { tenantId, permitId } = await activePermit();
    const now = new Date();
    await gw.gateway.deps.db
      .insertInto("permit_schedules")
      .values({
        id: "sch_01JD3Z6Q5W8B8Y4G1M7T2N9XKD",
        permit_id: permitId,
        tenant_id: tenantId,
        environment: "sandbox",
        amount: 1000,
        interval: "week",
        interval_count: 1,
        description: "Hebdo",
        start_at: now,
        time_zone: "Africa/Abidjan",
        period_index: 0,
        period: "2025-06-01",
        due_at: now,
        next_attempt_at: now,
        status: "active",
      })
      .execute();
    const revoked = await json(await gw.call("DELETE", `/providerB/permits/${permitId}`, tenantId));
    expect(revoked.status).toBe("revoked");
    const schedule = await gw.gateway.deps.db.selectFrom("permit_schedules").selectAll().where("permit_id", "=", permitId).executeTakeFirstOrThrow();
    expect(schedule.status).toBe("cancelled");
    expect(schedule.cancelled_at!.getTime()).toBe(new Date(revoked.endedAt).getTime());
    expect((await charge(tenantId, permitId)).status).toBe(409);
  });

  it("provider B failing the revocation (502) changes nothing: the permit stays active and chargeable", async () => {
    const { tenantId, permitId } = await activePermit();
    proxy.downFor("/permit/revoke");
    try {
      const response = await gw.call("DELETE", `/providerB/permits/${permitId}`, tenantId);
      expect(response.status).toBe(502);
      expect((await json(response)).code).toBe("provider_error");
    } finally {
      proxy.downFor(undefined);
    }
    expect((await json(await gw.call("GET", `/providerB/permits/${permitId}`, tenantId))).status).toBe("active");
    expect((await charge(tenantId, permitId)).body.status).toBe("succeeded");
  });
});

describe("a worker killed right after provider B answered the charge", () => {
  it.skipIf(!DATABASE_URL || !REDIS_URL)(
    `the restarted worker finishes the charge and provider B charged once${DATABASE_URL && REDIS_URL ? "" : " (SKIPPED: needs DATABASE_URL and REDIS_URL)"}`,
    async () => {
      const named = await createNamedServerDatabase(DATABASE_URL!);
      const handle = await openDatabase({ driver: "postgres", url: named.url, max: 5 });
      const db: TestDatabase = { ...handle, audited: true, dispose: async () => (await handle.close(), await named.dispose()) };
      const prefix = testQueuePrefix();
      // The HTTP side only (IPNs are stored and enqueued here); `passerelle worker` processes every job.
      const parent = await startRigGateway({ sim: { ...sim, url: proxy.url }, database: db, workers: false, prefix });
      const workerEnv = {
        ...process.env,
        ...TEST_ENV,
        LOG_LEVEL: "info",
        DATABASE_URL: named.url,
        REDIS_URL: REDIS_URL!,
        QUEUE_PREFIX: prefix,
        PUBLIC_BASE_URL: parent.url,
        PROVIDER_B_SANDBOX_URL: `${proxy.url}/sandbox-api/v1`,
        PROVIDER_B_LIVE_URL: `${proxy.url}/api/v1`,
        PROVIDER_TIMEOUT_MS: "5000",
      };
      const spawnWorker = () => Bun.spawn(["bun", "src/main.ts", "worker"], { env: workerEnv, stdin: "ignore", stdout: "pipe", stderr: "inherit" });
      let worker = spawnWorker();
      try {
        await waitForStart(worker, 20_000);
        const { tenantId, permitId } = await activePermit(parent);

        // As a renewal is made: the row first (with its sync chain, first step after 5 s), then a worker sends it.
        const { charge: row } = await createPermitCharge(parent.gateway.deps, {
          tenantId,
          environment: "sandbox",
          permitId,
          amount: 7000,
          description: "Octobre",
        });
        // Provider B charges, answers — and the worker that asked dies before it can record anything.
        const killed = worker;
        proxy.onCharge(async (call) => {
          if (call.idempotencyKey !== row.id) return undefined;
          killed.kill("SIGKILL");
          await killed.exited;
          return undefined;
        });
        expect(proxy.calls.filter((c) => c.idempotencyKey === row.id)).toHaveLength(0);
        await waitUntil(() => killed.signalCode === "SIGKILL", { what: "the worker killed after the provider call", timeoutMs: 20_000, intervalMs: 50 });
        proxy.onCharge(undefined);
        expect(proxy.invoicesOf(row.id)).toHaveLength(1);
        const invoice = proxy.invoicesOf(row.id)[0]!;
        // Charged at provider B, unknown to us.
        expect(await chargeRow(parent, row.id)).toMatchObject({ status: "pending", provider_answered_at: null, invoice_token: null });

        worker = spawnWorker();
        await waitForStart(worker, 20_000);
        // The sweeper (the repeatable job runs it every minute; here every 500 ms) finds the chain's job
        // stuck with the dead worker and enqueues the next step: the restarted worker sends the charge again.
        const settled = await waitUntil(
          async () => {
            await sweepProviderB(parent.gateway.deps);
            const current = await chargeRow(parent, row.id);
            return current.status === "succeeded" ? current : undefined;
          },
          { what: "the charge finished by the restarted worker", timeoutMs: 40_000, intervalMs: 500 },
        );
        // Provider B was asked twice under the same key and answered the same invoice: charged once.
        const calls = proxy.calls.filter((c) => c.idempotencyKey === row.id);
        expect(calls.length).toBeGreaterThanOrEqual(2);
        expect(proxy.invoicesOf(row.id)).toEqual([invoice]);
        expect(settled.invoice_token).toBe(invoice);
        expect((await chargeEvents(parent, row.id)).map((e) => e.type)).toEqual(["permit.charge.succeeded"]);
        const payment = await parent.gateway.deps.db.selectFrom("payments").selectAll().where("id", "=", row.payment_id).executeTakeFirstOrThrow();
        expect(payment).toMatchObject({ state: "succeeded", provider_transaction_id: invoice });
      } finally {
        proxy.onCharge(undefined);
        worker.kill("SIGKILL");
        await worker.exited;
        await parent.close();
        await deleteKeysUnderPrefix(REDIS_URL!, prefix);
        await db.dispose();
      }
    },
    90_000,
  );
});
