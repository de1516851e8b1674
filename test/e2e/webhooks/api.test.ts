import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { recordEvent } from "../../../src/services/events/record-event.ts";
import { expectIsolated } from "../../support/isolation.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";

let tg: TestGateway;
let tenantA: string;
let tenantB: string;
let tokenA: string;

const send = (method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) =>
  tg.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

interface Endpoint {
  id: string;
  url: string;
  events: string[] | null;
  enabled: boolean;
  environment: string;
  secret?: string;
  description: string | null;
}

async function createEndpoint(token: string, body: Record<string, unknown>): Promise<Endpoint> {
  const response = await send("POST", "/webhooks", token, body);
  expect(response.status).toBe(200);
  return (await response.json()) as Endpoint;
}

beforeAll(async () => {
  tg = await startTestGateway();
  tenantA = await tg.insertTenant({ liveEnabled: true });
  tenantB = await tg.insertTenant({ liveEnabled: true });
  tokenA = await tg.tenantToken(tenantA);
}, 60_000);
afterAll(() => tg.close(), 30_000);

describe("/webhooks endpoints", () => {
  it("creates an endpoint in the token's environment and shows its whsec_ secret once", async () => {
    const created = await createEndpoint(tokenA, { url: "http://127.0.0.1:9/hooks", events: ["payment.completed", "payment.failed"], description: "orders" });
    expect(created).toMatchObject({
      url: "http://127.0.0.1:9/hooks",
      events: ["payment.completed", "payment.failed"],
      enabled: true,
      environment: "sandbox",
      description: "orders",
    });
    expect(created.id).toMatch(/^whe_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(Buffer.from(created.secret!.slice("whsec_".length), "base64").length).toBe(32);
    const read = await (await send("GET", `/webhooks/${created.id}`, tokenA)).json();
    expect(read).not.toHaveProperty("secret");
    const list = (await (await send("GET", "/webhooks", tokenA)).json()) as { data: Endpoint[] };
    expect(list.data.map((e) => e.id)).toContain(created.id);
    expect(JSON.stringify(list)).not.toContain(created.secret!.slice(6));
  });

  it("subscribes to every type by default and refuses unknown types with the enum message", async () => {
    const all = await createEndpoint(tokenA, { url: "http://127.0.0.1:9/all" });
    expect(all.events).toBeNull();
    const bad = await send("POST", "/webhooks", tokenA, { url: "http://127.0.0.1:9/x", events: ["payment.exploded"] });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { message: string[] }).message[0]).toStartWith("events.0 must be one of the following values: payment.completed, ");
  });

  it("changes url, events, description and enabled, and deletes", async () => {
    const endpoint = await createEndpoint(tokenA, { url: "http://127.0.0.1:9/change" });
    const patched = await send("PATCH", `/webhooks/${endpoint.id}`, tokenA, {
      url: "http://127.0.0.1:9/changed",
      events: ["webhook.test"],
      enabled: false,
      description: "paused",
    });
    expect(await patched.json()).toMatchObject({ url: "http://127.0.0.1:9/changed", events: ["webhook.test"], enabled: false, description: "paused" });
    expect((await send("DELETE", `/webhooks/${endpoint.id}`, tokenA)).status).toBe(200);
    expect((await send("GET", `/webhooks/${endpoint.id}`, tokenA)).status).toBe(404);
  });

  it("rotates the secret, showing the new one once", async () => {
    const endpoint = await createEndpoint(tokenA, { url: "http://127.0.0.1:9/rotate" });
    const rotated = (await (await send("POST", `/webhooks/${endpoint.id}/rotate-secret`, tokenA)).json()) as { secret: string; previousExpiresAt: string };
    expect(rotated.secret).toStartWith("whsec_");
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect(new Date(rotated.previousExpiresAt).getTime() - Date.now()).toBeGreaterThan(23 * 3600_000);
  });

  it("keeps endpoints apart by environment", async () => {
    const live = await createEndpoint(await tg.tenantToken(tenantA, "live"), { url: "https://hooks.example.com/live" });
    expect(live.environment).toBe("live");
    expect((await send("GET", `/webhooks/${live.id}`, tokenA)).status).toBe(404);
    const sandboxList = (await (await send("GET", "/webhooks", tokenA)).json()) as { data: Endpoint[] };
    expect(sandboxList.data.map((e) => e.id)).not.toContain(live.id);
  });

  it("never lets another tenant or environment see or touch an endpoint", async () => {
    const endpoint = await createEndpoint(tokenA, { url: "http://127.0.0.1:9/isolated", description: "isolated-endpoint" });
    const { secret: _secret, ...asA } = endpoint;
    await expectIsolated(tg, {
      owner: tenantA,
      other: tenantB,
      environment: "sandbox",
      requests: [
        { path: `/webhooks/${endpoint.id}` },
        { method: "PATCH", path: `/webhooks/${endpoint.id}`, body: { enabled: false } },
        { method: "POST", path: `/webhooks/${endpoint.id}/rotate-secret` },
        { method: "DELETE", path: `/webhooks/${endpoint.id}` },
      ],
      object: asA,
      readBack: `/webhooks/${endpoint.id}`,
    });
  });

  it("refuses private and insecure targets where the rules apply", async () => {
    const strict = await startTestGateway({ ALLOW_PRIVATE_TARGETS: "false" });
    try {
      const tenant = await strict.insertTenant({ liveEnabled: true });
      const post = async (token: string, url: string) => {
        const response = await strict.request("/webhooks", {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ url }),
        });
        return { status: response.status, body: (await response.json()) as { message: string[] } };
      };
      const sandbox = await strict.tenantToken(tenant);
      for (const url of [
        "http://127.0.0.1/hook",
        "http://10.0.0.8/hook",
        "http://169.254.169.254/latest/meta-data",
        "http://[::1]/hook",
        "http://localhost:8080/",
      ]) {
        const refused = await post(sandbox, url);
        expect(`${url} ${refused.status}`).toBe(`${url} 400`);
        expect(refused.body.message.length).toBe(1);
        expect(refused.body.message[0]).toStartWith("url ");
      }
      const live = await strict.tenantToken(tenant, "live");
      const http = await post(live, "http://hooks.example.com/x");
      expect(http.status).toBe(400);
      expect(http.body.message[0]).toContain("https");
      expect((await post(live, "https://hooks.example.com/x")).status).toBe(200);
      expect((await post(sandbox, "ftp://hooks.example.com/x")).status).toBe(400);
    } finally {
      await strict.close();
    }
  }, 60_000);

  it("holds a tenant to 20 endpoints", async () => {
    const tenant = await tg.insertTenant();
    const token = await tg.tenantToken(tenant);
    for (let i = 0; i < 20; i++) await createEndpoint(token, { url: `http://127.0.0.1:9/n${i}` });
    const over = await send("POST", "/webhooks", token, { url: "http://127.0.0.1:9/n20" });
    expect(over.status).toBe(409);
    expect(((await over.json()) as { message: string }).message).toContain("at most 20");
  }, 30_000);
});

describe("GET /events", () => {
  it("lists the tenant's events of its environment newest first, by type, with paging, for 30 days", async () => {
    const tenant = await tg.insertTenant();
    const token = await tg.tenantToken(tenant);
    const db = tg.gateway.deps.db;
    const ids: string[] = [];
    for (const type of ["payment.completed", "payment.failed", "payment.completed"] as const) {
      ids.push((await recordEvent(db, new Date(), { tenantId: tenant, environment: "sandbox", type, data: { paymentId: "pay_x", amount: 500 } })).eventId);
    }
    await recordEvent(db, new Date(), { tenantId: tenant, environment: "live", type: "payment.completed", data: {} });
    await recordEvent(db, new Date(Date.now() - 31 * 86_400_000), { tenantId: tenant, environment: "sandbox", type: "payment.completed", data: {} });

    const page1 = (await (await send("GET", "/events?limit=2", token)).json()) as {
      data: { id: string; type: string; tenantId: string; environment: string; data: unknown }[];
      nextCursor: string;
    };
    expect(page1.data.map((e) => e.id)).toEqual([ids[2]!, ids[1]!]);
    expect(page1.data[0]).toMatchObject({ type: "payment.completed", tenantId: tenant, environment: "sandbox", data: { paymentId: "pay_x", amount: 500 } });
    const page2 = (await (await send("GET", `/events?limit=2&cursor=${page1.nextCursor}`, token)).json()) as {
      data: { id: string }[];
      nextCursor: string | null;
    };
    expect(page2.data.map((e) => e.id)).toEqual([ids[0]!]);
    expect(page2.nextCursor).toBeNull();
    const failed = (await (await send("GET", "/events?type=payment.failed", token)).json()) as { data: { id: string }[] };
    expect(failed.data.map((e) => e.id)).toEqual([ids[1]!]);
    const one = await send("GET", `/events/${ids[0]}`, token);
    expect(((await one.json()) as { id: string }).id).toBe(ids[0]!);
    expect((await send("GET", "/events/evt_01JAAAAAAAAAAAAAAAAAAAAAAA", token)).status).toBe(404);
  });

  it("lists the events about one payment with paymentId, and none of another tenant's", async () => {
    const tenant = await tg.insertTenant({ liveEnabled: true });
    const db = tg.gateway.deps.db;
    const about = (paymentId: string, type: "payment.completed" | "refund.succeeded", environment: "sandbox" | "live" = "sandbox") =>
      recordEvent(db, new Date(), { tenantId: tenant, environment, type, data: { paymentId }, paymentId }).then((e) => e.eventId);
    const completed = await about("pay_timeline_1", "payment.completed");
    await about("pay_timeline_2", "payment.completed");
    const refunded = await about("pay_timeline_1", "refund.succeeded");
    await about("pay_timeline_1", "payment.completed", "live");
    const list = async (query: string, token: string) =>
      ((await (await send("GET", `/events?${query}`, token)).json()) as { data: { id: string }[] }).data.map((e) => e.id);
    const token = await tg.tenantToken(tenant);
    expect(await list("paymentId=pay_timeline_1", token)).toEqual([refunded, completed]);
    expect(await list("paymentId=pay_timeline_1&type=payment.completed", token)).toEqual([completed]);
    expect(await list("paymentId=pay_timeline_1&limit=1", token)).toEqual([refunded]);
    expect(await list("paymentId=pay_nothing", token)).toEqual([]);
    expect(await list("paymentId=pay_timeline_1", await tg.tenantToken(tenantB))).toEqual([]);
  });

  it("never shows another tenant's or environment's event", async () => {
    const { eventId } = await recordEvent(tg.gateway.deps.db, new Date(), {
      tenantId: tenantA,
      environment: "sandbox",
      type: "payment.completed",
      data: { paymentId: "pay_isolated_event" },
    });
    await expectIsolated(tg, {
      owner: tenantA,
      other: tenantB,
      environment: "sandbox",
      requests: [{ path: `/events/${eventId}` }],
      readBack: `/events/${eventId}`,
    });
    const listB = await (await send("GET", "/events", await tg.tenantToken(tenantB))).text();
    expect(listB).not.toContain(eventId);
  });

  it("writes one delivery per enabled endpoint subscribed to the type, plus a direct target", async () => {
    const tenant = await tg.insertTenant();
    const token = await tg.tenantToken(tenant);
    const all = await createEndpoint(token, { url: "http://127.0.0.1:9/all" });
    const completedOnly = await createEndpoint(token, { url: "http://127.0.0.1:9/completed", events: ["payment.completed"] });
    const failedOnly = await createEndpoint(token, { url: "http://127.0.0.1:9/failed", events: ["payment.failed"] });
    const disabled = await createEndpoint(token, { url: "http://127.0.0.1:9/off" });
    await send("PATCH", `/webhooks/${disabled.id}`, token, { enabled: false });
    await createEndpoint(await tg.tenantToken(tenant, "live"), { url: "https://hooks.example.com/other-env" });

    const db = tg.gateway.deps.db;
    const recorded = await db.transaction().execute((tx) =>
      recordEvent(tx, new Date(), {
        tenantId: tenant,
        environment: "sandbox",
        type: "payment.completed",
        data: {},
        directTargetUrl: "http://127.0.0.1:9/callback",
      }),
    );
    const rows = await db.selectFrom("deliveries").select(["endpoint_id", "target_url", "state"]).where("event_id", "=", recorded.eventId).execute();
    expect(rows.length).toBe(3);
    expect(recorded.deliveryIds.length).toBe(3);
    expect(
      rows
        .map((r) => r.endpoint_id)
        .filter(Boolean)
        .sort(),
    ).toEqual([all.id, completedOnly.id].sort());
    expect(rows.find((r) => r.endpoint_id === null)?.target_url).toBe("http://127.0.0.1:9/callback");
    expect(rows.map((r) => r.endpoint_id)).not.toContain(failedOnly.id);
    expect(rows.every((r) => r.state === "pending")).toBe(true);

    // Recorded inside a transaction that rolls back: nothing remains.
    const before = await db
      .selectFrom("events")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("tenant_id", "=", tenant)
      .executeTakeFirstOrThrow();
    await db
      .transaction()
      .execute(async (tx) => {
        await recordEvent(tx, new Date(), { tenantId: tenant, environment: "sandbox", type: "payment.completed", data: {} });
        throw new Error("state change failed");
      })
      .catch(() => undefined);
    const after = await db
      .selectFrom("events")
      .select((eb) => eb.fn.countAll().as("n"))
      .where("tenant_id", "=", tenant)
      .executeTakeFirstOrThrow();
    expect(Number(after.n)).toBe(Number(before.n));
  });
});
