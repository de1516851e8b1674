/**
 * The home screen's overview (issue 29 point 1), over REST and tRPC: a tenant's payments of three wallets
 * and two providers in two currencies, made today, two days and ten days ago (rows written by SQL at those
 * moments, the gateway's clock fixed), read over today (per hour, in Lagos' time), 7 and 30 days (per day):
 * counts, amounts collected, success rates per wallet and provider, refunds and payouts; and what needs
 * attention — a payment stuck past the 24 h sync window, a failing and a disabled webhook endpoint (not one
 * the merchant switched off), a payout still pending, provider B's missing keys. Another tenant, the other
 * environment and a tenant naming another with `x-tenant-id` see none of it.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ulid } from "ulid";
import type { NewPayment } from "../../../src/db/schema.ts";
import { insertDirectPayment } from "../../support/db.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";

// 16:00 in Lagos (UTC+1): today there began at 2026-11-27T23:00Z.
const NOW = new Date("2026-11-28T15:00:00Z");
const TZ = "Africa/Lagos";

let tg: TestGateway;
let tenantA: string;
let tenantB: string;
let tokenA: string;
let stuckId: string;
let transaction = 1;

const MTN_BJ = { provider: "providerA", payment_method: "mnoA_open", operator: "mtn", customer: { phone: "+22997000001", country: "bj" } } as const;

async function pay(tenantId: string, at: string, state: NewPayment["state"], amount: number, fields: Partial<NewPayment> = MTN_BJ) {
  return insertDirectPayment(tg.gateway.deps.db, tenantId, transaction++, { state, amount, created_at: new Date(at), updated_at: new Date(at), ...fields });
}

beforeAll(async () => {
  tg = await startTestGateway({}, { now: () => NOW });
  // Payouts, refunds and endpoints written by SQL, not by the gateway's paths: the ledger does not know them.
  tg.database.audited = false;
  const { db } = tg.gateway.deps;
  tenantA = await tg.insertTenant({ liveEnabled: true });
  tenantB = await tg.insertTenant();
  tokenA = await tg.tenantToken(tenantA);

  // Today: MTN Benin on provider A (2 collected, 1 failed, 1 pending), Wave Senegal and Orange Senegal on
  // provider B (a wallet known by its method, a country by the customer's number or the method), MTN Guinea in GNF.
  await pay(tenantA, "2026-11-28T10:00:00Z", "succeeded", 1000);
  await pay(tenantA, "2026-11-28T11:10:00Z", "succeeded", 2000);
  await pay(tenantA, "2026-11-28T12:00:00Z", "failed", 700);
  await pay(tenantA, "2026-11-28T14:00:00Z", "pending", 300);
  await pay(tenantA, "2026-11-28T09:00:00Z", "succeeded", 5000, {
    provider: "providerB",
    kind: "checkout",
    payment_method: "wave-senegal",
    operator: null,
    customer: { phone: "+221770000001" },
  });
  await pay(tenantA, "2026-11-28T13:00:00Z", "cancelled", 400, {
    provider: "providerB",
    kind: "checkout",
    payment_method: "new-orange-money-senegal",
    operator: null,
    customer: null,
  });
  await pay(tenantA, "2026-11-28T08:00:00Z", "succeeded", 25_000, { ...MTN_BJ, payment_method: "mnoA_open_gn", currency: "GNF", customer: { country: "gn" } });
  // Two days ago: one collected then refunded, one still pending (stuck); ten days ago: one collected.
  const refunded = await pay(tenantA, "2026-11-26T10:00:00Z", "refunded", 800);
  stuckId = (await pay(tenantA, "2026-11-26T12:00:00Z", "pending", 600)).id;
  await pay(tenantA, "2026-11-18T10:00:00Z", "succeeded", 900);
  // Elsewhere: A's live payment, B's payment.
  await pay(tenantA, "2026-11-28T10:30:00Z", "succeeded", 99_999, { ...MTN_BJ, environment: "live" });
  await pay(tenantB, "2026-11-28T10:30:00Z", "succeeded", 123_456);

  const payout = (fields: { purpose: "payout" | "refund"; state: "pending" | "sent" | "failed"; amount: number; at: string; paymentId?: string }) => ({
    id: `po_${ulid()}`,
    tenant_id: tenantA,
    environment: "sandbox" as const,
    purpose: fields.purpose,
    payment_id: fields.paymentId ?? null,
    provider: "providerA",
    provider_account: "service",
    operator: "mtn",
    country: "bj",
    phone_number: "+22997000009",
    recipient: {},
    amount: fields.amount,
    currency: "XOF" as const,
    description: "Out",
    state: fields.state,
    created_at: new Date(fields.at),
  });
  await db
    .insertInto("payouts")
    .values([
      payout({ purpose: "payout", state: "pending", amount: 1500, at: "2026-11-28T08:30:00Z" }),
      payout({ purpose: "refund", state: "sent", amount: 200, at: "2026-11-28T09:30:00Z", paymentId: refunded.id }),
      payout({ purpose: "payout", state: "failed", amount: 3000, at: "2026-11-18T11:00:00Z" }),
    ])
    .execute();

  const endpoint = (id: string, fields: { enabled: boolean; disabled_reason?: string; failing_since?: Date; tenant_id?: string }) => ({
    id,
    tenant_id: tenantA,
    environment: "sandbox" as const,
    url: `https://shop.example/${id}`,
    ...fields,
  });
  await db
    .insertInto("webhook_endpoints")
    .values([
      endpoint("whe_failing", { enabled: true, failing_since: new Date("2026-11-28T06:00:00Z") }),
      endpoint("whe_disabled", { enabled: false, disabled_reason: "the endpoint answered 410 Gone" }),
      endpoint("whe_switched_off", { enabled: false }),
      endpoint("whe_healthy", { enabled: true }),
      endpoint("whe_b_failing", { enabled: true, failing_since: new Date("2026-11-28T06:00:00Z"), tenant_id: tenantB }),
    ])
    .execute();
});

afterAll(() => tg?.close());

async function overview(query: string, token = tokenA, headers: Record<string, string> = {}) {
  const response = await tg.request(`/reports/overview?${query}`, { headers: { authorization: `Bearer ${token}`, ...headers } });
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

const rate = (succeeded: number, ended: number) => expect.closeTo(succeeded / ended, 10);

describe("GET /reports/overview", () => {
  it("today, per hour in the viewer's time zone: totals, wallets, providers, refunds and payouts", async () => {
    const { status, body } = await overview(`period=today&timeZone=${TZ}`);
    expect(status).toBe(200);
    expect(body).toMatchObject({
      environment: "sandbox",
      period: "today",
      timeZone: TZ,
      from: "2026-11-27T23:00:00.000Z",
      to: NOW.toISOString(),
      bucket: "hour",
    });
    expect(body.totals).toEqual({
      payments: 7,
      succeeded: 4,
      failed: 1,
      cancelled: 1,
      pending: 1,
      successRate: rate(4, 6),
      collected: [
        { currency: "GNF", amount: 25_000 },
        { currency: "XOF", amount: 8000 },
      ],
    });
    // Every hour from midnight in Lagos to now, none left out; 11:00 Lagos (10:00Z) holds the 1,000.
    expect(body.series).toHaveLength(17);
    expect(body.series[0].start).toBe("2026-11-27T23:00:00.000Z");
    expect(body.series.find((s: { start: string }) => s.start === "2026-11-28T10:00:00.000Z")).toMatchObject({
      payments: 1,
      collected: [{ currency: "XOF", amount: 1000 }],
    });
    expect(body.series.find((s: { start: string }) => s.start === "2026-11-28T11:00:00.000Z")).toMatchObject({ payments: 1, succeeded: 1 });
    expect(body.series.reduce((sum: number, s: { payments: number }) => sum + s.payments, 0)).toBe(7);

    expect(body.wallets.map((w: { operator: string; country: string }) => `${w.operator}/${w.country}`)).toEqual(["mtn/bj", "mtn/gn", "orange/sn", "wave/sn"]);
    expect(body.wallets[0]).toEqual({
      operator: "mtn",
      country: "bj",
      payments: 4,
      succeeded: 2,
      failed: 1,
      cancelled: 0,
      pending: 1,
      successRate: rate(2, 3),
      collected: [{ currency: "XOF", amount: 3000 }],
    });
    expect(body.wallets[2]).toMatchObject({ operator: "orange", country: "sn", payments: 1, cancelled: 1, successRate: 0, collected: [] });
    expect(body.wallets[3]).toMatchObject({ operator: "wave", country: "sn", payments: 1, successRate: 1, collected: [{ currency: "XOF", amount: 5000 }] });

    expect(body.providers).toEqual([
      expect.objectContaining({ provider: "providerA", label: "Provider A", payments: 5, succeeded: 3, failed: 1, pending: 1, successRate: rate(3, 4) }),
      expect.objectContaining({ provider: "providerB", label: "Provider B", payments: 2, succeeded: 1, cancelled: 1, successRate: 0.5 }),
    ]);
    expect(body.moneyOut).toEqual([
      { purpose: "payout", state: "pending", currency: "XOF", count: 1, amount: 1500 },
      { purpose: "refund", state: "sent", currency: "XOF", count: 1, amount: 200 },
    ]);
  });

  it("7 and 30 days, per day: a refunded payment counts as collected, a pending one has no part in the rate", async () => {
    const week = await overview(`period=7d&timeZone=${TZ}`);
    expect(week.status).toBe(200);
    expect(week.body).toMatchObject({ from: "2026-11-21T23:00:00.000Z", bucket: "day" });
    expect(week.body.totals).toMatchObject({ payments: 9, succeeded: 5, pending: 2, successRate: rate(5, 7) });
    expect(week.body.totals.collected).toContainEqual({ currency: "XOF", amount: 8800 });
    expect(week.body.series.map((s: { start: string }) => s.start)).toEqual(
      ["21", "22", "23", "24", "25", "26", "27"].map((day) => `2026-11-${day}T23:00:00.000Z`),
    );
    expect(week.body.series[4]).toMatchObject({ payments: 2, succeeded: 1, pending: 1 });

    const month = await overview(`period=30d&timeZone=${TZ}`);
    expect(month.body.series).toHaveLength(30);
    expect(month.body.totals).toMatchObject({ payments: 10, succeeded: 6 });
    expect(month.body.totals.collected).toContainEqual({ currency: "XOF", amount: 9700 });
    expect(month.body.moneyOut).toContainEqual({ purpose: "payout", state: "failed", currency: "XOF", count: 1, amount: 3000 });

    // Without a time zone: UTC, the last 7 days by default.
    const defaults = await overview("");
    expect(defaults.body).toMatchObject({ period: "7d", timeZone: "UTC", from: "2026-11-22T00:00:00.000Z" });
  });

  it("what needs attention, whatever the window: the stuck payment, the failing and disabled endpoints, the pending payout, provider B's keys", async () => {
    const { body } = await overview(`period=today&timeZone=${TZ}`);
    expect(body.attention.stuckPayments).toEqual({
      count: 1,
      oldest: [{ id: stuckId, provider: "providerA", amount: 600, currency: "XOF", createdAt: "2026-11-26T12:00:00.000Z" }],
    });
    expect(body.attention.webhookEndpoints).toEqual([
      { id: "whe_failing", url: "https://shop.example/whe_failing", enabled: true, disabledReason: null, failingSince: "2026-11-28T06:00:00.000Z" },
      { id: "whe_disabled", url: "https://shop.example/whe_disabled", enabled: false, disabledReason: "the endpoint answered 410 Gone", failingSince: null },
    ]);
    expect(body.attention.pendingMoneyOut).toEqual([{ purpose: "payout", count: 1, oldestCreatedAt: "2026-11-28T08:30:00.000Z" }]);
    expect(body.attention.missingCredentials).toContainEqual({ provider: "providerB", label: "Provider B" });
  });

  it("the dashboard's procedure answers the same over /trpc", async () => {
    const response = await tg.request(`/trpc/reports.overview?input=${encodeURIComponent(JSON.stringify({ period: "today", timeZone: TZ }))}`, {
      headers: { authorization: `Bearer ${tokenA}` },
    });
    expect(response.status).toBe(200);
    const { result } = (await response.json()) as { result: { data: Record<string, any> } };
    expect(result.data.totals.payments).toBe(7);
    expect(result.data.attention.stuckPayments.count).toBe(1);
  });

  it("refuses a time zone or a period it does not know, in the contract's shape", async () => {
    const zone = await overview("period=today&timeZone=Mars/Olympus_Mons");
    expect(zone.status).toBe(400);
    expect(zone.body).toMatchObject({ statusCode: 400, code: "validation_failed", message: ['timeZone "Mars/Olympus_Mons" is not a known IANA time zone'] });
    const period = await overview("period=90d");
    expect(period.status).toBe(400);
    expect(period.body.code).toBe("validation_failed");
  });

  it("shows another tenant, the other environment and an operator only what is theirs", async () => {
    const seenByA = JSON.stringify((await overview("period=30d")).body);
    // B: its own payment, its own failing endpoint, nothing of A's.
    const b = await overview("period=30d", await tg.tenantToken(tenantB));
    expect(b.status).toBe(200);
    expect(b.body.totals).toMatchObject({ payments: 1, collected: [{ currency: "XOF", amount: 123_456 }] });
    expect(b.body.attention.stuckPayments).toEqual({ count: 0, oldest: [] });
    expect(b.body.attention.webhookEndpoints.map((e: { id: string }) => e.id)).toEqual(["whe_b_failing"]);
    expect(b.body.attention.pendingMoneyOut).toEqual([]);
    expect(b.body.moneyOut).toEqual([]);
    const seenByB = JSON.stringify(b.body);
    for (const secret of [stuckId, "whe_failing", "whe_disabled"]) {
      expect(seenByA).toContain(secret);
      expect(seenByB).not.toContain(secret);
    }
    // B naming A: refused.
    const naming = await overview("period=30d", await tg.tenantToken(tenantB), { "x-tenant-id": tenantA });
    expect(naming.status).toBe(403);
    expect(naming.body.code).toBe("tenant_mismatch");
    // A in live: only its live payment.
    const live = await overview("period=30d", await tg.tenantToken(tenantA, "live"));
    expect(live.body).toMatchObject({ environment: "live", totals: { payments: 1, collected: [{ currency: "XOF", amount: 99_999 }] } });
    expect(JSON.stringify(live.body)).not.toContain(stuckId);
    // An operator opening A sees A's.
    const admin = await overview("period=30d", await tg.adminToken(), { "x-tenant-id": tenantA });
    expect(admin.status).toBe(200);
    expect(admin.body.totals.payments).toBe(10);
    expect(admin.body.attention.stuckPayments.oldest[0].id).toBe(stuckId);
  });
});
