/**
 * `PUT`, `GET` and `DELETE /providerB/permits/{permit_id}/schedule` over real HTTP (issue 7, contract §5):
 * validation, one schedule per permit kept under one id, replacement rules, cancellation, isolation.
 * Permits are made through the API and authorised on the provider B simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mintToken } from "../../../src/mod.ts";
import { sweepRenewals } from "../../../src/services/permits/renewals.ts";
import type { TestDatabase } from "../../support/db.ts";
import type { TestGateway } from "../../support/gateway.ts";
import { expectIsolated } from "../../support/isolation.ts";
import { activePermit, type PermitRig } from "../../support/permit-rig.ts";
import type { RigGateway } from "../../support/provider-b-rig.ts";
import { schedulePath, startRenewalRig, testClock, type RecordingSimulator } from "../../support/renewal-rig.ts";
import { waitUntil } from "../../support/wait.ts";
import type { Json } from "../../support/json.ts";

const clock = testClock(new Date("2025-01-10T08:00:00Z"));
let rig: PermitRig<RecordingSimulator>;
let sim: RecordingSimulator;
let database: TestDatabase;
let gw: RigGateway;

async function put(tenantId: string, permitId: string, body: Json): Promise<{ status: number; body: Json }> {
  const response = await gw.call("PUT", schedulePath(permitId), tenantId, body);
  return { status: response.status, body: (await response.json()) as Json };
}

beforeAll(async () => {
  // Renewal sweeps run only when a test calls them.
  ({ sim, database, gw } = rig = await startRenewalRig(clock));
}, 60_000);

afterAll(() => rig?.stop());

describe("PUT /providerB/permits/{permit_id}/schedule", () => {
  it("creates a monthly schedule anchored at startAt and reads it back", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId } = await activePermit(gw, sim, tenantId);
    const created = await put(tenantId, permitId, { amount: 5000, interval: "month", startAt: "2025-01-31T09:00:00Z", description: "Abonnement" });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({
      permitId,
      status: "active",
      amount: 5000,
      currency: "XOF",
      interval: "month",
      intervalCount: 1,
      startAt: "2025-01-31T09:00:00.000Z",
      timeZone: "Africa/Dakar",
      period: "2025-01-31",
      attempt: 0,
      nextChargeAt: "2025-01-31T09:00:00.000Z",
      paused: false,
      pastDueAt: null,
      cancelledAt: null,
    });
    expect(created.body.id).toMatch(/^sch_[0-9A-Z]{26}$/);
    const read = await gw.call("GET", schedulePath(permitId), tenantId);
    expect(read.status).toBe(200);
    expect(await read.json()).toEqual(created.body);
  });

  it("defaults startAt to now and intervalCount to 1", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId } = await activePermit(gw, sim, tenantId);
    const { body } = await put(tenantId, permitId, { amount: 1000, interval: "week", description: "Panier" });
    expect(body).toMatchObject({ startAt: clock.now().toISOString(), nextChargeAt: clock.now().toISOString(), intervalCount: 1, period: "2025-01-10" });
  });

  it("answers 400 with a clear message when the amount exceeds the permit's maxAmount", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId } = await activePermit(gw, sim, tenantId, { maxAmount: 7000 });
    const { status, body } = await put(tenantId, permitId, { amount: 7001, interval: "month", description: "Trop" });
    expect(status).toBe(400);
    expect(body).toMatchObject({ statusCode: 400, code: "validation_failed", error: "Bad Request" });
    expect(body.message).toEqual(["amount must be at most the permit's maxAmount (7000)"]);
    expect((await put(tenantId, permitId, { amount: 7000, interval: "month", description: "Juste" })).status).toBe(200);
  });

  it("answers 409 permit_not_active for a permit the customer has not authorised", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const created = await gw.call(
      "POST",
      "/providerB/permits",
      tenantId,
      {
        customer: { name: "Ali", phone: "+221770000001" },
        description: "x",
        maxAmount: 9000,
        returnUrl: "https://s.example/r",
        cancelUrl: "https://s.example/c",
      },
      { "idempotency-key": crypto.randomUUID() },
    );
    const { permitId } = (await created.json()) as Json;
    const { status, body } = await put(tenantId, permitId, { amount: 1000, interval: "day", description: "x" });
    expect(status).toBe(409);
    expect(body.code).toBe("permit_not_active");
    expect((await gw.call("GET", schedulePath(permitId), tenantId)).status).toBe(404);
  });

  it("validates the body, and requires x-tenant-id", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId } = await activePermit(gw, sim, tenantId);
    for (const bad of [
      { amount: 0, interval: "month", description: "x" },
      { amount: 10, interval: "year", description: "x" },
      { amount: 10, interval: "day", intervalCount: 0, description: "x" },
      { amount: 10, interval: "day", startAt: "tomorrow", description: "x" },
      { amount: 10, interval: "day" },
    ]) {
      const { status, body } = await put(tenantId, permitId, bad);
      expect(status, JSON.stringify(bad)).toBe(400);
      expect(body.code).toBe("validation_failed");
    }
    const token = await gw.tenantToken(tenantId);
    const noTenant = await fetch(`${gw.url}${schedulePath(permitId)}`, {
      method: "PUT",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ amount: 10, interval: "day", description: "x" }),
    });
    expect(noTenant.status).toBe(400);
    expect((await gw.call("GET", schedulePath("prm_01JD3Z6Q5W8B8Y4G1M7T2N9XKC"), tenantId)).status).toBe(404);
  });

  it("keeps one schedule per permit: same cadence keeps its place, a new cadence starts again without reusing a charged period", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId } = await activePermit(gw, sim, tenantId);
    const first = await put(tenantId, permitId, { amount: 3000, interval: "day", description: "Jour" });
    expect(first.body.period).toBe("2025-01-10");
    // Today's period is charged.
    await sweepRenewals(gw.gateway.deps);
    await waitUntil(async () => ((await (await gw.call("GET", schedulePath(permitId), tenantId)).json()) as Json).period === "2025-01-11", {
      what: "the first period paid",
    });

    const sameCadence = await put(tenantId, permitId, { amount: 3500, interval: "day", description: "Jour, nouveau prix" });
    expect(sameCadence.body).toMatchObject({ id: first.body.id, amount: 3500, period: "2025-01-11", startAt: first.body.startAt });

    // A new anchor today: today is already charged, so the next period is tomorrow's.
    const moved = await put(tenantId, permitId, { amount: 3500, interval: "day", startAt: "2025-01-10T20:00:00Z", description: "Soir" });
    expect(moved.body).toMatchObject({ id: first.body.id, period: "2025-01-11", nextChargeAt: "2025-01-11T20:00:00.000Z" });

    const weekly = await put(tenantId, permitId, { amount: 3500, interval: "week", intervalCount: 2, description: "Quinzaine" });
    expect(weekly.body).toMatchObject({ id: first.body.id, interval: "week", intervalCount: 2, startAt: clock.now().toISOString(), period: "2025-01-24" });
  });

  it("cancels with DELETE (idempotently), and a later PUT revives the same schedule", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId } = await activePermit(gw, sim, tenantId);
    const created = await put(tenantId, permitId, { amount: 2000, interval: "month", startAt: "2025-02-01T00:00:00Z", description: "Mois" });
    const cancelled = await gw.call("DELETE", schedulePath(permitId), tenantId);
    expect(cancelled.status).toBe(200);
    const body = (await cancelled.json()) as Json;
    expect(body).toMatchObject({ id: created.body.id, status: "cancelled", nextChargeAt: null, cancelledAt: clock.now().toISOString() });
    const again = await gw.call("DELETE", schedulePath(permitId), tenantId);
    expect(await again.json()).toEqual(body);
    const revived = await put(tenantId, permitId, { amount: 2000, interval: "month", description: "Mois" });
    expect(revived.body).toMatchObject({ id: created.body.id, status: "active", cancelledAt: null, startAt: "2025-02-01T00:00:00.000Z" });
  });

  it("follows the payer's country's time zone by default (from the permit customer's phone), else Africa/Abidjan", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    for (const [phone, zone] of [
      ["+22997000000", "Africa/Porto-Novo"],
      ["+221770000000", "Africa/Dakar"],
      ["+22370000000", "Africa/Bamako"],
      ["+224620000000", "Africa/Conakry"],
      ["+33612345678", "Africa/Abidjan"],
    ] as const) {
      const { permitId } = await activePermit(gw, sim, tenantId, { customer: { name: "Awa", phone } });
      const { status, body } = await put(tenantId, permitId, { amount: 1000, interval: "month", description: "Mois" });
      expect(status, JSON.stringify(body)).toBe(200);
      expect(body.timeZone, phone).toBe(zone);
      expect(((await (await gw.call("GET", schedulePath(permitId), tenantId)).json()) as Json).timeZone).toBe(zone);
    }
  });

  it("takes timeZone as an IANA zone name (spelled as the zone database does), and answers 400 naming the field otherwise", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId } = await activePermit(gw, sim, tenantId);
    for (const timeZone of ["Mars/Olympus_Mons", "+01:00", "UTC+1", "", 42]) {
      const { status, body } = await put(tenantId, permitId, { amount: 1000, interval: "month", timeZone, description: "Mois" });
      expect(status, JSON.stringify(timeZone)).toBe(400);
      expect(body.code).toBe("validation_failed");
      expect(
        body.message.some((m: string) => m.startsWith("timeZone ")),
        JSON.stringify(body.message),
      ).toBe(true);
    }
    const { body: bad } = await put(tenantId, permitId, { amount: 1000, interval: "month", timeZone: "Mars/Olympus_Mons", description: "Mois" });
    expect(bad.message).toEqual(["timeZone must be an IANA time zone name, like Africa/Porto-Novo"]);
    expect((await gw.call("GET", schedulePath(permitId), tenantId)).status).toBe(404);

    const { status, body } = await put(tenantId, permitId, {
      amount: 1000,
      interval: "month",
      timeZone: "africa/lome",
      startAt: "2025-01-31T00:00:00Z",
      description: "Mois",
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ timeZone: "Africa/Lome", period: "2025-01-31" });
  });

  it("keeps the time zone when a PUT leaves it out; a new one re-positions the schedule on the new calendar, from the same anchor", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId } = await activePermit(gw, sim, tenantId);
    // Local midnight of Feb 1 in Porto-Novo, before the test's clock (2025-01-10): not due yet.
    const startAt = "2025-02-01T00:00:00+01:00";
    const created = await put(tenantId, permitId, { amount: 2000, interval: "month", startAt, timeZone: "Africa/Porto-Novo", description: "Mois" });
    expect(created.body).toMatchObject({
      timeZone: "Africa/Porto-Novo",
      startAt: "2025-01-31T23:00:00.000Z",
      period: "2025-02-01",
      nextChargeAt: "2025-01-31T23:00:00.000Z",
    });

    const kept = await put(tenantId, permitId, { amount: 2500, interval: "month", description: "Mois, nouveau prix" });
    expect(kept.body).toMatchObject({
      id: created.body.id,
      timeZone: "Africa/Porto-Novo",
      amount: 2500,
      period: "2025-02-01",
      startAt: "2025-01-31T23:00:00.000Z",
    });

    // In Dakar (UTC+0) the same anchor is 23:00 on Jan 31: the schedule follows that calendar now.
    const moved = await put(tenantId, permitId, { amount: 2500, interval: "month", timeZone: "Africa/Dakar", description: "Mois" });
    expect(moved.body).toMatchObject({
      id: created.body.id,
      timeZone: "Africa/Dakar",
      startAt: "2025-01-31T23:00:00.000Z",
      period: "2025-01-31",
      nextChargeAt: "2025-01-31T23:00:00.000Z",
    });
  });

  it("shows a disabled tenant's schedule as paused", async () => {
    const { tenantId } = await gw.tenantWithAccount(sim);
    const { permitId } = await activePermit(gw, sim, tenantId);
    await put(tenantId, permitId, { amount: 2000, interval: "month", description: "Mois" });
    await database.db.updateTable("tenants").set({ disabled: true }).where("id", "=", tenantId).execute();
    gw.gateway.deps.tenants.forget(tenantId);
    const admin = await fetch(`${gw.url}${schedulePath(permitId)}`, { headers: { authorization: `Bearer ${await gw.adminToken()}`, "x-tenant-id": tenantId } });
    expect(((await admin.json()) as Json).paused).toBe(true);
    expect((await gw.call("GET", schedulePath(permitId), tenantId)).status).toBe(403);
  });

  it("is isolated: another tenant, the other environment and an admin acting for another tenant get 404", async () => {
    const { tenantId: owner } = await gw.tenantWithAccount(sim);
    const { tenantId: other } = await gw.tenantWithAccount(sim);
    await database.db.updateTable("tenants").set({ live_enabled: true }).where("id", "in", [owner, other]).execute();
    for (const id of [owner, other]) gw.gateway.deps.tenants.forget(id);
    const { permitId } = await activePermit(gw, sim, owner);
    const { body: schedule } = await put(owner, permitId, { amount: 2500, interval: "week", startAt: "2025-03-01T10:00:00Z", description: "Semaine isolée" });
    // x-tenant-id is required on the permit endpoints: a tenant token's caller sends its own tenant id
    // (the helper itself only sends it to name another tenant).
    const withOwnTenant = (init: RequestInit = {}): RequestInit => {
      const headers = new Headers(init.headers);
      const token = headers.get("authorization")?.split(".")[1];
      const claims = token ? (JSON.parse(Buffer.from(token, "base64url").toString()) as Json) : {};
      if (!headers.has("x-tenant-id") && claims.tenant_id) headers.set("x-tenant-id", claims.tenant_id);
      return { ...init, headers };
    };
    const tg = {
      request: (path: string, init?: RequestInit) => fetch(`${gw.url}${path}`, withOwnTenant(init)),
      tenantToken: (tenantId: string, environment: "sandbox" | "live" = "sandbox") =>
        mintToken(gw.config.jwt, { sub: `tenant:${tenantId}`, tenantId, environment }),
      adminToken: (environment: "sandbox" | "live" = "sandbox") => mintToken(gw.config.jwt, { sub: "operator", role: "admin", environment }),
    } as unknown as TestGateway;
    await expectIsolated(tg, {
      owner,
      other,
      environment: "sandbox",
      requests: [
        { method: "PUT", path: schedulePath(permitId), body: { amount: 100, interval: "day", description: "vol" } },
        { path: schedulePath(permitId) },
        { method: "DELETE", path: schedulePath(permitId) },
      ],
      object: schedule,
      readBack: schedulePath(permitId),
    });
  });
});
