/**
 * Processes whose clocks disagree with the database's (issue 28): on a fleet each API node and worker has
 * its own clock, and one whose clock was stepped (the fault campaign's `clock-jump`, `TEST_CLOCK_OFFSET_FILE`)
 * must not delay another's work nor take it over. The gateways here run on the machine's clock moved by an
 * offset file, as the campaign's processes do, and share one database (and queue prefix): the times they
 * share — a delivery's due time and lease, an idempotency key's lock — are the database's
 * (`src/db/shared-clock.ts`).
 *
 * - an API node 184 s ahead records an event and dies before it enqueues its delivery: a worker's sweep
 *   sends it at once (it waited 184 s, dated by the node's clock);
 * - a worker 184 s behind sweeps a delivery another node recorded: it sends it at once;
 * - a worker 184 s ahead does not take the lease of a delivery another worker is sending: the endpoint
 *   gets one request;
 * - a node 184 s ahead does not take over the idempotency key of a request another node is running: 409.
 *
 * Embedded (the gateways share one PGlite database and the in-process driver) and on the real servers.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConflictError } from "../../../src/errors.ts";
import { beginIdempotentRequest, type IdempotencyScope } from "../../../src/services/idempotency/idempotency-keys.ts";
import { deliverOnce } from "../../../src/services/webhooks/deliver.ts";
import { createEndpoint } from "../../../src/services/webhooks/endpoints.ts";
import { startDeliveryGateway, type DeliveryGateway } from "../../support/delivery-gateway.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

const JUMP_MS = 184_000;
const SWEEP_EVERY_MS = 250;

let dir: string;
let receiver: WebhookReceiver;
const gateways: DeliveryGateway[] = [];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "passerelle-clock-skew-"));
  receiver = await startReceiver({ syntheticEvents: true });
});

afterEach(async () => {
  // The gateways that share another's database close first.
  for (const dg of gateways.splice(0).reverse()) await dg.close();
});

afterAll(async () => {
  await receiver.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** An offset file saying `offsetMs`, as the campaign's `clock-jump` writes it. */
function clockFile(name: string, offsetMs: number): string {
  const file = join(dir, name);
  writeFileSync(file, String(offsetMs));
  return file;
}

/** A gateway on the machine's clock, workers on (sweeping every 250 ms) or off. */
async function gateway(options: { workers: boolean; offsetMs?: number; share?: DeliveryGateway; name: string }): Promise<DeliveryGateway> {
  const env: Record<string, string> = options.offsetMs === undefined ? {} : { TEST_CLOCK_OFFSET_FILE: clockFile(options.name, options.offsetMs) };
  const dg = await startDeliveryGateway({
    env,
    workers: { sweepEveryMs: SWEEP_EVERY_MS },
    start: options.workers,
    ...(options.share ? { database: options.share.database, prefix: options.share.prefix } : {}),
  });
  gateways.push(dg);
  return dg;
}

async function endpointFor(dg: DeliveryGateway, path: string): Promise<{ tenantId: string }> {
  const { tenantId } = await dg.createTenant();
  await createEndpoint(dg.deps, { tenantId, environment: "sandbox", url: `${receiver.url}${path}` });
  return { tenantId };
}

async function deliveryRow(dg: DeliveryGateway, id: string) {
  return dg.deps.db.selectFrom("deliveries").selectAll().where("id", "=", id).executeTakeFirstOrThrow();
}

describe("a process whose clock jumped", () => {
  it("an API node 184 s ahead records an event and dies before enqueueing it: a worker's sweep sends it at once", async () => {
    const worker = await gateway({ name: "worker", workers: true });
    const api = await gateway({ name: "api-ahead", workers: false, offsetMs: JUMP_MS, share: worker });
    expect(api.deps.now().getTime() - Date.now()).toBeGreaterThan(JUMP_MS - 10_000);
    const { tenantId } = await endpointFor(api, "/ahead-writer");

    // Recorded on the node's clock; its job never enqueued (the node died after the commit): the sweep finds it.
    const { eventId, deliveryIds } = await api.record({ tenantId });
    await waitUntil(() => receiver.receiptsOf(eventId, "/ahead-writer").length > 0, {
      what: "the worker's sweep to send the delivery an API node 184 s ahead recorded",
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    await waitUntil(async () => (await deliveryRow(worker, deliveryIds[0]!)).state === "succeeded", { what: "the delivery recorded sent" });
    expect(receiver.receiptsOf(eventId, "/ahead-writer").map((r) => r.status)).toEqual([200]);
    expect(await deliveryRow(worker, deliveryIds[0]!)).toMatchObject({ state: "succeeded", attempts: 1 });
  }, 40_000);

  it("a worker 184 s behind sweeps a delivery another node recorded and sends it at once", async () => {
    const api = await gateway({ name: "api", workers: false });
    const worker = await gateway({ name: "worker-behind", workers: true, offsetMs: -JUMP_MS, share: api });
    expect(Date.now() - worker.deps.now().getTime()).toBeGreaterThan(JUMP_MS - 10_000);
    const { tenantId } = await endpointFor(api, "/behind-sweeper");

    const { eventId, deliveryIds } = await api.record({ tenantId });
    await waitUntil(() => receiver.receiptsOf(eventId, "/behind-sweeper").length > 0, {
      what: "a worker 184 s behind to send a delivery recorded on time",
      timeoutMs: 20_000,
      intervalMs: 50,
    });
    await waitUntil(async () => (await deliveryRow(api, deliveryIds[0]!)).state === "succeeded", { what: "the delivery recorded sent" });
    expect(receiver.receiptsOf(eventId, "/behind-sweeper").map((r) => r.status)).toEqual([200]);
  }, 40_000);

  it("a worker 184 s ahead does not take the lease of a delivery another worker is sending: the endpoint gets one request", async () => {
    const sender = await gateway({ name: "sender", workers: false });
    const ahead = await gateway({ name: "worker-ahead", workers: false, offsetMs: JUMP_MS, share: sender });
    const { tenantId } = await endpointFor(sender, "/lease");
    const { eventId, deliveryIds } = await sender.record({ tenantId });
    const id = deliveryIds[0]!;

    // The first request is held by the endpoint until the other worker has tried; any other is answered at once.
    let release!: () => void;
    const held = new Promise<Response>((resolve) => {
      release = () => resolve(new Response("ok"));
    });
    receiver.respondWith((receipt, index) => (receipt.path === "/lease" && index === 0 ? held : new Response("ok")));
    try {
      const first = deliverOnce(sender.deps, id);
      await waitUntil(() => receiver.receiptsOf(eventId, "/lease").length === 1, { what: "the first worker's request" });

      // The worker whose clock is 184 s ahead sees the lease (31 s on the database's clock) as live.
      expect(await deliverOnce(ahead.deps, id)).toEqual({ outcome: "skipped" });
      release();
      expect(await first).toMatchObject({ outcome: "succeeded", attempt: 1 });
    } finally {
      release();
      receiver.respondWith(() => new Response("ok"));
    }
    expect(receiver.receiptsOf(eventId, "/lease").map((r) => r.status)).toEqual([200]);
    expect(await deliveryRow(sender, id)).toMatchObject({ state: "succeeded", attempts: 1, locked_until: null });
  }, 40_000);

  it("a node 184 s ahead does not take over the idempotency key of a request another node is running: 409", async () => {
    const node = await gateway({ name: "node", workers: false });
    const ahead = await gateway({ name: "node-ahead", workers: false, offsetMs: JUMP_MS, share: node });
    const { tenantId } = await node.createTenant();
    const scope: IdempotencyScope = { tenantId, environment: "sandbox", method: "POST", path: "/payments" };
    const request = { amount: 500, currency: "XOF" };

    const first = await beginIdempotentRequest(node.deps, { scope, key: "order-42", request });
    expect(first.outcome).toBe("proceed");
    // Its 60-s lock is live on the database's clock, whatever the other node's clock says.
    const retry = beginIdempotentRequest(ahead.deps, { scope, key: "order-42", request });
    await expect(retry).rejects.toBeInstanceOf(ConflictError);
    await expect(retry).rejects.toMatchObject({ status: 409, code: "idempotency_in_flight" });
  }, 40_000);
});
