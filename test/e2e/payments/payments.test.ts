import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { sql } from "kysely";
import { monotonicFactory } from "ulid";
import type { Environment, NewPayment, Payment } from "../../../src/db/schema.ts";
import { PAYMENT_STATES } from "../../../src/services/payments/mod.ts";
import { encodeCursor } from "../../../src/services/paging.ts";
import { paymentsMatching } from "../../../src/services/payments/list-payments.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { expectIsolated } from "../../support/isolation.ts";

let tg: TestGateway;
let tenantA: string;
let tenantB: string;
/** Every payment inserted by the suite, in insertion (= id) order. */
const inserted: Payment[] = [];
const nextUlid = monotonicFactory();

/** Inserts a payment row directly (the endpoints that create payments arrive with their own issues). */
async function insertPayment(fields: Partial<NewPayment> & { tenant_id: string; environment: Environment }): Promise<Payment> {
  const row = await tg.gateway.deps.db
    .insertInto("payments")
    .values({
      id: `pay_${nextUlid()}`,
      provider: "providerA",
      kind: "direct_payment",
      provider_account: "service",
      amount: 500,
      currency: "XOF",
      description: "Test payment",
      ...fields,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  inserted.push(row);
  return row;
}

const bearer = (token: string, headers: Record<string, string> = {}) => ({ headers: { authorization: `Bearer ${token}`, ...headers } });

async function getJson(path: string, token: string, headers: Record<string, string> = {}) {
  const response = await tg.request(path, bearer(token, headers));
  return { status: response.status, body: (await response.json()) as Record<string, any> };
}

/** The ids of a tenant's payments in one environment, newest first: what the list must return. */
const ownedBy = (tenantId: string, environment: Environment, where: (p: Payment) => boolean = () => true) =>
  inserted
    .filter((p) => p.tenant_id === tenantId && p.environment === environment && where(p))
    .map((p) => p.id)
    .reverse();

/** Follows nextCursor from the first page to the last; returns every id seen and the page count. */
async function readAllPages(query: string, token: string): Promise<{ ids: string[]; pages: number }> {
  const ids: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const separator = query.includes("?") ? "&" : "?";
    const path: string = cursor === null ? query : `${query}${separator}cursor=${encodeURIComponent(cursor)}`;
    const { status, body } = await getJson(path, token);
    expect(status).toBe(200);
    ids.push(...body.data.map((p: { id: string }) => p.id));
    cursor = body.nextCursor;
    pages++;
    if (pages > 50) throw new Error("paging does not end");
  } while (cursor !== null);
  return { ids, pages };
}

beforeAll(async () => {
  tg = await startTestGateway();
  // Payments of every state inserted by SQL (refunded ones never credited first), as no path of the gateway writes them: not audited.
  tg.database.audited = false;
  tenantA = await tg.insertTenant({ liveEnabled: true });
  tenantB = await tg.insertTenant({ liveEnabled: true });
  // Tenant A, sandbox: 25 payments of every kind and state.
  for (let i = 0; i < 25; i++) {
    const kind = (["direct_payment", "checkout", "permit_charge"] as const)[i % 3]!;
    await insertPayment({
      tenant_id: tenantA,
      environment: "sandbox",
      kind,
      provider: kind === "direct_payment" ? "providerA" : "providerB",
      state: PAYMENT_STATES[i % PAYMENT_STATES.length]!,
      provider_transaction_id: kind === "direct_payment" ? String(1000 + i) : `inv_a_${i}`,
      reference: kind === "direct_payment" ? `trx_${i}` : null,
      amount: 100 * (i + 1),
    });
  }
  // Tenant A, live; tenant B in both environments — reusing A's provider ids on other accounts.
  for (let i = 0; i < 3; i++) await insertPayment({ tenant_id: tenantA, environment: "live", provider_transaction_id: String(1000 + i) });
  for (let i = 0; i < 4; i++)
    await insertPayment({
      tenant_id: tenantB,
      environment: "sandbox",
      provider_account: "cred_b",
      provider_transaction_id: String(1000 + i),
      reference: `trx_${i}`,
    });
  for (let i = 0; i < 2; i++) await insertPayment({ tenant_id: tenantB, environment: "live" });
}, 60_000);
afterAll(() => tg.close(), 30_000);

describe("GET /payments", () => {
  it("lists the tenant's payments newest first, in pages with no duplicates or gaps", async () => {
    const token = await tg.tenantToken(tenantA);
    const { ids, pages } = await readAllPages("/payments?limit=7", token);
    expect(pages).toBe(4);
    expect(ids).toEqual(ownedBy(tenantA, "sandbox"));
    expect(new Set(ids).size).toBe(25);
  });

  it("answers 20 payments per page by default, and an exact last page with nextCursor null", async () => {
    const token = await tg.tenantToken(tenantA);
    const first = await getJson("/payments", token);
    expect(first.body.data).toHaveLength(20);
    expect(typeof first.body.nextCursor).toBe("string");
    const second = await getJson(`/payments?cursor=${first.body.nextCursor}`, token);
    expect(second.body.data).toHaveLength(5);
    expect(second.body.nextCursor).toBeNull();
    const exact = await getJson("/payments?limit=25", token);
    expect(exact.body.data).toHaveLength(25);
    expect(exact.body.nextCursor).toBeNull();
  });

  it("filters by provider, kind and state, with paging", async () => {
    const token = await tg.tenantToken(tenantA);
    const byProvider = await readAllPages("/payments?provider=providerB&limit=4", token);
    expect(byProvider.ids).toEqual(ownedBy(tenantA, "sandbox", (p) => p.provider === "providerB"));
    for (const kind of ["direct_payment", "checkout", "permit_charge"] as const) {
      const { ids } = await readAllPages(`/payments?kind=${kind}&limit=3`, token);
      expect(ids.length).toBeGreaterThan(0);
      expect(ids).toEqual(ownedBy(tenantA, "sandbox", (p) => p.kind === kind));
    }
    for (const state of PAYMENT_STATES) {
      const { ids } = await readAllPages(`/payments?state=${state}&limit=2`, token);
      expect(ids.length).toBeGreaterThan(0);
      expect(ids).toEqual(ownedBy(tenantA, "sandbox", (p) => p.state === state));
    }
    const combined = await readAllPages("/payments?kind=checkout&state=pending", token);
    expect(combined.ids).toEqual(ownedBy(tenantA, "sandbox", (p) => p.kind === "checkout" && p.state === "pending"));
  });

  it("filters by providerTransactionId and reference, within the tenant and environment only", async () => {
    const tokenA = await tg.tenantToken(tenantA);
    // Provider id 1000 exists in A sandbox, A live and B sandbox: A's sandbox list shows only its own.
    const byProviderId = await getJson("/payments?providerTransactionId=1000", tokenA);
    expect(byProviderId.body.data.map((p: Payment) => p.id)).toEqual(ownedBy(tenantA, "sandbox", (p) => p.provider_transaction_id === "1000"));
    expect(byProviderId.body.data).toHaveLength(1);
    const byToken = await getJson("/payments?providerTransactionId=inv_a_4", tokenA);
    expect(byToken.body.data).toHaveLength(1);
    expect(byToken.body.data[0].providerTransactionId).toBe("inv_a_4");
    const byReference = await getJson("/payments?reference=trx_3", tokenA);
    expect(byReference.body.data.map((p: Payment) => p.id)).toEqual(ownedBy(tenantA, "sandbox", (p) => p.reference === "trx_3"));
    expect(byReference.body.data).toHaveLength(1);
    const none = await getJson("/payments?reference=trx_unknown", tokenA);
    expect(none.body).toEqual({ data: [], nextCursor: null });
  });

  it("refuses a limit outside 1–100 or not an integer with the contract's 400", async () => {
    const token = await tg.tenantToken(tenantA);
    const cases: [string, string][] = [
      ["0", "limit must not be less than 1"],
      ["101", "limit must not be greater than 100"],
      ["abc", "limit must be an integer number"],
      ["2.5", "limit must be an integer number"],
    ];
    for (const [limit, message] of cases) {
      const { status, body } = await getJson(`/payments?limit=${limit}`, token);
      expect(status).toBe(400);
      expect(body).toMatchObject({ statusCode: 400, error: "Bad Request", code: "validation_failed", message: [message] });
    }
  });

  it("refuses filter values outside the contract's enums", async () => {
    const token = await tg.tenantToken(tenantA);
    const state = await getJson("/payments?state=paid", token);
    expect(state.status).toBe(400);
    expect(state.body.message).toEqual(["state must be one of the following values: pending, succeeded, failed, cancelled, refunded"]);
    const kind = await getJson("/payments?kind=refund", token);
    expect(kind.body.message).toEqual(["kind must be one of the following values: direct_payment, checkout, permit_charge"]);
  });

  it("refuses a cursor it did not hand out with 400", async () => {
    const token = await tg.tenantToken(tenantA);
    for (const cursor of ["not-a-cursor", "%%%", encodeCursor(tenantA), ""]) {
      const { status, body } = await getJson(`/payments?cursor=${encodeURIComponent(cursor)}`, token);
      expect(status).toBe(400);
      expect(body.code).toBe("validation_failed");
    }
    const { body } = await getJson("/payments?cursor=not-a-cursor", token);
    expect(body.message).toEqual(["cursor must be a nextCursor returned by an earlier page"]);
  });

  it("never shows another tenant's or environment's payments", async () => {
    const idsOfA = new Set(inserted.filter((p) => p.tenant_id === tenantA).map((p) => p.id));
    const asB = await readAllPages("/payments?limit=100", await tg.tenantToken(tenantB));
    expect(asB.ids).toEqual(ownedBy(tenantB, "sandbox"));
    expect(asB.ids.some((id) => idsOfA.has(id))).toBe(false);
    // B's filters never reach A's rows, even with A's provider ids and references.
    for (const query of ["providerTransactionId=inv_a_1", "reference=trx_10", "kind=checkout"]) {
      const { body } = await getJson(`/payments?${query}`, await tg.tenantToken(tenantB));
      expect(body.data).toEqual([]);
    }
    // A cursor taken from A's list only pages through B's own rows.
    const pageOfA = await getJson("/payments?limit=2", await tg.tenantToken(tenantA));
    const withCursorOfA = await readAllPages(`/payments?cursor=${pageOfA.body.nextCursor}`, await tg.tenantToken(tenantB));
    expect(withCursorOfA.ids.every((id) => !idsOfA.has(id))).toBe(true);

    const liveA = await readAllPages("/payments", await tg.tenantToken(tenantA, "live"));
    expect(liveA.ids).toEqual(ownedBy(tenantA, "live"));
    const adminForB = await getJson("/payments?limit=100", await tg.adminToken("live"), { "x-tenant-id": tenantB });
    expect(adminForB.body.data.map((p: Payment) => p.id)).toEqual(ownedBy(tenantB, "live"));
  });

  it("is the same procedure over /trpc", async () => {
    const input = encodeURIComponent(JSON.stringify({ limit: 3, state: "failed" }));
    const response = await tg.request(`/trpc/payments.list?input=${input}`, bearer(await tg.tenantToken(tenantA)));
    expect(response.status).toBe(200);
    const body = (await response.json()) as { result: { data: { data: { id: string }[] } } };
    expect(body.result.data.data.map((p) => p.id)).toEqual(ownedBy(tenantA, "sandbox", (p) => p.state === "failed").slice(0, 3));
  });
});

describe("GET /payments, searched by date, amount and phone", () => {
  let tenantC: string;
  const rows: Record<string, Payment> = {};
  beforeAll(async () => {
    tenantC = await tg.insertTenant();
    const at = (day: number) => new Date(Date.UTC(2026, 10, day, 12));
    rows.early = await insertPayment({ tenant_id: tenantC, environment: "sandbox", amount: 1000, created_at: at(1), customer: { phone: "+22997000001" } });
    rows.middle = await insertPayment({
      tenant_id: tenantC,
      environment: "sandbox",
      amount: 5000,
      created_at: at(10),
      customer: { phone: "+221 77 123 45 67" },
    });
    rows.late = await insertPayment({
      tenant_id: tenantC,
      environment: "sandbox",
      kind: "checkout",
      provider: "providerB",
      amount: 25000,
      created_at: at(20),
      // A checkout's phone as provider B gave it: national, without the country code.
      customer: { name: "Awa", phone: "97000001" },
    });
    rows.noPhone = await insertPayment({ tenant_id: tenantC, environment: "sandbox", amount: 5000, created_at: at(21) });
    // Tenant A's payment with the same phone and amount never shows in C's searches.
    await insertPayment({ tenant_id: tenantA, environment: "live", amount: 5000, created_at: at(10), customer: { phone: "+22997000001" } });
  });
  const idsOf = async (query: string) => (await readAllPages(`/payments?${query}`, await tg.tenantToken(tenantC))).ids;

  it("keeps the payments created in [from, to), newest first, with paging", async () => {
    expect(await idsOf("from=2026-11-10T12:00:00Z&to=2026-11-20T12:00:00Z")).toEqual([rows.middle!.id]);
    expect(await idsOf("from=2026-11-05T00:00:00%2B01:00&limit=1")).toEqual([rows.noPhone!.id, rows.late!.id, rows.middle!.id]);
    expect(await idsOf("to=2026-11-10T12:00:00.001Z")).toEqual([rows.middle!.id, rows.early!.id]);
  });

  it("keeps amounts between amountMin and amountMax, both included", async () => {
    expect(await idsOf("amountMin=5000&amountMax=5000")).toEqual([rows.noPhone!.id, rows.middle!.id]);
    expect(await idsOf("amountMin=5001")).toEqual([rows.late!.id]);
    expect(await idsOf("amountMax=4999")).toEqual([rows.early!.id]);
  });

  it("finds a customer's phone however it is typed, with or without the country code", async () => {
    const both = [rows.late!.id, rows.early!.id];
    expect(await idsOf(`phone=${encodeURIComponent("+229 97 00 00 01")}`)).toEqual(both);
    expect(await idsOf("phone=97000001")).toEqual(both);
    expect(await idsOf(`phone=${encodeURIComponent("(229) 97-00.00.01")}`)).toEqual(both);
    expect(await idsOf("phone=221771234567")).toEqual([rows.middle!.id]);
    expect(await idsOf("phone=22997000009")).toEqual([]);
    // Filters combine.
    expect(await idsOf("phone=97000001&amountMin=2000&from=2026-11-02T00:00:00Z")).toEqual([rows.late!.id]);
  });

  it("reads a phone search from its index, not every payment of the tenant", async () => {
    const db = tg.gateway.deps.db;
    // A tenant with 10,000 payments, and the statistics the planner reads.
    const busy = await tg.insertTenant();
    await sql`
      insert into payments (id, tenant_id, environment, provider, kind, provider_account, amount, currency, description, customer)
      select 'pay_' || lpad(n::text, 26, '0'), ${busy}, 'sandbox', 'providerA', 'direct_payment', 'service', 500, 'XOF', 'Bulk',
             jsonb_build_object('phone', '+229' || (90000000 + n)::text)
      from generate_series(1, 10000) as n`.execute(db);
    await sql`analyze payments`.execute(db);
    const search = { tenantId: busy, environment: "sandbox" as const, phone: "90 00 42 17" };
    const found = await paymentsMatching(db, search).select("id").orderBy("id", "desc").limit(21).execute();
    expect(found.map((row) => row.id)).toEqual([`pay_${"4217".padStart(26, "0")}`]);
    const plan = (await paymentsMatching(db, search).orderBy("id", "desc").limit(21).explain()).map((row) => String(Object.values(row)[0]));
    // Each arm of the search (ends with / is a suffix of) is an index condition, not a filter over the tenant's rows.
    const phoneConditions = plan.filter((line) => line.includes("Index Cond") && line.includes("reverse(regexp_replace("));
    expect({ phoneConditions: phoneConditions.length, filtered: plan.some((line) => line.includes("Filter:")) }, plan.join("\n")).toEqual({
      phoneConditions: 2,
      filtered: false,
    });
  });

  it("refuses an empty range, a short phone and text that is no phone with the contract's 400", async () => {
    const token = await tg.tenantToken(tenantC);
    const cases: [string, string[]][] = [
      ["from=2026-11-10T00:00:00Z&to=2026-11-10T00:00:00Z", ["from must be before to"]],
      ["amountMin=10&amountMax=9", ["amountMin must not be more than amountMax"]],
      ["phone=%2B229%2012", ["phone must have at least 6 digits"]],
      ["phone=97000001%27%20or%201%3D1", ["phone must be a phone number: digits, with an optional leading + and spaces, dots, dashes or brackets"]],
    ];
    for (const [query, message] of cases) {
      const { status, body } = await getJson(`/payments?${query}`, token);
      expect(status).toBe(400);
      expect(body).toMatchObject({ code: "validation_failed", message });
    }
    const notADate = await getJson("/payments?from=yesterday", token);
    expect(notADate.status).toBe(400);
    expect(notADate.body.message[0]).toStartWith("from ");
  });
});

describe("GET /payments/{payment_id}", () => {
  it("reads one payment in the API shape", async () => {
    const row = await insertPayment({
      tenant_id: tenantA,
      environment: "sandbox",
      provider: "providerB",
      kind: "checkout",
      provider_account: "cred_a",
      provider_transaction_id: "inv_read_one",
      provider_status: "completed",
      state: "succeeded",
      amount: 5000,
      description: "Order 42",
      customer: { name: "Awa Diallo", email: "awa@example.com", phone: "+22997000000" },
      custom_data: { orderId: "42", quantity: 3, gift: false },
      payment_method: "wave-senegal",
      credential_version: 2,
      completed_at: new Date("2025-01-02T03:04:05.678Z"),
    });
    const { status, body } = await getJson(`/payments/${row.id}`, await tg.tenantToken(tenantA));
    expect(status).toBe(200);
    expect(body).toEqual({
      id: row.id,
      provider: "providerB",
      kind: "checkout",
      state: "succeeded",
      providerStatus: "completed",
      providerTransactionId: "inv_read_one",
      reference: null,
      merchantReference: null,
      amount: 5000,
      amountRefunded: 0,
      refundStatus: "none",
      currency: "XOF",
      description: "Order 42",
      customer: { name: "Awa Diallo", email: "awa@example.com", phone: "+22997000000" },
      customData: { orderId: "42", quantity: 3, gift: false },
      paymentMethod: "wave-senegal",
      callbackUrl: null,
      outcomeUnknown: false,
      failureCode: null,
      operator: null,
      credentialVersion: 2,
      nextAction: null,
      paymentLinkId: null,
      attempts: [],
      receiptUrl: null,
      receiptIdentifier: null,
      providerReference: null,
      environment: "sandbox",
      createdAt: row.created_at.toISOString(),
      updatedAt: row.updated_at.toISOString(),
      completedAt: "2025-01-02T03:04:05.678Z",
    });
  });

  it("answers 404 for an unknown or malformed id", async () => {
    const token = await tg.tenantToken(tenantA);
    for (const id of [`pay_${nextUlid()}`, "pay_nope", "ten_01JAAAAAAAAAAAAAAAAAAAAAAA", "x".repeat(300)]) {
      const { status, body } = await getJson(`/payments/${id}`, token);
      expect(status).toBe(404);
      expect(body).toMatchObject({ statusCode: 404, code: "not_found", message: "Payment not found", error: "Not Found" });
    }
  });

  it("keeps a payment to its tenant and environment", async () => {
    const row = await insertPayment({
      tenant_id: tenantA,
      environment: "sandbox",
      provider_transaction_id: "987654",
      reference: "trx_isolated_reference",
      description: "Isolated payment description",
      customer: { firstname: "Kofi", lastname: "Mensah-Isolated", email: "kofi.isolated@example.com", phone: "+22997123456", country: "bj" },
      callback_url: "https://merchant.example/isolated-callback",
    });
    const token = await tg.tenantToken(tenantA);
    const { body: object } = await getJson(`/payments/${row.id}`, token);
    await expectIsolated(tg, {
      owner: tenantA,
      other: tenantB,
      environment: "sandbox",
      requests: [{ path: `/payments/${row.id}` }],
      object,
      readBack: `/payments/${row.id}`,
    });
    // And a live payment, from the other side.
    const live = await insertPayment({ tenant_id: tenantB, environment: "live", description: "B's live payment only" });
    await expectIsolated(tg, { owner: tenantB, other: tenantA, environment: "live", requests: [{ path: `/payments/${live.id}` }] });
  });
});

describe("the payments table", () => {
  it("refuses a second payment with the same provider id on the same environment, provider and account", async () => {
    const base = { tenant_id: tenantA, environment: "sandbox", provider: "providerA", provider_account: "service", provider_transaction_id: "55501" } as const;
    await insertPayment(base);
    const duplicate = insertPayment({ ...base, tenant_id: tenantB });
    await expect(duplicate).rejects.toMatchObject({ code: "23505" });
    // The same provider id is another payment on another environment or account.
    await insertPayment({ ...base, environment: "live" });
    await insertPayment({ ...base, provider_account: "cred_tenant_a" });
    // Until the provider answered, any number of payments have no provider id.
    await insertPayment({ ...base, provider_transaction_id: null });
    await insertPayment({ ...base, provider_transaction_id: null });
    const rows = await tg.gateway.deps.db.selectFrom("payments").select("id").where("provider_transaction_id", "=", "55501").execute();
    expect(rows).toHaveLength(3);
  });

  it("checks states, amounts, currencies and that a payment names a provider (any the gateway runs: migration 0010)", async () => {
    const base = { tenant_id: tenantA, environment: "sandbox" } as const;
    await expect(insertPayment({ ...base, state: "paid" as never })).rejects.toMatchObject({ code: "23514" });
    await expect(insertPayment({ ...base, amount: 0 })).rejects.toMatchObject({ code: "23514" });
    await expect(insertPayment({ ...base, currency: "EUR" as never })).rejects.toMatchObject({ code: "23514" });
    await expect(insertPayment({ ...base, provider: "" })).rejects.toMatchObject({ code: "23514" });
    await expect(insertPayment({ ...base, tenant_id: "ten_01JAAAAAAAAAAAAAAAAAAAAAAA" })).rejects.toMatchObject({ code: "23503" });
  });

  it("reads an int8 amount back as a number, through Kysely and the API", async () => {
    const big = 9_007_199_254_740_000; // beyond int4, below 2^53
    const row = await insertPayment({ tenant_id: tenantA, environment: "sandbox", amount: big, currency: "GNF" });
    expect(row.amount).toBe(big);
    const read = await tg.gateway.deps.db.selectFrom("payments").select("amount").where("id", "=", row.id).executeTakeFirstOrThrow();
    expect(typeof read.amount).toBe("number");
    expect(read.amount).toBe(big);
    const { body } = await getJson(`/payments/${row.id}`, await tg.tenantToken(tenantA));
    expect(body.amount).toBe(big);
    expect(body.currency).toBe("GNF");
  });

  it("stores customer and customData as jsonb objects, never as JSON strings", async () => {
    const row = await insertPayment({ tenant_id: tenantA, environment: "sandbox", custom_data: { plan: "gold", seats: 5, trial: true } });
    const { rows } = await sql<{ type: string; seats: string }>`
      select jsonb_typeof(custom_data) as type, custom_data->>'seats' as seats from payments where id = ${row.id}`.execute(tg.gateway.deps.db);
    expect(rows[0]).toEqual({ type: "object", seats: "5" });
    expect(row.custom_data).toEqual({ plan: "gold", seats: 5, trial: true });
  });
});
