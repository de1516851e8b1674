import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { Webhook } from "standardwebhooks";
import { recordEvent } from "../../../src/services/events/record-event.ts";
import { scheduleDeliveries } from "../../../src/services/webhooks/schedule-deliveries.ts";
import { expectIsolated } from "../../support/isolation.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

let tg: TestGateway;
let receiver: WebhookReceiver;
let tenantA: string;
let tenantB: string;
let tokenA: string;

const send = (method: string, path: string, token: string, body?: unknown) =>
  tg.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

interface DeliveryPage {
  data: {
    id: string;
    eventId: string;
    eventType: string;
    state: string;
    attempts: { status: number | null; responseBody: string | null }[];
    targetUrl: string | null;
  }[];
  nextCursor: string | null;
}

/**
 * Waits until the delivery log of `endpointId` shows `deliveryId` succeeded after `attempts` attempts: its
 * result committed and its lease released (the receiver getting the request comes before both).
 */
const settled = (endpointId: string, deliveryId: string, attempts: number) =>
  waitUntil(
    async () => {
      const page = (await (await send("GET", `/webhooks/${endpointId}/deliveries`, tokenA)).json()) as DeliveryPage;
      const delivery = page.data.find((d) => d.id === deliveryId);
      return delivery?.state === "succeeded" && delivery.attempts.length === attempts ? delivery : undefined;
    },
    { what: `delivery ${deliveryId} succeeded after ${attempts} attempt(s)` },
  );

beforeAll(async () => {
  tg = await startTestGateway({ WEBHOOK_RETRY_SCHEDULE: "100ms,100ms" });
  await tg.gateway.start({ http: false, workers: true });
  // Some events here are recorded by the test itself, with made-up data.
  receiver = await startReceiver({ syntheticEvents: true });
  tenantA = await tg.insertTenant({ liveEnabled: true });
  tenantB = await tg.insertTenant({ liveEnabled: true });
  tokenA = await tg.tenantToken(tenantA);
  // insertTenant makes a bare row; the tenants API would also have made the callback signing secret.
  await send("POST", `/tenants/${tenantA}/callback-secret/rotate`, tokenA);
}, 60_000);
afterAll(async () => {
  await tg.close();
  await receiver.stop();
}, 30_000);

describe("webhook delivery routes", () => {
  it("POST /webhooks/{id}/test delivers a signed webhook.test, logged under GET /webhooks/{id}/deliveries", async () => {
    const created = (await (await send("POST", "/webhooks", tokenA, { url: `${receiver.url}/test-event` })).json()) as { id: string; secret: string };
    const test = await send("POST", `/webhooks/${created.id}/test`, tokenA);
    expect(test.status).toBe(200);
    const { eventId } = (await test.json()) as { eventId: string };
    const receipt = await waitUntil(() => receiver.receipts.find((r) => r.headers["webhook-id"] === eventId), { what: "the test event" });
    const verified = new Webhook(created.secret).verify(receipt.body, receipt.headers) as { type: string; tenantId: string };
    expect(verified).toMatchObject({ type: "webhook.test", tenantId: tenantA });

    const log = await waitUntil(
      async () => {
        const page = (await (await send("GET", `/webhooks/${created.id}/deliveries`, tokenA)).json()) as DeliveryPage;
        return page.data[0]?.state === "succeeded" ? page : undefined;
      },
      { what: "the delivery log" },
    );
    expect(log.data[0]).toMatchObject({ eventId, eventType: "webhook.test", state: "succeeded" });
    expect(log.data[0]!.attempts[0]!.status).toBe(200);
  });

  it("retries a delivery by hand and replays a window of events", async () => {
    const created = (await (await send("POST", "/webhooks", tokenA, { url: `${receiver.url}/replay`, events: ["payment.completed"] })).json()) as {
      id: string;
    };
    const db = tg.gateway.deps.db;
    const first = await recordEvent(db, new Date(), {
      tenantId: tenantA,
      environment: "sandbox",
      type: "payment.completed",
      data: { n: 1 },
      onlyEndpointId: created.id,
    });
    await scheduleDeliveries(tg.gateway.deps, first.deliveryIds);
    const deliveryId = first.deliveryIds[0]!;
    const receipts = () => receiver.receipts.filter((r) => r.headers["webhook-id"] === first.eventId).length;
    // A retry or a replay leaves a delivery that is still in flight alone: wait until each attempt is recorded.
    await settled(created.id, deliveryId, 1);
    expect(receipts()).toBe(1);

    const retried = await send("POST", `/webhooks/deliveries/${deliveryId}/retry`, tokenA);
    expect(retried.status).toBe(200);
    await settled(created.id, deliveryId, 2);
    expect(receipts()).toBe(2);

    const replay = await send("POST", `/webhooks/${created.id}/replay`, tokenA, { since: new Date(Date.now() - 60_000).toISOString() });
    expect(replay.status).toBe(200);
    expect(((await replay.json()) as { replayed: number }).replayed).toBe(1);
    await settled(created.id, deliveryId, 3);
    expect(receipts()).toBe(3);

    const tooLong = await send("POST", `/webhooks/${created.id}/replay`, tokenA, { since: new Date(Date.now() - 15 * 86_400_000).toISOString() });
    expect(tooLong.status).toBe(400);
  });

  it("lists a payment's deliveries, including to its callback_url", async () => {
    const callbackSecret = ((await (await send("POST", `/tenants/${tenantA}/callback-secret/rotate`, tokenA)).json()) as { callbackSecret: string })
      .callbackSecret;
    const db = tg.gateway.deps.db;
    const paymentId = "pay_01JBBBBBBBBBBBBBBBBBBBBBBB";
    await db
      .insertInto("payments")
      .values({
        id: paymentId,
        tenant_id: tenantA,
        environment: "sandbox",
        provider: "providerA",
        kind: "direct_payment",
        provider_account: "service",
        amount: 500,
        currency: "XOF",
        description: "x",
      })
      .execute();
    const recorded = await recordEvent(db, new Date(), {
      tenantId: tenantA,
      environment: "sandbox",
      type: "payment.completed",
      data: { paymentId },
      paymentId,
      directTargetUrl: `${receiver.url}/callback`,
    });
    await scheduleDeliveries(tg.gateway.deps, recorded.deliveryIds);
    const page = await waitUntil(
      async () => {
        const body = (await (await send("GET", `/payments/${paymentId}/deliveries`, tokenA)).json()) as DeliveryPage;
        const callback = body.data.find((d) => d.targetUrl === `${receiver.url}/callback`);
        return callback?.state === "succeeded" ? body : undefined;
      },
      { what: "the callback delivery" },
    );
    expect(page.data.every((d) => d.eventId === recorded.eventId)).toBe(true);
    const callback = receiver.receipts.find((r) => r.path === "/callback" && r.headers["webhook-id"] === recorded.eventId)!;
    expect(new Webhook(callbackSecret).verify(callback.body, callback.headers)).toMatchObject({ type: "payment.completed" });
    expect((await send("GET", "/payments/pay_01JCCCCCCCCCCCCCCCCCCCCCCC/deliveries", tokenA)).status).toBe(404);

    await expectIsolated(tg, {
      owner: tenantA,
      other: tenantB,
      environment: "sandbox",
      requests: [{ path: `/payments/${paymentId}/deliveries` }, { method: "POST", path: `/webhooks/deliveries/${recorded.deliveryIds[0]}/retry` }],
    });
  }, 20_000);

  it("keeps every delivery route of an endpoint to its tenant and environment", async () => {
    const created = (await (await send("POST", "/webhooks", tokenA, { url: `${receiver.url}/isolated` })).json()) as { id: string };
    await expectIsolated(tg, {
      owner: tenantA,
      other: tenantB,
      environment: "sandbox",
      requests: [
        { path: `/webhooks/${created.id}/deliveries` },
        { method: "POST", path: `/webhooks/${created.id}/test` },
        { method: "POST", path: `/webhooks/${created.id}/replay`, body: { since: new Date(Date.now() - 60_000).toISOString() } },
      ],
    });
  });
});
