/**
 * The rescue of a stalled push (issue 31 point 3), with both simulators over real HTTP: a push unanswered for
 * RESCUE_AFTER offers `payment.rescue_available` with a rescue URL (found by the sweeper's clause, from the
 * database); a try there is an attempt of the same payment; the first push approved late still wins — one charge
 * kept, the other a difference to refund, one `payment.completed`. Duplicates and concurrent tries make one
 * attempt; a rescue URL reaches its own payment only; a failure the customer can fix offers a rescue with it.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createProviderASimulator, type ProviderASimulator } from "../../../src/providers/providerA/simulator/mod.ts";
import { followEarlierPushes, offerStalledRescues } from "../../../src/services/rescue/mod.ts";
import type { TestDatabase } from "../../support/db.ts";
import {
  addWebhookEndpoint,
  createTestDatabase,
  type RigGateway,
  type SimulatorServer,
  startRigGateway,
  startSimulator,
} from "../../support/provider-b-rig.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

type Body = Record<string, any>;

let simA: { simulator: ProviderASimulator; url: string; server: ReturnType<typeof Bun.serve> };
let simB: SimulatorServer;
let database: TestDatabase;
let gw: RigGateway;
let receiver: WebhookReceiver;
let tenantId: string;
let otherTenantId: string;
let accountA: { secretKey: string; webhookSecret: string };
let gatewayEnv: Record<string, string>;

/** Where provider A's simulator sends its notifications (a dead port: they are lost). */
async function notifyAt(url: string): Promise<void> {
  await fetch(`${simA.url}/_sim/accounts/${accountA.secretKey}/webhook`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url }),
  });
}

async function call(method: string, path: string, body?: unknown, tenant = tenantId): Promise<{ status: number; body: Body }> {
  const response = await gw.call(method, path, tenant, body);
  return { status: response.status, body: (await response.json()) as Body };
}

/** A pay page call: public, no token. */
async function pay(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: Body; headers: Headers }> {
  const response = await fetch(`${gw.url}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Body, headers: response.headers };
}

async function eventsOf(paymentId: string): Promise<{ type: string; data: Body }[]> {
  return (await gw.gateway.deps.db
    .selectFrom("events")
    .select(["type", "data"])
    .where("payment_id", "=", paymentId)
    .orderBy("created_at")
    .orderBy("id")
    .execute()) as never;
}

/** The sweeper's clause, run until the payment's rescue is offered (RESCUE_AFTER is 1 s here); its event's data. */
async function rescueOffered(paymentId: string, offers = 1): Promise<Body> {
  return waitUntil(
    async () => {
      await offerStalledRescues(gw.gateway.deps);
      const offered = (await eventsOf(paymentId)).filter((e) => e.type === "payment.rescue_available");
      return offered.length >= offers ? offered[offers - 1]!.data : undefined;
    },
    { what: `a rescue offered for ${paymentId}`, timeoutMs: 20_000, intervalMs: 300 },
  );
}

async function attemptsOf(paymentId: string): Promise<Body[]> {
  return (await call("GET", `/payments/${paymentId}`)).body.attempts;
}

/** Provider A's console, as the customer's phone: approve or decline a push. */
async function atA(transactionId: string, action: "approve" | "decline", body?: unknown): Promise<void> {
  const response = await fetch(`${simA.url}/_sim/transactions/${transactionId}/${action}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body ?? {}),
  });
  expect(response.status).toBe(200);
}

async function linkFor(tenant: string, amount: number): Promise<{ id: string }> {
  const created = await call("POST", "/payment-links", { amount, description: "Pagne wax", countries: ["bj"], reusable: true }, tenant);
  expect(created.status, JSON.stringify(created.body)).toBe(200);
  return created.body as { id: string };
}

beforeAll(async () => {
  const simulator = createProviderASimulator({ approveDelayMs: 50 });
  const server = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: simulator.fetch });
  simA = { simulator, server, url: `http://127.0.0.1:${server.port}` };
  accountA = (await (await fetch(`${simA.url}/_sim/accounts`, { method: "POST" })).json()) as { secretKey: string; webhookSecret: string };
  simB = await startSimulator();
  database = await createTestDatabase();
  gatewayEnv = {
    PROVIDER_A_SANDBOX_URL: simA.url,
    PROVIDER_A_SANDBOX_SECRET_KEY: accountA.secretKey,
    PROVIDER_A_SANDBOX_WEBHOOK_SECRET: accountA.webhookSecret,
    RESCUE_AFTER: "1",
    ROUTING_EXPLORE_SHARE: "0",
  };
  gw = await startRigGateway({ sim: simB, database, env: gatewayEnv });
  await notifyAt(`${gw.url}/providerA/webhook/sandbox`);
  ({ tenantId } = await gw.tenantWithAccount(simB));
  ({ tenantId: otherTenantId } = await gw.tenantWithAccount(simB));
  receiver = await startReceiver();
  await addWebhookEndpoint(gw, tenantId, `${receiver.url}/hooks`);
});

afterAll(async () => {
  await gw?.close();
  await simB?.stop();
  await simA?.server.stop(true);
  simA?.simulator.close();
  await receiver?.stop();
  await database?.dispose();
});

describe("the rescue of a stalled push", () => {
  it("rescues a stalled MTN push on Moov, the first push approved late: one charge kept, one payment.completed", async () => {
    const link = await linkFor(tenantId, 3000);
    // 3000 FCFA: provider A's sandbox waits for its console — the customer does not answer the prompt.
    const made = await pay("POST", `/pay/${link.id}/payments`, { operator: "mtn", phone: { number: "+22997100010", country: "bj" } });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    const paymentId = made.body.id as string;
    const first = (await attemptsOf(paymentId))[0]!;
    expect(first).toMatchObject({ provider: "providerA", outcome: "started" });

    const offer = await rescueOffered(paymentId);
    expect(offer).toMatchObject({ paymentId, reason: "no_answer", attempt: 1, operator: "mtn", state: "pending", amount: 3000, paymentLinkId: link.id });
    const rescuePath = new URL(offer.rescueUrl).pathname;
    expect(rescuePath).toMatch(/^\/pay\/rs_[0-9A-HJKMNP-TV-Z]{26}$/);
    // The sweeper again: one offer per stalled attempt.
    await offerStalledRescues(gw.gateway.deps);
    expect((await eventsOf(paymentId)).filter((e) => e.type === "payment.rescue_available")).toHaveLength(1);
    // The merchant's endpoint got it (its body checked against the document's webhooks section).
    await waitUntil(() => receiver.receipts.find((r) => r.body.includes('"payment.rescue_available"') && r.body.includes(paymentId)), {
      what: "payment.rescue_available delivered",
      timeoutMs: 15_000,
    });
    // The link's page, still following the payment, offers the rescue too.
    expect((await pay("GET", `/pay/${link.id}/payments/${paymentId}`)).body).toMatchObject({ state: "pending", rescueUrl: rescuePath });

    const face = await pay("GET", `${rescuePath}/link`);
    expect(face.body).toMatchObject({
      status: "active",
      amount: 3000,
      shop: "Boutique",
      rescue: { paymentId, open: true, operator: "mtn", reason: "no_answer" },
    });
    expect(face.body.wallets.map((w: Body) => w.operator)).toContain("moov");

    // The customer chooses Moov, on another number.
    const tried = await pay(
      "POST",
      `${rescuePath}/payments`,
      { operator: "moov", phone: { number: "+22995100011", country: "bj" } },
      { "idempotency-key": "try-1" },
    );
    expect(tried.status, JSON.stringify(tried.body)).toBe(200);
    expect(tried.body).toMatchObject({ id: paymentId, state: "pending", operator: "moov" });
    const attempts = await attemptsOf(paymentId);
    expect(attempts.map((a: Body) => [a.attempt, a.provider, a.outcome])).toEqual([
      [1, "providerA", "started"],
      [2, "providerA", "started"],
    ]);
    expect(attempts[1]!.reason).toContain("rescue try (no_answer)");
    expect((await pay("GET", `${rescuePath}/link`)).body.rescue.open).toBe(false);

    // The first push is approved late: it wins, the payment is MTN's again.
    await atA(first.providerTransactionId, "approve");
    const paid = await waitUntil(
      async () => {
        const read = await call("GET", `/payments/${paymentId}`);
        return read.body.state === "succeeded" ? read.body : undefined;
      },
      { what: "the payment paid by the first push", timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(paid).toMatchObject({ provider: "providerA", operator: "mtn", providerTransactionId: first.providerTransactionId });
    expect(paid.customer.phone).toBe("+22997100010");
    expect(paid.attempts[1].error).toContain("abandoned: the payment was paid through attempt 1");
    expect((await pay("GET", `${rescuePath}/payments/${paymentId}`)).body).toMatchObject({ state: "succeeded", operator: "mtn", rescueUrl: null });
    expect((await pay("GET", `${rescuePath}/link`)).body.status).toBe("used");

    // The customer approves the Moov push too: paid twice — kept as a difference to refund, never a second completion.
    await atA(attempts[1]!.providerTransactionId, "approve");
    const difference = await waitUntil(async () => (await call("GET", "/reports/reconciliation")).body.differences.find((d: Body) => d.id === paymentId), {
      what: "the second charge kept as a difference",
      timeoutMs: 20_000,
      intervalMs: 200,
    });
    expect(difference).toMatchObject({ kind: "payment", provider: "providerA", ourState: "succeeded", providerState: "succeeded" });
    expect(difference.providerStatus).toContain("paid again through attempt 2");
    const types = (await eventsOf(paymentId)).map((e) => e.type);
    expect(types.filter((t) => t === "payment.completed")).toHaveLength(1);
    expect(types.filter((t) => t === "payment_link.paid")).toHaveLength(1);
    // A try on a paid payment is refused.
    const late = await pay(
      "POST",
      `${rescuePath}/payments`,
      { operator: "moov", phone: { number: "+22995100011", country: "bj" } },
      { "idempotency-key": "try-2" },
    );
    expect(late.status).toBe(409);
  }, 90_000);

  it("takes one attempt for duplicate and concurrent tries", async () => {
    const made = await call("POST", "/payments", {
      amount: 2000,
      description: "Commande 77",
      operator: "mtn",
      customer: { phone: { number: "+22997100020", country: "bj" } },
    });
    expect(made.status).toBe(200);
    const paymentId = made.body.id as string;
    const rescuePath = new URL((await rescueOffered(paymentId)).rescueUrl).pathname;
    const body = { operator: "moov", phone: { number: "+22995100021", country: "bj" } };
    // Five tries at once, each its own key (five tabs), and the same key sent twice.
    const answers = await Promise.all([
      ...Array.from({ length: 5 }, (_, i) => pay("POST", `${rescuePath}/payments`, body, { "idempotency-key": `tab-${i}` })),
      pay("POST", `${rescuePath}/payments`, body, { "idempotency-key": "tab-0" }),
    ]);
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((s) => s === 200).length).toBeGreaterThanOrEqual(1);
    expect(statuses.every((s) => s === 200 || s === 409)).toBe(true);
    const attempts = await attemptsOf(paymentId);
    expect(
      attempts.map((a: Body) => a.attempt),
      JSON.stringify(attempts),
    ).toEqual([1, 2]);
    // Every 200 is that one try (a replay of tab-0's answer, or tab-0 itself).
    for (const answer of answers.filter((a) => a.status === 200)) expect(answer.body).toMatchObject({ id: paymentId, operator: "moov" });
    // The same key again, after: the first answer, replayed.
    const winner = answers.findIndex((a) => a.status === 200);
    const key = winner === 5 ? "tab-0" : `tab-${winner}`;
    const replay = await pay("POST", `${rescuePath}/payments`, body, { "idempotency-key": key });
    expect(replay.status).toBe(200);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(await attemptsOf(paymentId)).toHaveLength(2);
    // The try stalls too: the sweeper offers the rescue again, after attempt 2, on the same URL.
    const again = await rescueOffered(paymentId, 2);
    expect(again).toMatchObject({ attempt: 2, operator: "moov" });
    expect(new URL(again.rescueUrl).pathname).toBe(rescuePath);
  }, 60_000);

  it("offers a rescue with a failure the customer can fix, and a try there settles the failed payment once", async () => {
    const made = await call("POST", "/payments", {
      amount: 2500,
      description: "Commande 78",
      operator: "mtn",
      customer: { phone: { number: "+22997100030", country: "bj" } },
    });
    const paymentId = made.body.id as string;
    await atA(made.body.providerTransactionId, "decline", { last_error_code: "INSUFFICIENT_FUND_ERROR" });
    const failed = await waitUntil(
      async () => {
        const read = await call("GET", `/payments/${paymentId}`);
        return read.body.state === "failed" ? read.body : undefined;
      },
      { what: "the payment failed", timeoutMs: 20_000, intervalMs: 200 },
    );
    expect(failed.failureCode).toBe("INSUFFICIENT_FUND_ERROR");
    const events = await eventsOf(paymentId);
    expect(events.map((e) => e.type)).toEqual(["payment.failed", "payment.rescue_available"]);
    const offer = events[1]!.data;
    expect(offer).toMatchObject({ reason: "INSUFFICIENT_FUND_ERROR", state: "failed", attempt: 1 });
    const rescuePath = new URL(offer.rescueUrl).pathname;
    const tried = await pay(
      "POST",
      `${rescuePath}/payments`,
      { operator: "moov", phone: { number: "+22995100031", country: "bj" } },
      { "idempotency-key": "k" },
    );
    expect(tried.status, JSON.stringify(tried.body)).toBe(200);
    // A try under way on a failed payment is shown pending to the customer.
    expect(tried.body).toMatchObject({ state: "pending", operator: "moov" });
    const attempts = await attemptsOf(paymentId);
    await atA(attempts[1]!.providerTransactionId, "approve");
    await waitUntil(async () => ((await pay("GET", `${rescuePath}/payments/${paymentId}`)).body.state === "succeeded" ? true : undefined), {
      what: "the try paid",
      timeoutMs: 20_000,
      intervalMs: 300,
    });
    expect((await eventsOf(paymentId)).map((e) => e.type)).toEqual(["payment.failed", "payment.rescue_available", "payment.completed"]);
  }, 60_000);

  it("reaches its own payment only: another tenant's, a made-up id, another link's", async () => {
    const mine = await call("POST", "/payments", {
      amount: 2000,
      description: "A",
      operator: "mtn",
      customer: { phone: { number: "+22997100040", country: "bj" } },
    });
    const theirs = await call(
      "POST",
      "/payments",
      { amount: 2000, description: "B", operator: "mtn", customer: { phone: { number: "+22997100041", country: "bj" } } },
      otherTenantId,
    );
    const myPath = new URL((await rescueOffered(mine.body.id)).rescueUrl).pathname;
    const theirPath = new URL((await rescueOffered(theirs.body.id)).rescueUrl).pathname;
    expect(myPath).not.toBe(theirPath);
    // My rescue URL does not show their payment, nor mine through theirs.
    expect((await pay("GET", `${myPath}/payments/${theirs.body.id}`)).status).toBe(404);
    expect((await pay("GET", `${theirPath}/payments/${mine.body.id}`)).status).toBe(404);
    // A made-up rescue id, and a link of theirs, know nothing.
    expect((await pay("GET", "/pay/rs_00000000000000000000000000/link")).status).toBe(404);
    expect(
      (await pay("POST", "/pay/rs_00000000000000000000000000/payments", { operator: "moov", phone: { number: "+22995100042", country: "bj" } })).status,
    ).toBe(404);
    const theirLink = await linkFor(otherTenantId, 500);
    expect((await pay("GET", `/pay/${theirLink.id}/payments/${mine.body.id}`)).status).toBe(404);
    // The face of my rescue names my shop and my payment only.
    const face = (await pay("GET", `${myPath}/link`)).body;
    expect(face.rescue.paymentId).toBe(mine.body.id);
    expect(JSON.stringify(face)).not.toContain(theirs.body.id);
    // The same Idempotency-Key on both rescue URLs makes two tries: keys are each tenant's, under each URL.
    const body = { operator: "moov", phone: { number: "+22995100043", country: "bj" } };
    const a = await pay("POST", `${myPath}/payments`, body, { "idempotency-key": "same" });
    const b = await pay("POST", `${theirPath}/payments`, body, { "idempotency-key": "same" });
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.body.id).toBe(mine.body.id);
    expect(b.body.id).toBe(theirs.body.id);
    // Another tenant's token does not read my payment either.
    expect((await call("GET", `/payments/${mine.body.id}`, undefined, otherTenantId)).status).toBe(404);
  }, 60_000);
  it("gives the payment back to the first push approved late while its notification is lost: the sweeper reads it", async () => {
    const made = await call("POST", "/payments", {
      amount: 2000,
      description: "C",
      operator: "mtn",
      customer: { phone: { number: "+22997100050", country: "bj" } },
    });
    const paymentId = made.body.id as string;
    const rescuePath = new URL((await rescueOffered(paymentId)).rescueUrl).pathname;
    const tried = await pay(
      "POST",
      `${rescuePath}/payments`,
      { operator: "moov", phone: { number: "+22995100051", country: "bj" } },
      { "idempotency-key": "lost" },
    );
    expect(tried.status).toBe(200);
    await notifyAt("http://127.0.0.1:9/lost");
    try {
      await atA(made.body.providerTransactionId, "approve");
      // No notification comes; the sync schedule reads the try (still pending); the sweeper reads the first push.
      const paid = await waitUntil(
        async () => {
          await followEarlierPushes(gw.gateway.deps);
          const read = await call("GET", `/payments/${paymentId}`);
          return read.body.state === "succeeded" ? read.body : undefined;
        },
        { what: "the first push found paid by the sweeper", timeoutMs: 20_000, intervalMs: 500 },
      );
      expect(paid).toMatchObject({ operator: "mtn", providerTransactionId: made.body.providerTransactionId });
      expect((await eventsOf(paymentId)).filter((e) => e.type === "payment.completed")).toHaveLength(1);
    } finally {
      await notifyAt(`${gw.url}/providerA/webhook/sandbox`);
    }
  }, 60_000);

  it("finds a stalled push from the database after a restart: a new gateway's sweeper offers its rescue", async () => {
    const made = await call("POST", "/payments", {
      amount: 2000,
      description: "D",
      operator: "mtn",
      customer: { phone: { number: "+22997100060", country: "bj" } },
    });
    const paymentId = made.body.id as string;
    // The gateway that made it stops before any sweep offered anything; another starts, sweeping every second.
    await gw.close();
    gw = await startRigGateway({ sim: simB, database, env: { ...gatewayEnv, SWEEP_EVERY_MS: "1000" } });
    const offered = await waitUntil(async () => (await eventsOf(paymentId)).find((e) => e.type === "payment.rescue_available"), {
      what: "the rescue offered by the new gateway's sweeper",
      timeoutMs: 30_000,
      intervalMs: 300,
    });
    expect(offered.data).toMatchObject({ paymentId, reason: "no_answer", attempt: 1 });
    expect(new URL(offered.data.rescueUrl).origin).toBe(gw.url);
  }, 60_000);
});
