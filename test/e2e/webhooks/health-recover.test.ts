/**
 * An endpoint's health, its delivery log by state, and recovering only the failed deliveries (as in Svix's
 * portal), through the API, with the gateway's own delivery workers and a real receiver.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { expectIsolated } from "../../support/isolation.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

let tg: TestGateway;
let receiver: WebhookReceiver;
let tenant: string;
let other: string;
let token: string;
/** Paths whose requests the receiver refuses (500) for now. */
const refusing = new Set<string>();

const send = async (method: string, path: string, body?: unknown) => {
  const response = await tg.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
};

interface Health {
  status: string;
  successRate: number | null;
  recent: { succeeded: number; failed: number; pending: number };
  lastDeliveredAt: string | null;
  lastError: string | null;
  lastErrorAt: string | null;
  failingSince: string | null;
}

const healthOf = async (endpointId: string) => (await send("GET", `/webhooks/${endpointId}`)).body.health as Health;
const deliveriesOf = async (endpointId: string, query = "") => (await send("GET", `/webhooks/${endpointId}/deliveries?limit=100${query}`)).body.data as any[];

async function testEvents(endpointId: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const sent = await send("POST", `/webhooks/${endpointId}/test`);
    expect(sent.status).toBe(200);
    ids.push(sent.body.deliveryId);
  }
  return ids;
}

beforeAll(async () => {
  receiver = await startReceiver({
    respond: (receipt) => (refusing.has(receipt.path) ? new Response("down for maintenance", { status: 500 }) : new Response("ok")),
  });
  // Two attempts, 150 ms apart: a refused delivery fails for good within a second.
  tg = await startTestGateway({ WEBHOOK_RETRY_SCHEDULE: "150ms", WEBHOOK_TIMEOUT_MS: "2000" });
  await tg.gateway.start();
  tenant = await tg.insertTenant({ liveEnabled: true });
  other = await tg.insertTenant({ liveEnabled: true });
  token = await tg.tenantToken(tenant);
}, 60_000);
afterAll(async () => {
  await tg?.close();
  await receiver?.stop();
}, 30_000);

describe("an endpoint's health", () => {
  it("is idle when new, healthy once deliveries succeed, failing with the last error while they fail, disabled when switched off", async () => {
    const created = await send("POST", "/webhooks", { url: `${receiver.url}/health`, description: "health" });
    expect(created.status).toBe(200);
    const id = created.body.id as string;
    expect(created.body.health).toEqual({
      status: "idle",
      successRate: null,
      recent: { succeeded: 0, failed: 0, pending: 0 },
      lastDeliveredAt: null,
      lastError: null,
      lastErrorAt: null,
      failingSince: null,
    });

    await testEvents(id, 3);
    await waitUntil(async () => (await healthOf(id)).recent.succeeded === 3, { what: "three deliveries succeeding" });
    const healthy = await healthOf(id);
    expect(healthy).toMatchObject({ status: "healthy", successRate: 1, recent: { succeeded: 3, failed: 0, pending: 0 }, lastError: null, failingSince: null });
    expect(Date.parse(healthy.lastDeliveredAt!)).toBeGreaterThan(Date.parse(created.body.createdAt));

    refusing.add("/health");
    await testEvents(id, 1);
    await waitUntil(async () => (await healthOf(id)).recent.failed === 1, { what: "the refused delivery failing for good" });
    const failing = await healthOf(id);
    expect(failing).toMatchObject({ status: "failing", successRate: 0.75, recent: { succeeded: 3, failed: 1, pending: 0 } });
    expect(failing.lastError).toContain("500");
    expect(failing.failingSince).not.toBeNull();
    expect(Date.parse(failing.lastErrorAt!)).toBeGreaterThanOrEqual(Date.parse(failing.failingSince!));

    // The list shows the same health.
    const listed = (await send("GET", "/webhooks")).body.data.find((endpoint: { id: string }) => endpoint.id === id);
    expect(listed.health).toEqual(failing);

    const off = await send("PATCH", `/webhooks/${id}`, { enabled: false });
    expect(off.body.health).toMatchObject({ status: "disabled", recent: { succeeded: 3, failed: 1, pending: 0 } });
    refusing.delete("/health");
  });
});

describe("the delivery log by state, and recovering the failed deliveries", () => {
  it("lists one state only, re-delivers only what failed in the window, and leaves the successes alone", async () => {
    const created = await send("POST", "/webhooks", { url: `${receiver.url}/recover` });
    const id = created.body.id as string;
    const since = new Date(Date.now() - 1_000).toISOString();

    const delivered = await testEvents(id, 2);
    await waitUntil(async () => (await deliveriesOf(id, "&state=succeeded")).length === 2, { what: "two deliveries succeeding" });
    refusing.add("/recover");
    const refused = await testEvents(id, 3);
    await waitUntil(async () => (await deliveriesOf(id, "&state=failed")).length === 3, { what: "three deliveries failing for good" });

    expect((await deliveriesOf(id, "&state=failed")).map((d) => d.id).sort()).toEqual([...refused].sort());
    expect((await deliveriesOf(id, "&state=succeeded")).map((d) => d.id).sort()).toEqual([...delivered].sort());
    expect(await deliveriesOf(id, "&state=pending")).toEqual([]);
    const bad = await send("GET", `/webhooks/${id}/deliveries?state=lost`);
    expect(bad.status).toBe(400);
    expect(bad.body.message[0]).toStartWith("state must be one of the following values: pending, succeeded, failed");

    // The receiver is back; a window that ends before the failures recovers nothing.
    refusing.delete("/recover");
    const before = await send("POST", `/webhooks/${id}/recover`, { since: new Date(Date.now() - 3_600_000).toISOString(), until: since });
    expect(before).toMatchObject({ status: 200, body: { endpointId: id, recovered: 0 } });

    const requestsBefore = receiver.receipts.filter((receipt) => receipt.path === "/recover").length;
    const recovered = await send("POST", `/webhooks/${id}/recover`, { since });
    expect(recovered).toMatchObject({ status: 200, body: { endpointId: id, since, recovered: 3 } });
    await waitUntil(async () => (await deliveriesOf(id, "&state=succeeded")).length === 5, { what: "the recovered deliveries succeeding" });
    // Exactly one more request per failed delivery: nothing sent again to the two that had succeeded.
    const after = receiver.receipts.filter((receipt) => receipt.path === "/recover");
    expect(after.length - requestsBefore).toBe(3);
    const again = await deliveriesOf(id);
    for (const delivery of again.filter((d) => refused.includes(d.id)))
      expect(delivery.attempts.map((a: { status: number }) => a.status)).toEqual([500, 500, 200]);
    for (const delivery of again.filter((d) => delivered.includes(d.id))) expect(delivery.attempts).toHaveLength(1);
    expect((await healthOf(id)).status).toBe("healthy");

    // Nothing failed is left: a second call recovers nothing.
    expect((await send("POST", `/webhooks/${id}/recover`, { since })).body.recovered).toBe(0);
  });

  it("refuses a window over 14 days, an empty one, and a disabled endpoint", async () => {
    const created = await send("POST", "/webhooks", { url: `${receiver.url}/windows` });
    const id = created.body.id as string;
    const long = await send("POST", `/webhooks/${id}/recover`, { since: "2026-01-01T00:00:00Z", until: "2026-01-20T00:00:00Z" });
    expect(long).toMatchObject({ status: 400, body: { code: "validation_failed", message: ["since must be at most 14 days before until"] } });
    const empty = await send("POST", `/webhooks/${id}/recover`, { since: "2026-01-02T00:00:00Z", until: "2026-01-01T00:00:00Z" });
    expect(empty).toMatchObject({ status: 400, body: { message: ["until must be after since"] } });
    await send("PATCH", `/webhooks/${id}`, { enabled: false });
    const disabled = await send("POST", `/webhooks/${id}/recover`, { since: new Date(Date.now() - 60_000).toISOString() });
    expect(disabled).toMatchObject({ status: 409, body: { code: "conflict" } });
  });

  it("never shows or recovers another tenant's endpoint", async () => {
    const created = await send("POST", "/webhooks", { url: `${receiver.url}/mine` });
    const id = created.body.id as string;
    await expectIsolated(tg, {
      owner: tenant,
      other,
      environment: "sandbox",
      requests: [
        { path: `/webhooks/${id}` },
        { path: `/webhooks/${id}/deliveries?state=failed` },
        {
          method: "POST",
          path: `/webhooks/${id}/recover`,
          body: { since: new Date(Date.now() - 60_000).toISOString() },
          headers: { "idempotency-key": crypto.randomUUID() },
        },
      ],
      object: created.body,
      readBack: `/webhooks/${id}`,
    });
  });
});
