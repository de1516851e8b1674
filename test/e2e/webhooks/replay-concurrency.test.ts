/**
 * Concurrent replays of one endpoint (issue 13, point 9): eight `POST /webhooks/{id}/replay` at once, on
 * an endpoint whose deliveries the workers are sending meanwhile, never answer 500 (`deadlock detected`
 * on PostgreSQL); every event of the window ends with exactly one delivery at that endpoint.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { recordEvent } from "../../../src/services/events/record-event.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { waitUntil } from "../../support/wait.ts";
import { startReceiver, type WebhookReceiver } from "../../support/webhook-receiver.ts";

let tg: TestGateway;
let receiver: WebhookReceiver;
let tenant: string;
let token: string;
/** Enough rows that a replay's statement and the workers' lease statements overlap (before the fix, on
 * PostgreSQL, one round in ten or so deadlocked). */
const EVENTS = 300;
const ROUNDS = process.env.DATABASE_URL ? 10 : 3; // PGlite has one connection: nothing can deadlock there

const send = (method: string, path: string, body?: unknown) =>
  tg.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

beforeAll(async () => {
  tg = await startTestGateway({ WEBHOOK_RETRY_SCHEDULE: "100ms,100ms" });
  await tg.gateway.start({ http: false, workers: true });
  receiver = await startReceiver({ syntheticEvents: true });
  tenant = await tg.insertTenant();
  token = await tg.tenantToken(tenant);
}, 60_000);
afterAll(async () => {
  await tg.close();
  await receiver.stop();
}, 30_000);

describe("POST /webhooks/{id}/replay, concurrently", () => {
  it("answers every one of eight simultaneous replays of one endpoint, round after round, with one delivery per event", async () => {
    const created = await send("POST", "/webhooks", { url: `${receiver.url}/concurrent`, events: ["payment.completed", "payment.failed"] });
    expect(created.status).toBe(200);
    const endpointId = ((await created.json()) as { id: string }).id;
    const db = tg.gateway.deps.db;
    const since = new Date(Date.now() - 60_000).toISOString();
    // Events that already have a delivery at the endpoint (re-opened by a replay) and events that have none
    // (recorded for another endpoint's eyes only: a replay inserts their delivery).
    const other = ((await (await send("POST", "/webhooks", { url: `${receiver.url}/other`, events: ["payment.failed"] })).json()) as { id: string }).id;
    const events: string[] = [];
    for (let i = 0; i < EVENTS; i++) {
      const recorded = await recordEvent(db, new Date(), {
        tenantId: tenant,
        environment: "sandbox",
        type: i % 2 === 0 ? "payment.completed" : "payment.failed",
        data: { n: i },
        onlyEndpointId: i % 2 === 0 ? endpointId : other,
      });
      events.push(recorded.eventId);
    }

    for (let round = 0; round < ROUNDS; round++) {
      const answers = await Promise.all(Array.from({ length: 8 }, () => send("POST", `/webhooks/${endpointId}/replay`, { since })));
      const statuses = await Promise.all(answers.map(async (r) => `${r.status}${r.status === 200 ? "" : ` ${await r.text()}`}`));
      const unexpected = tg.logs.filter((line) => line.msg === "unexpected error").map((line) => (line.err as { message?: string } | undefined)?.message);
      expect({ round, statuses, unexpected }).toEqual({ round, statuses: Array(8).fill("200"), unexpected: [] });
    }

    const rows = await db.selectFrom("deliveries").select(["event_id"]).where("endpoint_id", "=", endpointId).execute();
    expect(rows.map((r) => r.event_id).sort()).toEqual([...events].sort());
    // Everything replayed is sent: the last round leaves no delivery pending for good.
    await waitUntil(
      async () => {
        const pending = await db.selectFrom("deliveries").select("id").where("endpoint_id", "=", endpointId).where("state", "!=", "succeeded").execute();
        return pending.length === 0 ? true : undefined;
      },
      // Generous: PGlite sends these 300 one statement at a time, and test files share the machine.
      { what: "every replayed delivery sent", timeoutMs: 60_000 },
    );
    // Nor did a worker lose a lease statement to a deadlock with a replay (PostgreSQL may pick either side).
    expect(tg.logs.filter((line) => JSON.stringify(line).includes("deadlock"))).toEqual([]);
  }, 120_000);
});
