/**
 * Lists a merchant can keep: `GET /payments`, `/refunds`, `/payouts` and `/balance/entries` answer
 * `Accept: text/csv` with every matching item, streamed page by page, under the same filters, the same
 * tenant scope and one count against the rate limit.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { parse } from "csv-parse/sync";
import { monotonicFactory } from "ulid";
import type { NewPayment } from "../../../src/db/schema.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { expectIsolated } from "../../support/isolation.ts";

let tg: TestGateway;
let tenant: string;
let other: string;
let token: string;
let otherToken: string;
const nextUlid = monotonicFactory();
/** The tenant's payments as inserted, oldest first. */
const payments: { id: string; state: string; description: string }[] = [];

async function insertPayment(tenantId: string, fields: Partial<NewPayment> = {}) {
  const row = await tg.gateway.deps.db
    .insertInto("payments")
    .values({
      id: `pay_${nextUlid()}`,
      tenant_id: tenantId,
      environment: "sandbox",
      provider: "providerA",
      kind: "direct_payment",
      provider_account: "service",
      amount: 500,
      currency: "XOF",
      description: "Order",
      customer: { name: "Awa", phone: "+22997000001" },
      ...fields,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  if (tenantId === tenant) payments.push({ id: row.id, state: row.state, description: row.description });
  return row;
}

async function csv(path: string, as = token) {
  const response = await tg.request(path, { headers: { authorization: `Bearer ${as}`, accept: "text/csv" } });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, rows: response.status === 200 ? (parse(text) as string[][]) : [] };
}

const remaining = (headers: Headers) => Number(/r=(\d+)/.exec(headers.get("ratelimit") ?? "")?.[1]);

beforeAll(async () => {
  // A budget small enough that a count per page would show: 1 token a second.
  tg = await startTestGateway({ RATE_LIMIT_RPS: "1", RATE_LIMIT_BURST: "100" });
  tenant = await tg.insertTenant({ liveEnabled: true });
  other = await tg.insertTenant({ liveEnabled: true });
  token = await tg.tenantToken(tenant);
  otherToken = await tg.tenantToken(other);
  for (let i = 0; i < 230; i++) await insertPayment(tenant, i % 10 === 3 ? { state: "failed", failure_code: "declined" } : {});
  await insertPayment(tenant, { description: '=HYPERLINK("http://evil.example","click")' });
  await insertPayment(tenant, { description: "-2+3", customer: { name: "@admin" } });
  await insertPayment(other, { description: "another shop's order" });
}, 120_000);
afterAll(() => tg.close(), 30_000);

describe("GET /payments as CSV", () => {
  it("streams every payment, newest first, across pages, with a header of the payment's fields", async () => {
    const before = remaining((await tg.request("/payments?limit=1", { headers: { authorization: `Bearer ${token}` } })).headers);
    const { status, headers, rows } = await csv("/payments");
    expect(status).toBe(200);
    expect(headers.get("content-type")).toBe("text/csv; charset=utf-8");
    const [header, ...body] = rows;
    expect(header!.slice(0, 4)).toEqual(["id", "provider", "kind", "state"]);
    expect(header).toContain("customer.phone");
    expect(header).toContain("amountRefunded");
    expect(body).toHaveLength(232);
    const at = (name: string) => header!.indexOf(name);
    expect(body.map((row) => row[at("id")])).toEqual(payments.map((p) => p.id).reverse());
    expect(body.every((row) => row[at("amount")] === "500" && row[at("currency")] === "XOF" && row[at("customer.name")] !== "")).toBe(true);
    // Three pages of 100, one request: counted once against the budget (a count per page would take three).
    const after = remaining((await tg.request("/payments?limit=1", { headers: { authorization: `Bearer ${token}` } })).headers);
    expect(before - after).toBeLessThanOrEqual(2);
  });

  it("is gzipped as it streams for a client that takes gzip", async () => {
    const response = await tg.request("/payments?state=failed", {
      headers: { authorization: `Bearer ${token}`, accept: "text/csv", "accept-encoding": "br;q=1, gzip;q=0.5" },
    });
    expect(response.headers.get("content-encoding")).toBe("gzip");
    expect(response.headers.get("vary")).toContain("Accept-Encoding");
    const text = new TextDecoder().decode(Bun.gunzipSync(new Uint8Array(await response.arrayBuffer())));
    expect((parse(text) as string[][]).slice(1).map((row) => row[0])).toHaveLength(23);
    const plain = await tg.request("/payments?state=failed", { headers: { authorization: `Bearer ${token}`, accept: "text/csv", "accept-encoding": "br" } });
    expect(plain.headers.get("content-encoding")).toBeNull();
  });

  it("keeps the filters, ignores limit, starts at a cursor", async () => {
    const failed = await csv("/payments?state=failed&limit=5");
    const ids = failed.rows.slice(1).map((row) => row[0]);
    expect(ids).toEqual(
      payments
        .filter((p) => p.state === "failed")
        .map((p) => p.id)
        .reverse(),
    );
    expect(ids).toHaveLength(23);

    const page = (await (await tg.request("/payments?limit=100", { headers: { authorization: `Bearer ${token}` } })).json()) as { nextCursor: string };
    // The JSON list's first page of 100; its cursor starts the CSV after them.
    const rest = await csv(`/payments?cursor=${encodeURIComponent(page.nextCursor)}`);
    expect(rest.rows.slice(1).map((row) => row[0])).toEqual(
      payments
        .map((p) => p.id)
        .reverse()
        .slice(100),
    );
  });

  it("writes what a customer typed so that a spreadsheet shows it rather than running it", async () => {
    const { rows } = await csv("/payments?limit=2");
    const header = rows[0]!;
    const descriptions = rows.slice(1, 3).map((row) => row[header.indexOf("description")]);
    expect(descriptions).toEqual(["'-2+3", '\'=HYPERLINK("http://evil.example","click")']);
    expect(rows[1]![header.indexOf("customer.name")]).toBe("'@admin");
    // A phone number is a signed number, not a formula: it keeps its + and no quote.
    expect(rows[2]![header.indexOf("customer.phone")]).toBe("+22997000001");
  });

  it("answers a bad filter with the JSON error, and a list of nothing with the header alone", async () => {
    const bad = await tg.request("/payments?state=lost", { headers: { authorization: `Bearer ${token}`, accept: "text/csv" } });
    expect(bad.status).toBe(400);
    expect(bad.headers.get("content-type")).toStartWith("application/json");
    expect(((await bad.json()) as { code: string }).code).toBe("validation_failed");
    const none = await csv("/payments?from=2020-01-01T00:00:00Z&to=2020-01-02T00:00:00Z");
    expect(none.rows).toHaveLength(1);
    expect(none.rows[0]![0]).toBe("id");
  });

  it("shows a tenant only its own payments", async () => {
    const mine = await csv("/payments", otherToken);
    expect(mine.rows.slice(1).map((row) => row[mine.rows[0]!.indexOf("description")])).toEqual(["another shop's order"]);
    expect(mine.text).not.toContain(payments[0]!.id);
  });
});

describe("refunds, payouts and ledger entries as CSV", () => {
  it("have a header of their fields, nested ones with dots, and nothing of another tenant", async () => {
    const refunds = await csv("/refunds");
    expect(refunds.status).toBe(200);
    expect(refunds.rows[0]!.slice(0, 4)).toEqual(["id", "paymentId", "state", "reason"]);
    expect(refunds.rows[0]).toContain("recipient.phone.number");
    const payouts = await csv("/payouts?state=sent");
    expect(payouts.rows[0]).toContain("recipient.phone.country");
    expect(payouts.rows[0]).toContain("metadata");
    const entries = await csv("/balance/entries");
    expect(entries.rows[0]).toEqual(["id", "journal", "account", "holding", "amount", "currency", "kind", "subjectId", "provider", "createdAt"]);
    for (const list of [refunds, payouts, entries]) expect(list.rows).toHaveLength(1);
  });

  it("GET /refunds refuses another tenant's cursor shape and bad states like the JSON list", async () => {
    const bad = await tg.request("/refunds?state=sent", { headers: { authorization: `Bearer ${token}` } });
    expect(bad.status).toBe(400);
    await expectIsolated(tg, {
      owner: tenant,
      other,
      environment: "sandbox",
      requests: [{ path: `/payments/${payments[0]!.id}` }],
    });
  });
});
