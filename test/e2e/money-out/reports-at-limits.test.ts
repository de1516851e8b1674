/**
 * Bounded amounts, unbreakable reports (issue 24 point 3): whatever the database holds, every report and
 * balance answers. Rows are inserted by SQL at the amount columns' limit (2^53 − 1, migration 0014's checks),
 * enough of them that every sum passes it, and — as a database written before those checks could hold —
 * ledger entries and differences at int8's own limit. Then the tenant's and the operator's reconciliation
 * (JSON and CSV, REST and the dashboard's tRPC procedures), the balance and the ledger's entries are read.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { sql } from "kysely";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { insertDirectPayment } from "../../support/db.ts";

const LIMIT = Number.MAX_SAFE_INTEGER; // 9007199254740991
const INT8_MAX = "9223372036854775807";

let tg: TestGateway;
let tenantId: string;
let token: string;
let admin: string;

beforeAll(async () => {
  tg = await startTestGateway();
  // Rows no path of the gateway writes (amounts past MAX_AMOUNT, a ledger that does not balance): not audited.
  tg.database.audited = false;
  const { db } = tg.gateway.deps;
  tenantId = await tg.insertTenant();
  token = await tg.tenantToken(tenantId);
  admin = await tg.adminToken();
  // Three payments at the limit, succeeded: the trigger credits each (sum: 3 × 2^53).
  for (const n of [1, 2, 3]) await insertDirectPayment(db, tenantId, 9_000 + n, { state: "succeeded", amount: LIMIT, operator: "mtn" });
  for (const n of [1, 2])
    await db
      .insertInto("payouts")
      .values({
        id: `po_limit${n}`,
        tenant_id: tenantId,
        environment: "sandbox",
        purpose: "payout",
        provider: "providerB",
        provider_account: "cred_limit",
        operator: "wave",
        country: "sn",
        phone_number: "770000001",
        recipient: {},
        amount: LIMIT,
        currency: "XOF",
        description: '=HYPERLINK("http://evil.example")',
        state: "pending",
      })
      .execute();
  // Written before migration 0014's checks: int8's own limit.
  await sql`alter table ledger_entries drop constraint ledger_entries_amount_exact_check`.execute(db);
  await sql`alter table reconciliation_differences drop constraint reconciliation_differences_amount_exact_check`.execute(db);
  await sql`insert into ledger_entries (tenant_id, environment, currency, journal, account, amount, kind, subject_id, provider, holding)
            values (${tenantId}, 'sandbox', 'XOF', 'po_limit1.reserved', 'available', ${INT8_MAX}::int8, 'payout', 'po_limit1', 'providerB', 'own:providerB'),
                   (${tenantId}, 'sandbox', 'XOF', 'po_limit1.reserved', 'pending', ${INT8_MAX}::int8, 'payout', 'po_limit1', 'providerB', 'own:providerB')`.execute(
    db,
  );
  for (const n of [1, 2])
    await sql`insert into reconciliation_differences (subject_id, subject_kind, tenant_id, environment, provider, our_state, provider_state, provider_status, amount, currency, first_seen_at, last_seen_at)
              values (${`po_limit${n}`}, 'payout', ${tenantId}, 'sandbox', 'providerB', 'pending', 'sent', 'success', ${INT8_MAX}::int8, 'XOF', now(), now())`.execute(
      db,
    );
});

afterAll(() => tg?.close());

async function get(path: string, bearer: string, accept = "application/json"): Promise<{ status: number; type: string; text: string }> {
  const response = await tg.request(path, { headers: { authorization: `Bearer ${bearer}`, accept } });
  return { status: response.status, type: response.headers.get("content-type") ?? "", text: await response.text() };
}

/** A whole number as JSON carries it (past 2^53 − 1, the nearest double). */
function whole(value: unknown): boolean {
  return typeof value === "number" && Number.isInteger(value);
}

describe("reports and balances at the amount columns' limits", () => {
  it("the tenant's balance and ledger entries answer, with every sum a whole number", async () => {
    const balance = await get("/balance", token);
    expect(balance.status).toBe(200);
    const body = JSON.parse(balance.text);
    expect(body.balances).toHaveLength(1);
    expect(whole(body.balances[0].available) && whole(body.balances[0].pending)).toBe(true);
    expect(body.balances[0].available).toBeGreaterThan(LIMIT);
    const pooled = body.accounts.find((a: { holding: string }) => a.holding === "pooled:providerA");
    expect(pooled.balances).toEqual([{ currency: "XOF", available: 3 * LIMIT, pending: 0 }]);
    const entries = await get("/balance/entries?limit=100", token);
    expect(entries.status).toBe(200);
    expect(JSON.parse(entries.text).data.every((e: { amount: unknown }) => whole(e.amount))).toBe(true);
  });

  it("the tenant's and the operator's reconciliation answer as JSON and as CSV", async () => {
    for (const [path, bearer] of [
      ["/reports/reconciliation", token],
      ["/admin/reports/reconciliation", admin],
      [`/admin/reports/reconciliation?tenantId=${tenantId}`, admin],
    ] as const) {
      const json = await get(path, bearer);
      expect({ path, status: json.status }).toEqual({ path, status: 200 });
      const report = JSON.parse(json.text);
      const payments = report.rows.find((r: { kind: string; state: string }) => r.kind === "payment" && r.state === "succeeded");
      expect(payments).toMatchObject({ count: 3, total: 3 * LIMIT });
      expect(report.differences.map((d: { amount: number }) => d.amount)).toEqual([Number(INT8_MAX), Number(INT8_MAX)]);
      const csv = await get(path, bearer, "text/csv");
      expect({ path, status: csv.status, type: csv.type }).toEqual({ path, status: 200, type: expect.stringContaining("text/csv") });
      expect(csv.text).toContain("payment,providerA");
    }
    // The operator's CSV carries the pooled accounts too: total what the ledger holds there, id the holding.
    expect((await get("/admin/reports/reconciliation", admin, "text/csv")).text).toContain(`pooled_account,,providerA,,,XOF,,${3 * LIMIT},pooled:providerA`);
    expect((await get("/reports/reconciliation", token, "text/csv")).text).not.toContain("pooled_account");
    const adminReport = JSON.parse((await get("/admin/reports/reconciliation", admin)).text);
    expect(adminReport.pooledAccounts).toContainEqual(expect.objectContaining({ holding: "pooled:providerA", currency: "XOF", held: 3 * LIMIT }));
  });

  it("the dashboard's procedures answer over /trpc", async () => {
    for (const [procedure, bearer] of [
      ["balance.get", token],
      ["balance.reconciliation", token],
      ["balance.allReconciliation", admin],
    ] as const) {
      const read = await get(`/trpc/${procedure}?input=${encodeURIComponent(JSON.stringify({}))}`, bearer);
      expect({ procedure, status: read.status }).toEqual({ procedure, status: 200 });
    }
  });
});
