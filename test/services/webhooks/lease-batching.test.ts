/**
 * Leases asked for in the same turn of the event loop are taken by one statement (issue 8): each
 * delivery still goes out at most once per attempt, and a job for the wrong attempt still does nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { Webhook } from "standardwebhooks";
import { deliverOnce } from "../../../src/services/webhooks/deliver.ts";
import { createEndpoint } from "../../../src/services/webhooks/endpoints.ts";
import { startDeliveryGateway, type DeliveryGateway } from "../../support/delivery-gateway.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

let dg: DeliveryGateway;
let receiver: WebhookReceiver;

beforeAll(async () => {
  receiver = await startReceiver({ syntheticEvents: true });
  // Workers off: only the calls below deliver.
  dg = await startDeliveryGateway({ start: false });
}, 60_000);
afterAll(async () => {
  await dg?.close();
  await receiver?.stop();
}, 30_000);

async function tenantWithEndpoints(n: number) {
  const { tenantId, callbackSecret } = await dg.createTenant();
  const endpoints = [];
  for (let i = 0; i < n; i++)
    endpoints.push(await createEndpoint(dg.deps, { tenantId, environment: "sandbox", url: `${receiver.url}/batch-${tenantId}-${i}` }));
  return { tenantId, callbackSecret, endpoints };
}

describe("taking leases together", () => {
  it("delivers every delivery of a burst once, each signed with its own endpoint's secret", async () => {
    const { tenantId, endpoints } = await tenantWithEndpoints(3);
    const events = await Promise.all(Array.from({ length: 4 }, () => dg.record({ tenantId })));
    const ids = events.flatMap((e) => e.deliveryIds);
    expect(ids).toHaveLength(12);
    const results = await Promise.all(ids.map((id) => deliverOnce(dg.deps, id)));
    expect(results.map((r) => r.outcome)).toEqual(Array(12).fill("succeeded"));
    for (const [i, endpoint] of endpoints.entries()) {
      for (const event of events) {
        const receipts = receiver.receiptsOf(event.eventId, `/batch-${tenantId}-${i}`);
        expect(receipts).toHaveLength(1);
        expect(new Webhook(endpoint.secret).verify(receipts[0]!.body, receipts[0]!.headers)).toMatchObject({ id: event.eventId });
      }
    }
  });

  it("gives a delivery asked for several times in one turn to one caller only", async () => {
    const { tenantId } = await tenantWithEndpoints(1);
    const { eventId, deliveryIds } = await dg.record({ tenantId });
    const [id] = deliveryIds;
    const results = await Promise.all([
      deliverOnce(dg.deps, id!),
      deliverOnce(dg.deps, id!, { attempt: 1 }),
      deliverOnce(dg.deps, id!),
      deliverOnce(dg.deps, id!, { attempt: 1 }),
    ]);
    expect(results.filter((r) => r.outcome === "succeeded")).toHaveLength(1);
    expect(results.filter((r) => r.outcome === "skipped")).toHaveLength(3);
    expect(receiver.receiptsOf(eventId)).toHaveLength(1);
    const attempts = await dg.deps.db.selectFrom("delivery_attempts").selectAll().where("delivery_id", "=", id!).execute();
    expect(attempts).toHaveLength(1);
  });

  it("skips a job for an attempt already made, beside one that is due, in the same turn", async () => {
    const { tenantId } = await tenantWithEndpoints(2);
    const { eventId, deliveryIds } = await dg.record({ tenantId });
    const [first, second] = deliveryIds;
    const [stale, due] = await Promise.all([deliverOnce(dg.deps, first!, { attempt: 2 }), deliverOnce(dg.deps, second!, { attempt: 1 })]);
    expect(stale.outcome).toBe("skipped");
    expect(due.outcome).toBe("succeeded");
    expect(receiver.receiptsOf(eventId)).toHaveLength(1);
    const row = await dg.deps.db.selectFrom("deliveries").selectAll().where("id", "=", first!).executeTakeFirstOrThrow();
    expect(row).toMatchObject({ state: "pending", attempts: 0, locked_until: null });
  });

  it("records a burst of successes together: attempts logged, deliveries finished, a failing streak ended", async () => {
    const { tenantId, endpoints } = await tenantWithEndpoints(2);
    const since = new Date(Date.now() - 3_600_000);
    await dg.deps.db.updateTable("webhook_endpoints").set({ failing_since: since }).where("id", "=", endpoints[0]!.id).execute();
    const events = await Promise.all(Array.from({ length: 3 }, () => dg.record({ tenantId })));
    const ids = events.flatMap((e) => e.deliveryIds);
    expect((await Promise.all(ids.map((id) => deliverOnce(dg.deps, id)))).map((r) => r.outcome)).toEqual(Array(6).fill("succeeded"));
    const rows = await dg.deps.db.selectFrom("deliveries").selectAll().where("id", "in", ids).execute();
    for (const row of rows)
      expect(row).toMatchObject({ state: "succeeded", attempts: 1, locked_until: null, last_status: 200, last_error: null, delivered_at: expect.any(Date) });
    const attempts = await dg.deps.db.selectFrom("delivery_attempts").selectAll().where("delivery_id", "in", ids).execute();
    expect(attempts).toHaveLength(6);
    for (const attempt of attempts)
      expect(attempt).toMatchObject({ attempt: 1, status: 200, error: null, response_body: "ok", url: expect.stringContaining("/batch-") });
    const endpoint = await dg.deps.db.selectFrom("webhook_endpoints").selectAll().where("id", "=", endpoints[0]!.id).executeTakeFirstOrThrow();
    expect(endpoint.failing_since).toBeNull();
  });

  it("skips an unknown or finished delivery", async () => {
    const { tenantId } = await tenantWithEndpoints(1);
    const { deliveryIds } = await dg.record({ tenantId });
    expect((await deliverOnce(dg.deps, deliveryIds[0]!)).outcome).toBe("succeeded");
    const results = await Promise.all([deliverOnce(dg.deps, deliveryIds[0]!), deliverOnce(dg.deps, "dlv_nope")]);
    expect(results.map((r) => r.outcome)).toEqual(["skipped", "skipped"]);
  });
});
