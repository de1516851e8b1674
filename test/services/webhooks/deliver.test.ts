/**
 * Webhook delivery (contract §6, issue 4 points 3 and 4): real deliveries over HTTP to a receiver on
 * 127.0.0.1, verified with the `standardwebhooks` package — a receiver's library we did not write. PGlite,
 * or PostgreSQL with DATABASE_URL.
 *
 * The gateway runs on virtual time (`virtual-time.ts`), its queue in-process on both passes: a retry is due
 * 5 s, then 30 s after a failed attempt (±20 %), and runs when a test moves the clock to it, to the
 * millisecond. The receiver's and the request's own times (WEBHOOK_TIMEOUT_MS) stay real.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ulid } from "ulid";
import { Webhook } from "standardwebhooks";
import type { Environment } from "../../../src/db/schema.ts";
import { NotFoundError, ValidationError, ConflictError } from "../../../src/errors.ts";
import { decideOutcome, FAILING_ENDPOINT_DISABLE_MS } from "../../../src/services/webhooks/attempt-outcome.ts";
import { deliverOnce, deliveryLeaseMs, WEBHOOK_USER_AGENT } from "../../../src/services/webhooks/deliver.ts";
import { replayEndpoint, retryDelivery, sendTestEvent } from "../../../src/services/webhooks/delivery-actions.ts";
import { listDeliveries } from "../../../src/services/webhooks/delivery-log.ts";
import { createEndpoint, deleteEndpoint, rotateEndpointSecret, updateEndpoint } from "../../../src/services/webhooks/endpoints.ts";
import { deliveryJobId, lostLeaseJobId, WEBHOOKS_QUEUE } from "../../../src/jobs/queues.ts";
import { maxDeliveryAttempts, parseRetryAfter, retryDelayMs } from "../../../src/services/webhooks/retry-schedule.ts";
import { scheduleDeliveries } from "../../../src/services/webhooks/schedule-deliveries.ts";
import { sweepDueDeliveries } from "../../../src/services/webhooks/sweeper.ts";
import { startDeliveryGateway, type DeliveryGateway } from "../../support/delivery-gateway.ts";
import { virtualTime } from "../../support/virtual-time.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type Responder, type WebhookReceiver } from "../../support/webhook-receiver.ts";

const DAY = 86_400_000;
/**
 * The gateway's clock. standardwebhooks checks a signature's timestamp against the wall clock (±5 min): it
 * starts two minutes behind it, so the retries this file moves through (a few minutes) keep within.
 */
const time = virtualTime(new Date(Date.now() - 2 * 60_000));
/** Moves the gateway's clock days ahead of `time` (an endpoint failing for 5 days) without running those days. */
const clock = { offsetMs: 0 };
let dg: DeliveryGateway;
let receiver: WebhookReceiver;
/** Answers by path; anything else gets 200 "ok". */
const routes = new Map<string, Responder>();
let pathCounter = 0;

beforeAll(async () => {
  receiver = await startReceiver({
    syntheticEvents: true,
    respond: (receipt, index) => (routes.get(receipt.path) ?? (() => new Response("ok")))(receipt, index),
  });
  dg = await startDeliveryGateway({
    env: { WEBHOOK_RETRY_SCHEDULE: "5s,30s", WEBHOOK_TIMEOUT_MS: "500" },
    time,
    now: () => new Date(time.now().getTime() + clock.offsetMs),
  });
}, 60_000);
afterAll(async () => {
  await dg?.close();
  await receiver?.stop();
}, 30_000);

interface Scope {
  tenantId: string;
  environment: Environment;
}

/** Each test its own tenant, so its endpoints see only its own events. */
async function newTenant(): Promise<{ scope: Scope; callbackSecret: string }> {
  const { tenantId, callbackSecret } = await dg.createTenant();
  return { scope: { tenantId, environment: "sandbox" }, callbackSecret };
}

/** An endpoint at a fresh receiver path, answering with `respond` (200 "ok" by default). */
async function endpointAt(scope: Scope, opts: { respond?: Responder; events?: ("payment.completed" | "payment.failed" | "payment.refunded")[] } = {}) {
  const path = `/hook-${++pathCounter}`;
  if (opts.respond) routes.set(path, opts.respond);
  const endpoint = await createEndpoint(dg.deps, { ...scope, url: `${receiver.url}${path}`, events: opts.events ?? null });
  return { ...endpoint, path };
}

async function send(
  scope: Scope,
  input: { type?: "payment.completed" | "payment.failed" | "payment.refunded"; directTargetUrl?: string; paymentId?: string } = {},
) {
  const recorded = await dg.record({ tenantId: scope.tenantId, ...input });
  await scheduleDeliveries(dg.deps, recorded.deliveryIds);
  return recorded;
}

function deliveryRow(id: string) {
  return dg.deps.db.selectFrom("deliveries").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

function deliveryTo(eventId: string, endpointId: string) {
  return dg.deps.db.selectFrom("deliveries").selectAll().where("event_id", "=", eventId).where("endpoint_id", "=", endpointId).executeTakeFirstOrThrow();
}

function endpointRow(id: string) {
  return dg.deps.db.selectFrom("webhook_endpoints").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

function attemptsOf(deliveryId: string) {
  return dg.deps.db.selectFrom("delivery_attempts").selectAll().where("delivery_id", "=", deliveryId).orderBy("attempt").execute();
}

/** Waits until the delivery is no longer pending, moving the clock to each of its retries as it waits for one. */
async function settled(deliveryId: string, timeoutMs = 8000) {
  return waitUntil(
    async () => {
      const row = await deliveryRow(deliveryId);
      if (row.state !== "pending") return row;
      const waitMs = row.next_attempt_at.getTime() - dg.deps.now().getTime();
      if (waitMs > 0) await time.advance(waitMs);
      return undefined;
    },
    { what: `delivery ${deliveryId} to finish`, timeoutMs },
  );
}

const verify = (secret: string, receipt: { body: string; headers: Record<string, string> }) => new Webhook(secret).verify(receipt.body, receipt.headers);

describe("retry schedule", () => {
  const schedule = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

  it("gives 8 attempts on the default schedule and none after the last", () => {
    expect(maxDeliveryAttempts(schedule)).toBe(8);
    expect(retryDelayMs({ schedule, failedAttempt: 7, random: () => 0.5 })).toBe(36_000_000);
    expect(retryDelayMs({ schedule, failedAttempt: 8, random: () => 0.5 })).toBeNull();
  });

  it("moves each wait by at most ±20 %", () => {
    expect(retryDelayMs({ schedule, failedAttempt: 1, random: () => 0 })).toBe(4_000);
    expect(retryDelayMs({ schedule, failedAttempt: 1, random: () => 0.5 })).toBe(5_000);
    expect(retryDelayMs({ schedule, failedAttempt: 2, random: () => 0.999_999 })).toBe(360_000);
    const seen = Array.from({ length: 2000 }, () => retryDelayMs({ schedule, failedAttempt: 2 })!);
    expect(Math.min(...seen)).toBeGreaterThanOrEqual(240_000);
    expect(Math.max(...seen)).toBeLessThanOrEqual(360_000);
    // Jitter, not a constant: the spread covers most of the band.
    expect(Math.max(...seen) - Math.min(...seen)).toBeGreaterThan(100_000);
  });

  it("honours Retry-After up to twice the scheduled wait, and never retries earlier than the schedule", () => {
    const at = (retryAfterMs: number) => retryDelayMs({ schedule, failedAttempt: 1, random: () => 0.5, retryAfterMs });
    expect(at(8_000)).toBe(8_000);
    expect(at(3_600_000)).toBe(10_000);
    expect(at(0)).toBe(5_000);
  });

  it("reads Retry-After as seconds or as an HTTP date", () => {
    const now = new Date("2026-11-22T12:00:00Z");
    expect(parseRetryAfter("120", now)).toBe(120_000);
    expect(parseRetryAfter("Sun, 22 Nov 2026 12:01:30 GMT", now)).toBe(90_000);
    expect(parseRetryAfter("Sun, 22 Nov 2026 11:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("-5", now)).toBeUndefined();
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });

  it("decides: 2xx delivered, 410 disables, 5 days of failures disable, a refused URL is final", () => {
    const now = new Date();
    const base = { attempt: 1, schedule: [1000], now, failingSince: null, random: () => 0.5 };
    const answer = (status: number | null, extra: Partial<{ permanent: boolean; headers: Headers }> = {}) => ({
      status,
      error: null,
      headers: new Headers(),
      permanent: false,
      ...extra,
    });
    expect(decideOutcome(answer(204), base)).toEqual({ state: "succeeded" });
    expect(decideOutcome(answer(410), base)).toMatchObject({ state: "failed", disableEndpoint: expect.stringContaining("410 Gone") });
    expect(decideOutcome(answer(410), { ...base, failingSince: undefined })).toEqual({ state: "failed", disableEndpoint: null });
    expect(decideOutcome(answer(500), base)).toEqual({ state: "pending", retryInMs: 1000 });
    expect(decideOutcome(answer(500), { ...base, attempt: 2 })).toEqual({ state: "failed", disableEndpoint: null });
    expect(decideOutcome(answer(null, { permanent: true }), base)).toEqual({ state: "failed", disableEndpoint: null });
    const longAgo = new Date(now.getTime() - FAILING_ENDPOINT_DISABLE_MS);
    expect(decideOutcome(answer(500), { ...base, failingSince: longAgo })).toMatchObject({
      state: "failed",
      disableEndpoint: expect.stringContaining("5 days"),
    });
    const recently = new Date(now.getTime() - FAILING_ENDPOINT_DISABLE_MS + 60_000);
    expect(decideOutcome(answer(500), { ...base, failingSince: recently })).toMatchObject({ state: "pending" });
  });
});

describe("delivering an event", () => {
  it("signs it so that the standardwebhooks library verifies it, with the event envelope as body", async () => {
    const { scope } = await newTenant();
    const endpoint = await endpointAt(scope);
    const { eventId, deliveryIds } = await send(scope);
    expect(deliveryIds).toHaveLength(1);
    const row = await settled(deliveryIds[0]!);
    expect(row).toMatchObject({ state: "succeeded", attempts: 1, last_status: 200, locked_until: null });
    expect(row.delivered_at).toBeInstanceOf(Date);

    const [receipt] = receiver.receiptsOf(eventId, endpoint.path);
    expect(receipt).toBeDefined();
    expect(verify(endpoint.secret, receipt!)).toEqual(JSON.parse(receipt!.body));
    expect(() => verify(`whsec_${Buffer.alloc(32, 1).toString("base64")}`, receipt!)).toThrow();
    expect(receipt!.headers["webhook-id"]).toBe(eventId);
    expect(Number(receipt!.headers["webhook-timestamp"])).toBe(Math.floor(dg.deps.now().getTime() / 1000));
    expect(receipt!.headers["webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(receipt!.headers["content-type"]).toBe("application/json");
    expect(receipt!.headers["user-agent"]).toBe(WEBHOOK_USER_AGENT);

    const body = JSON.parse(receipt!.body);
    expect(Object.keys(body)).toEqual(["id", "type", "createdAt", "tenantId", "environment", "data"]);
    expect(body).toMatchObject({
      id: eventId,
      type: "payment.completed",
      tenantId: scope.tenantId,
      environment: "sandbox",
      data: { paymentId: "pay_test", amount: 5000 },
    });
    expect(new Date(body.createdAt).toISOString()).toBe(body.createdAt);
  });

  it("signs with both the old and the new secret during a rotation, and both verify", async () => {
    const { scope } = await newTenant();
    const endpoint = await endpointAt(scope);
    const { secret: newSecret } = await rotateEndpointSecret(dg.deps, scope, endpoint.id);
    const { eventId, deliveryIds } = await send(scope);
    await settled(deliveryIds[0]!);
    const [receipt] = receiver.receiptsOf(eventId, endpoint.path);
    expect(receipt!.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect(verify(endpoint.secret, receipt!)).toMatchObject({ id: eventId });
    expect(verify(newSecret, receipt!)).toMatchObject({ id: eventId });
  });

  it("logs every attempt: time, status, duration, error and the first 2 KiB of the answer", async () => {
    const { scope } = await newTenant();
    const endpoint = await endpointAt(scope, { respond: (_, i) => (i === 0 ? new Response("x".repeat(3000), { status: 500 }) : new Response("fine")) });
    const { eventId, deliveryIds } = await send(scope);
    await settled(deliveryIds[0]!);
    const page = await listDeliveries(dg.deps, scope, { endpointId: endpoint.id, limit: 10 });
    expect(page.nextCursor).toBeNull();
    expect(page.data).toHaveLength(1);
    const delivery = page.data[0]!;
    expect(delivery).toMatchObject({
      id: deliveryIds[0],
      eventId,
      eventType: "payment.completed",
      endpointId: endpoint.id,
      state: "succeeded",
      attemptCount: 2,
      lastStatus: 200,
      lastError: null,
      nextAttemptAt: null,
    });
    expect(delivery.attempts.map((a) => [a.attempt, a.status, a.error])).toEqual([
      [1, 500, null],
      [2, 200, null],
    ]);
    expect(delivery.attempts[0]!.responseBody).toBe("x".repeat(2048));
    expect(delivery.attempts[1]!.responseBody).toBe("fine");
    for (const attempt of delivery.attempts) {
      expect(attempt.url).toBe(`${receiver.url}${endpoint.path}`);
      expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
      expect(Date.parse(attempt.attemptedAt)).toBeLessThanOrEqual(dg.deps.now().getTime());
      expect(Date.parse(attempt.attemptedAt)).toBeGreaterThan(dg.deps.now().getTime() - 10_000);
    }
    // A success clears the endpoint's failure streak.
    expect((await endpointRow(endpoint.id)).failing_since).toBeNull();
    expect(receiver.receiptsOf(eventId, endpoint.path)).toHaveLength(2);
  });

  it("retries on WEBHOOK_RETRY_SCHEDULE (5 s, 30 s ±20 %), each retry when it falls due and not a millisecond before, then fails", async () => {
    const { scope } = await newTenant();
    const endpoint = await endpointAt(scope, { respond: () => new Response("down", { status: 500 }) });
    const { eventId, deliveryIds } = await send(scope);
    const id = deliveryIds[0]!;
    for (const [made, scheduledMs] of [
      [1, 5_000],
      [2, 30_000],
    ] as const) {
      const row = await waitUntil(async () => ((await deliveryRow(id)).attempts === made ? deliveryRow(id) : undefined), { what: `attempt ${made}` });
      const waitMs = row.next_attempt_at.getTime() - dg.deps.now().getTime();
      expect(waitMs).toBeGreaterThanOrEqual(scheduledMs * 0.8);
      expect(waitMs).toBeLessThanOrEqual(scheduledMs * 1.2);
      await time.advance(waitMs - 1);
      expect((await deliveryRow(id)).attempts).toBe(made);
      expect(receiver.receiptsOf(eventId, endpoint.path)).toHaveLength(made);
      await time.advance(1);
    }
    const row = await settled(id);
    expect(row).toMatchObject({ state: "failed", attempts: 3, last_status: 500, last_error: "answered HTTP 500", locked_until: null });
    const attempts = await attemptsOf(id);
    expect(attempts.map((a) => a.status)).toEqual([500, 500, 500]);
    const gap = (i: number) => attempts[i]!.attempted_at.getTime() - attempts[i - 1]!.attempted_at.getTime();
    expect(gap(1)).toBeGreaterThanOrEqual(4_000);
    expect(gap(1)).toBeLessThanOrEqual(6_000);
    expect(gap(2)).toBeGreaterThanOrEqual(24_000);
    expect(gap(2)).toBeLessThanOrEqual(36_000);
    expect(receiver.receiptsOf(eventId, endpoint.path)).toHaveLength(3);
    expect((await endpointRow(endpoint.id)).failing_since).toBeInstanceOf(Date);
    // Failed for good: a minute on (a sweep included), nothing more comes.
    await time.advance(60_000);
    expect(receiver.receiptsOf(eventId, endpoint.path)).toHaveLength(3);
  });

  it("honours Retry-After, capped at twice the scheduled wait", async () => {
    const { scope } = await newTenant();
    const endpoint = await endpointAt(scope, {
      respond: (_, i) => (i === 0 ? new Response(null, { status: 503, headers: { "retry-after": "30" } }) : new Response("ok")),
    });
    const { deliveryIds } = await send(scope);
    const id = deliveryIds[0]!;
    // 30 s asked, 10 s given (twice the scheduled 5 s), to the millisecond.
    await waitUntil(async () => (await deliveryRow(id)).attempts === 1, { what: "the first attempt" });
    await time.advance(9_999);
    expect((await deliveryRow(id)).attempts).toBe(1);
    await time.advance(1);
    expect(await settled(id)).toMatchObject({ state: "succeeded", attempts: 2 });
    const attempts = await attemptsOf(id);
    expect(attempts[1]!.attempted_at.getTime() - attempts[0]!.attempted_at.getTime()).toBe(10_000);
    expect(endpoint.path).toBeTruthy();
  });

  it("disables the endpoint at once on 410 Gone and fails the delivery", async () => {
    const { scope } = await newTenant();
    const endpoint = await endpointAt(scope, { respond: () => new Response("gone", { status: 410 }) });
    const { eventId, deliveryIds } = await send(scope);
    expect(await settled(deliveryIds[0]!)).toMatchObject({ state: "failed", attempts: 1, last_status: 410 });
    const row = await endpointRow(endpoint.id);
    expect(row.enabled).toBe(false);
    expect(row.disabled_reason).toContain("410 Gone");
    expect(receiver.receiptsOf(eventId, endpoint.path)).toHaveLength(1);
    // Disabled: the next event makes no delivery to it.
    const next = await send(scope);
    expect(next.deliveryIds).toHaveLength(0);
  });

  it("does not follow a redirect: the 3xx is the attempt's answer", async () => {
    const { scope } = await newTenant();
    const target = `/redirected-${ulid()}`;
    const endpoint = await endpointAt(scope, { respond: () => new Response(null, { status: 302, headers: { location: `${receiver.url}${target}` } }) });
    const { deliveryIds } = await send(scope);
    expect(await settled(deliveryIds[0]!)).toMatchObject({ state: "failed", attempts: 3, last_status: 302, last_error: "redirects are not followed" });
    expect((await attemptsOf(deliveryIds[0]!)).map((a) => a.status)).toEqual([302, 302, 302]);
    expect(receiver.receipts.filter((r) => r.path === target)).toHaveLength(0);
    expect(receiver.receipts.filter((r) => r.path === endpoint.path)).toHaveLength(3);
  });

  it("records a receiver slower than WEBHOOK_TIMEOUT_MS as a timeout, and retries", async () => {
    const { scope } = await newTenant();
    await endpointAt(scope, { respond: async (_, i) => (i === 0 ? (await Bun.sleep(1500), new Response("late")) : new Response("ok")) });
    const { deliveryIds } = await send(scope);
    expect(await settled(deliveryIds[0]!)).toMatchObject({ state: "succeeded", attempts: 2 });
    const [first, second] = await attemptsOf(deliveryIds[0]!);
    expect(first).toMatchObject({ status: null, error: "timeout after 500 ms", response_body: null });
    expect(first!.duration_ms).toBeGreaterThanOrEqual(450);
    expect(first!.duration_ms).toBeLessThan(1400);
    expect(second).toMatchObject({ status: 200, error: null });
  });

  it("records a refused connection as an error", async () => {
    const { scope } = await newTenant();
    const endpoint = await createEndpoint(dg.deps, { ...scope, url: "http://127.0.0.1:9/closed" });
    const { deliveryIds } = await send(scope);
    expect(await settled(deliveryIds[0]!)).toMatchObject({ state: "failed", attempts: 3, last_status: null, last_error: "connection refused" });
    expect((await endpointRow(endpoint.id)).enabled).toBe(true);
  });

  it("disables an endpoint that has failed every attempt for 5 days, with a log line naming it", async () => {
    const { scope } = await newTenant();
    const endpoint = await endpointAt(scope, { respond: () => new Response(null, { status: 500 }) });
    const first = await send(scope);
    await settled(first.deliveryIds[0]!);
    const since = (await endpointRow(endpoint.id)).failing_since!;
    expect(since).toBeInstanceOf(Date);
    try {
      clock.offsetMs = 4 * DAY;
      const beforeFiveDays = await send(scope);
      expect((await deliverOnce(dg.deps, beforeFiveDays.deliveryIds[0]!)).outcome).toMatch(/retrying|skipped/);
      expect((await endpointRow(endpoint.id)).enabled).toBe(true);
      await settled(beforeFiveDays.deliveryIds[0]!);

      clock.offsetMs = 5 * DAY + 60_000;
      const later = await send(scope);
      expect(await settled(later.deliveryIds[0]!)).toMatchObject({ state: "failed", attempts: 1 });
    } finally {
      clock.offsetMs = 0;
    }
    const row = await endpointRow(endpoint.id);
    expect(row.enabled).toBe(false);
    expect(row.disabled_reason).toBe(`every delivery attempt failed for 5 days (since ${since.toISOString()})`);
    const line = dg.logs.find((log) => log.endpointId === endpoint.id && log.level === 40);
    expect(line?.msg).toContain(`webhook endpoint ${endpoint.id} disabled`);
  });

  it("sends each endpoint only the event types it subscribes to", async () => {
    const { scope } = await newTenant();
    const onlyFailed = await endpointAt(scope, { events: ["payment.failed"] });
    const all = await endpointAt(scope);
    const completed = await send(scope, { type: "payment.completed" });
    const failed = await send(scope, { type: "payment.failed" });
    expect(completed.deliveryIds).toHaveLength(1);
    expect(failed.deliveryIds).toHaveLength(2);
    for (const id of [...completed.deliveryIds, ...failed.deliveryIds]) expect((await settled(id)).state).toBe("succeeded");
    expect(receiver.receipts.filter((r) => r.path === onlyFailed.path).map((r) => r.headers["webhook-id"])).toEqual([failed.eventId]);
    expect(
      receiver.receipts
        .filter((r) => r.path === all.path)
        .map((r) => r.headers["webhook-id"])
        .sort(),
    ).toEqual([completed.eventId, failed.eventId].sort());
  });

  it("signs a direct target_url delivery (a payment's callback_url) with the tenant's callback secret", async () => {
    const { scope, callbackSecret } = await newTenant();
    const path = `/callback-${ulid()}`;
    const { eventId, deliveryIds } = await send(scope, { directTargetUrl: `${receiver.url}${path}` });
    expect(deliveryIds).toHaveLength(1);
    const row = await settled(deliveryIds[0]!);
    expect(row).toMatchObject({ state: "succeeded", endpoint_id: null, target_url: `${receiver.url}${path}` });
    const [receipt] = receiver.receiptsOf(eventId, path);
    expect(verify(callbackSecret, receipt!)).toMatchObject({ id: eventId, type: "payment.completed" });
  });

  it("still delivers a disabled tenant's events (money already in flight keeps moving)", async () => {
    const { scope } = await newTenant();
    const endpoint = await endpointAt(scope);
    await dg.deps.db.updateTable("tenants").set({ disabled: true }).where("id", "=", scope.tenantId).execute();
    const { eventId, deliveryIds } = await send(scope);
    expect((await settled(deliveryIds[0]!)).state).toBe("succeeded");
    expect(receiver.receiptsOf(eventId, endpoint.path)).toHaveLength(1);
  });
});

describe("endpoints that must receive nothing", () => {
  it("a disabled endpoint gets no delivery, and one disabled before its attempt gets nothing either", async () => {
    const { scope } = await newTenant();
    const endpoint = await endpointAt(scope);
    const recorded = await dg.record({ tenantId: scope.tenantId });
    await updateEndpoint(dg.deps, scope, endpoint.id, { enabled: false });
    await scheduleDeliveries(dg.deps, recorded.deliveryIds);
    expect(await settled(recorded.deliveryIds[0]!)).toMatchObject({ state: "failed", attempts: 0, last_error: "the webhook endpoint is disabled" });
    expect((await send(scope)).deliveryIds).toHaveLength(0);
    await expect(sendTestEvent(dg.deps, scope, endpoint.id)).rejects.toBeInstanceOf(ConflictError);
    await Bun.sleep(100);
    expect(receiver.receipts.filter((r) => r.path === endpoint.path)).toHaveLength(0);
  });

  it("a deleted endpoint's pending delivery fails with the reason", async () => {
    const { scope } = await newTenant();
    const endpoint = await endpointAt(scope);
    const recorded = await dg.record({ tenantId: scope.tenantId });
    await deleteEndpoint(dg.deps, scope, endpoint.id);
    await scheduleDeliveries(dg.deps, recorded.deliveryIds);
    expect(await settled(recorded.deliveryIds[0]!)).toMatchObject({ state: "failed", endpoint_id: null, last_error: "the webhook endpoint was deleted" });
    expect(receiver.receipts.filter((r) => r.path === endpoint.path)).toHaveLength(0);
  });
});

describe("a delivery whose worker died mid-attempt", () => {
  it("is left alone while its lease runs (2 × WEBHOOK_TIMEOUT_MS + 1 s), then sent by the sweep that follows, once", async () => {
    const { scope } = await newTenant();
    const endpoint = await endpointAt(scope);
    const { eventId, deliveryIds } = await dg.record({ tenantId: scope.tenantId });
    const id = deliveryIds[0]!;
    // A worker took the lease, as its lease statement does, and died before sending: no job is left for it.
    const leaseMs = deliveryLeaseMs(dg.config);
    expect(leaseMs).toBe(2_000);
    const lockedUntil = new Date(dg.deps.now().getTime() + leaseMs);
    await dg.deps.db.updateTable("deliveries").set({ locked_until: lockedUntil }).where("id", "=", id).execute();

    // A millisecond before it runs out, and as it runs out, a sweep gives it to no other worker.
    const resent = () => dg.deps.queue.has(WEBHOOKS_QUEUE, lostLeaseJobId(id, 1, lockedUntil));
    await time.advance(leaseMs - 1);
    await sweepDueDeliveries(dg.deps);
    expect(await resent()).toBe(false);
    await time.advance(1);
    await sweepDueDeliveries(dg.deps);
    expect(await resent()).toBe(false);
    expect(await deliveryRow(id)).toMatchObject({ state: "pending", attempts: 0 });
    expect(receiver.receiptsOf(eventId, endpoint.path)).toHaveLength(0);
    // Past it, the gateway's own sweep (every minute) enqueues the attempt again, and it goes out once.
    const logsBefore = dg.logs.length;
    await time.advance(60_000);
    expect(await settled(id)).toMatchObject({ state: "succeeded", attempts: 1, locked_until: null });
    expect(receiver.receiptsOf(eventId, endpoint.path)).toHaveLength(1);
    expect(dg.logs.slice(logsBefore).some((log) => log.msg === "sweeper re-enqueued deliveries whose job was missing")).toBe(true);
  });
});

describe("manual actions", () => {
  it("retryDelivery delivers a failed delivery again now, then a succeeded one, with the same webhook-id", async () => {
    const { scope } = await newTenant();
    let up = false;
    const endpoint = await endpointAt(scope, { respond: () => new Response(null, { status: up ? 200 : 500 }) });
    const { eventId, deliveryIds } = await send(scope);
    const id = deliveryIds[0]!;
    expect(await settled(id)).toMatchObject({ state: "failed", attempts: 3 });

    up = true;
    const retried = await retryDelivery(dg.deps, scope, id);
    expect(retried.state).toBe("pending");
    expect(await settled(id)).toMatchObject({ state: "succeeded", attempts: 4 });
    expect(receiver.receiptsOf(eventId, endpoint.path)).toHaveLength(4);

    await retryDelivery(dg.deps, scope, id);
    await waitUntil(async () => (await deliveryRow(id)).attempts === 5, { what: "a fifth attempt" });
    expect(await settled(id)).toMatchObject({ state: "succeeded", attempts: 5 });
    expect(receiver.receiptsOf(eventId, endpoint.path).map((r) => r.status)).toEqual([500, 500, 500, 200, 200]);

    const other = await newTenant();
    await expect(retryDelivery(dg.deps, other.scope, id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(retryDelivery(dg.deps, { ...scope, environment: "live" }, id)).rejects.toBeInstanceOf(NotFoundError);
    await expect(retryDelivery(dg.deps, scope, "dlv_nope")).rejects.toBeInstanceOf(NotFoundError);
  });

  it("retryDelivery of a delivery waiting for its next automatic attempt delivers now", async () => {
    const { scope } = await newTenant();
    let up = false;
    const endpoint = await endpointAt(scope, { respond: () => new Response(null, { status: up ? 200 : 500 }) });
    const recorded = await dg.record({ tenantId: scope.tenantId });
    const id = recorded.deliveryIds[0]!;
    // The first attempt fails; its retry is due in 200 ms ± 20 %, pushed back here to an hour.
    expect((await deliverOnce(dg.deps, id, { attempt: 1 })).outcome).toBe("retrying");
    await dg.deps.db
      .updateTable("deliveries")
      .set({ next_attempt_at: new Date(dg.deps.now().getTime() + 3600_000) })
      .where("id", "=", id)
      .execute();
    up = true;
    await retryDelivery(dg.deps, scope, id);
    expect(await settled(id)).toMatchObject({ state: "succeeded", attempts: 2 });
    // The automatic attempt 2 that was queued (5 s ± 20 %) finds attempt 2 made and does nothing.
    expect(await dg.deps.queue.has(WEBHOOKS_QUEUE, deliveryJobId(id, 2))).toBe(true);
    await time.advance(6_000);
    await waitUntil(async () => !(await dg.deps.queue.has(WEBHOOKS_QUEUE, deliveryJobId(id, 2))), { what: "the automatic attempt 2 to have run" });
    expect(receiver.receiptsOf(recorded.eventId, endpoint.path).map((r) => r.status)).toEqual([500, 200]);
  });

  it("replayEndpoint re-delivers the subscribed events of a window, reusing the deliveries it already has", async () => {
    const { scope } = await newTenant();
    const now = dg.deps.now().getTime();
    const inWindow = [
      await dg.record({ tenantId: scope.tenantId, type: "payment.completed", at: new Date(now - 3 * DAY) }),
      await dg.record({ tenantId: scope.tenantId, type: "payment.failed", at: new Date(now - 2 * DAY) }),
    ];
    await dg.record({ tenantId: scope.tenantId, type: "payment.refunded", at: new Date(now - DAY) }); // not subscribed
    await dg.record({ tenantId: scope.tenantId, type: "payment.completed", at: new Date(now - 20 * DAY) }); // outside
    const endpoint = await endpointAt(scope, { events: ["payment.completed", "payment.failed"] });

    const first = await replayEndpoint(dg.deps, scope, endpoint.id, { since: new Date(now - 4 * DAY) });
    expect(first).toMatchObject({ endpointId: endpoint.id, replayed: 2 });
    const ids = inWindow.map((e) => e.eventId).sort();
    await waitUntil(() => receiver.receipts.filter((r) => r.path === endpoint.path).length === 2, { what: "two replayed events" });
    expect(
      receiver.receipts
        .filter((r) => r.path === endpoint.path)
        .map((r) => r.headers["webhook-id"])
        .sort(),
    ).toEqual(ids);
    for (const eventId of ids) await waitUntil(async () => (await deliveryTo(eventId, endpoint.id)).state === "succeeded", { what: "replay succeeded" });

    const again = await replayEndpoint(dg.deps, scope, endpoint.id, { since: new Date(now - 4 * DAY).toISOString(), until: new Date(now).toISOString() });
    expect(again.replayed).toBe(2);
    await waitUntil(() => receiver.receipts.filter((r) => r.path === endpoint.path).length === 4, { what: "two more" });
    for (const eventId of ids) await waitUntil(async () => (await deliveryTo(eventId, endpoint.id)).attempts === 2, { what: "second attempt recorded" });
    const log = await listDeliveries(dg.deps, scope, { endpointId: endpoint.id, limit: 10 });
    expect(log.data).toHaveLength(2);
    expect(log.data.map((d) => d.attempts.length)).toEqual([2, 2]);

    await expect(replayEndpoint(dg.deps, scope, endpoint.id, { since: new Date(now - 15 * DAY) })).rejects.toBeInstanceOf(ValidationError);
    await expect(replayEndpoint(dg.deps, scope, endpoint.id, { since: new Date(now), until: new Date(now - DAY) })).rejects.toBeInstanceOf(ValidationError);
    await expect(replayEndpoint(dg.deps, (await newTenant()).scope, endpoint.id, { since: new Date(now - DAY) })).rejects.toBeInstanceOf(NotFoundError);
  });

  it("sendTestEvent sends webhook.test to that endpoint only, whatever its filters", async () => {
    const { scope } = await newTenant();
    const target = await endpointAt(scope, { events: ["payment.failed"] });
    const bystander = await endpointAt(scope);
    const { eventId, deliveryId } = await sendTestEvent(dg.deps, scope, target.id);
    expect((await settled(deliveryId)).state).toBe("succeeded");
    const [receipt] = receiver.receiptsOf(eventId, target.path);
    expect(verify(target.secret, receipt!)).toMatchObject({ id: eventId, type: "webhook.test", data: { endpointId: target.id } });
    await Bun.sleep(100);
    expect(receiver.receipts.filter((r) => r.path === bystander.path)).toHaveLength(0);
    await expect(sendTestEvent(dg.deps, (await newTenant()).scope, target.id)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("listDeliveries pages a payment's deliveries, its callback_url included, and stays within the tenant", async () => {
    const { scope } = await newTenant();
    const paymentId = `pay_${ulid()}`;
    await dg.deps.db
      .insertInto("payments")
      .values({
        id: paymentId,
        tenant_id: scope.tenantId,
        environment: "sandbox",
        provider: "providerA",
        kind: "direct_payment",
        provider_account: "service",
        amount: 500,
        currency: "XOF",
        description: "test",
      })
      .execute();
    await endpointAt(scope);
    const { deliveryIds } = await send(scope, { paymentId, directTargetUrl: `${receiver.url}/callback-${ulid()}` });
    expect(deliveryIds).toHaveLength(2);
    for (const id of deliveryIds) await settled(id);
    const first = await listDeliveries(dg.deps, scope, { paymentId, limit: 1 });
    expect(first.data).toHaveLength(1);
    expect(first.nextCursor).not.toBeNull();
    const second = await listDeliveries(dg.deps, scope, { paymentId, limit: 1, cursor: first.nextCursor! });
    expect(second.nextCursor).toBeNull();
    expect([...first.data, ...second.data].map((d) => d.id).sort()).toEqual([...deliveryIds].sort());
    expect([...first.data, ...second.data].some((d) => d.endpointId === null && d.targetUrl !== null)).toBe(true);
    const other = (await newTenant()).scope;
    await expect(listDeliveries(dg.deps, other, { paymentId, limit: 10 })).rejects.toBeInstanceOf(NotFoundError);
    await expect(listDeliveries(dg.deps, other, { endpointId: "whe_nope", limit: 10 })).rejects.toBeInstanceOf(NotFoundError);
  });
});
