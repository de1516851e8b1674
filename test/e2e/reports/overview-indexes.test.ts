/**
 * The overview of a tenant with a million payments is read by index (issue 29 point 1): 1,000,000 payments
 * of one tenant over a year, among 200,000 of another, and 60,000 payouts, seeded by one `insert … select
 * generate_series(…)` each; then, for today, 7 and 30 days, `EXPLAIN (ANALYZE)` of each of the overview's
 * reads must use an index (migration 0023's covering index for the payments' windows, read alone — an
 * index-only scan — and 0018's for the payouts') and never read the payments or payouts table whole. Times are logged, never asserted (the project has no timed assertion).
 *
 * On the real server only (`DATABASE_URL`): seeding a million rows into PGlite (PostgreSQL compiled to
 * WebAssembly, in memory) takes minutes, so the suite is skipped there under a name that says so.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { CompiledQuery, type Compilable, sql } from "kysely";
import { pendingMoneyOutQuery, stuckCountQuery } from "../../../src/services/reports/overview-attention.ts";
import { moneyOutQuery, OVERVIEW_PERIODS, overviewWindow, paymentGroupsQuery, withReportMemory } from "../../../src/services/reports/overview.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";

const onServer = Boolean(process.env.DATABASE_URL);
const TENANT_PAYMENTS = 1_000_000;
const TZ = "Africa/Porto-Novo";

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}

/** Every node of a plan, depth first. */
function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

(onServer ? describe : describe.skip)(
  `the overview of a tenant with ${TENANT_PAYMENTS.toLocaleString("en")} payments${onServer ? "" : " (skipped: PostgreSQL server only — seeding a million rows into PGlite takes minutes; set DATABASE_URL)"}`,
  () => {
    let tg: TestGateway;
    let tenant: string;
    let other: string;
    const now = new Date();

    beforeAll(async () => {
      tg = await startTestGateway({}, { now: () => now });
      // Rows seeded by SQL past the ledger's trigger (below): the ledger does not know them.
      tg.database.audited = false;
      const { db } = tg.gateway.deps;
      tenant = await tg.insertTenant();
      other = await tg.insertTenant();
      // The ledger's credit of each collected payment is not what is measured here; a million of them would
      // only make the seed slower.
      await db.transaction().execute(async (trx) => {
        await sql`set local statement_timeout = 0`.execute(trx);
        await sql`alter table payments disable trigger payments_ledger_insert`.execute(trx);
        // 1,100,000 payments, one every ~29 s over the last year, newest first: 10 of every 11 the tenant's;
        // MTN and Moov in Benin and Senegal on two providers; 1 in 20 failed, 1 in 29 cancelled, 1 in 31 refunded,
        // the 60 newest pending.
        await sql`
        insert into payments (id, tenant_id, environment, provider, kind, provider_account, state, amount, currency, description,
                              customer, payment_method, operator, created_at, updated_at)
        select 'pay_' || lpad(to_hex(i), 26, '0'),
               case when i % 11 = 0 then ${other} else ${tenant} end,
               'sandbox',
               case when i % 3 = 0 then 'providerB' else 'providerA' end,
               'direct_payment', 'service',
               case when i <= 60 then 'pending' when i % 20 = 0 then 'failed' when i % 29 = 0 then 'cancelled' when i % 31 = 0 then 'refunded'
                    else 'succeeded' end,
               100 + i % 5000, 'XOF', 'Order',
               jsonb_build_object('phone', case when i % 4 = 0 then '+22177' else '+22997' end || lpad((i % 1000000)::text, 7, '0'),
                                  'country', case when i % 4 = 0 then 'sn' else 'bj' end),
               case when i % 3 = 0 then 'mtn-benin' else 'mnoA_open' end,
               case when i % 5 < 2 then 'moov' else 'mtn' end,
               ${now}::timestamptz - i * interval '28.67 seconds',
               ${now}::timestamptz - i * interval '28.67 seconds'
          from generate_series(1, ${TENANT_PAYMENTS * 1.1}) as i`.execute(trx);
        await sql`alter table payments enable trigger payments_ledger_insert`.execute(trx);
        // 60,000 payouts of the tenant over the year, the 20 newest pending.
        await sql`
        insert into payouts (id, tenant_id, environment, purpose, provider, provider_account, operator, country, phone_number, recipient,
                             amount, currency, description, state, created_at, updated_at)
        select 'po_' || lpad(to_hex(i), 26, '0'), ${tenant}, 'sandbox', 'payout', 'providerA',
               'service', 'mtn', 'bj', '+22997000001', '{}'::jsonb, 100 + i % 900, 'XOF', 'Out',
               case when i <= 20 then 'pending' when i % 40 = 0 then 'failed' else 'sent' end,
               ${now}::timestamptz - i * interval '525 seconds', ${now}::timestamptz - i * interval '525 seconds'
          from generate_series(1, 60000) as i`.execute(trx);
      });
      // What autovacuum does to a table that has settled: the pages all-visible, so an index-only scan skips the table.
      await sql`vacuum analyze payments`.execute(db);
      await sql`analyze payouts`.execute(db);
    }, 600_000);

    afterAll(() => tg?.close());

    /** The plan of `query` as run (`EXPLAIN (ANALYZE, FORMAT JSON)`, with the reports' `work_mem`, as the overview runs it), and its execution time. */
    async function explain(query: Compilable<unknown>): Promise<{ nodes: PlanNode[]; ms: number }> {
      const compiled = query.compile();
      const { rows } = await withReportMemory(tg.gateway.deps.db, (trx) =>
        trx.executeQuery<{ "QUERY PLAN": [{ Plan: PlanNode; "Execution Time": number }] }>(
          CompiledQuery.raw(`explain (analyze, format json) ${compiled.sql}`, [...compiled.parameters]),
        ),
      );
      const [plan] = rows[0]!["QUERY PLAN"];
      return { nodes: nodesOf(plan.Plan), ms: plan["Execution Time"] };
    }

    /** No Seq Scan anywhere, and `table` read through one of `indexes`. */
    function expectIndexed(what: string, nodes: PlanNode[], table: string, indexes: string[]): void {
      const seqScans = nodes.filter((node) => node["Node Type"] === "Seq Scan").map((node) => node["Relation Name"]);
      expect({ what, seqScans }).toEqual({ what, seqScans: [] });
      const used = nodes.filter((node) => node["Index Name"] !== undefined).map((node) => node["Index Name"]!);
      const onTable = nodes.filter((node) => node["Relation Name"] === table).map((node) => node["Node Type"]);
      expect({ what, onTable: onTable.length > 0 }).toEqual({ what, onTable: true });
      expect({ what, byIndex: used.length > 0 && used.every((name) => indexes.includes(name)) }, `${what}: ${used.join(", ")}`).toEqual({
        what,
        byIndex: true,
      });
    }

    it("reads each window of payments and payouts, the stuck payments and the pending payouts by index", async () => {
      const { db } = tg.gateway.deps;
      const deps = { db, now: () => now };
      const scope = { tenantId: tenant, environment: "sandbox" as const };
      const count = await db.selectFrom("payments").select(sql<string>`count(*)`.as("n")).where("tenant_id", "=", tenant).executeTakeFirstOrThrow();
      expect(Number(count.n)).toBe(TENANT_PAYMENTS);
      const times: string[] = [];
      for (const period of OVERVIEW_PERIODS) {
        const window = overviewWindow(period, TZ, now);
        const payments = await explain({ compile: () => paymentGroupsQuery(scope, window, TZ).compile(db) });
        expectIndexed(`payments over ${period}`, payments.nodes, "payments", ["payments_overview_idx"]);
        // Migration 0023's index carries every column the overview groups by: the table itself is not read.
        expect({ period, scans: payments.nodes.filter((node) => node["Relation Name"] === "payments").map((node) => node["Node Type"]) }).toEqual({
          period,
          scans: ["Index Only Scan"],
        });
        const moneyOut = await explain({ compile: () => moneyOutQuery(scope, window).compile(db) });
        expectIndexed(`payouts over ${period}`, moneyOut.nodes, "payouts", ["payouts_tenant_created_idx"]);
        times.push(`${period}: payments ${payments.ms.toFixed(1)} ms, payouts ${moneyOut.ms.toFixed(1)} ms`);
      }
      const stuck = await explain(stuckCountQuery(deps, scope));
      expectIndexed("stuck payments", stuck.nodes, "payments", ["payments_tenant_state_idx", "payments_pending_created_idx"]);
      const pending = await explain(pendingMoneyOutQuery(deps, scope));
      expectIndexed("pending payouts", pending.nodes, "payouts", ["payouts_tenant_pending_idx"]);
      times.push(`stuck payments ${stuck.ms.toFixed(1)} ms, pending payouts ${pending.ms.toFixed(1)} ms`);
      console.log(`EXPLAIN ANALYZE execution times with ${TENANT_PAYMENTS} payments:\n  ${times.join("\n  ")}`);
    }, 120_000);

    it("answers GET /reports/overview for each period (times logged, not asserted)", async () => {
      const token = await tg.tenantToken(tenant);
      const times: string[] = [];
      for (const period of OVERVIEW_PERIODS) {
        const started = performance.now();
        const response = await tg.request(`/reports/overview?period=${period}&timeZone=${TZ}`, { headers: { authorization: `Bearer ${token}` } });
        const took = performance.now() - started;
        expect(response.status).toBe(200);
        const body = (await response.json()) as { totals: { payments: number }; wallets: { operator: string; country: string }[] };
        expect(body.totals.payments).toBeGreaterThan(0);
        expect(body.wallets.map((w) => `${w.operator}/${w.country}`).sort()).toEqual(["moov/bj", "moov/sn", "mtn/bj", "mtn/sn"]);
        times.push(`${period}: ${body.totals.payments} payments in ${took.toFixed(0)} ms`);
      }
      console.log(`GET /reports/overview with ${TENANT_PAYMENTS} payments:\n  ${times.join("\n  ")}`);
    }, 120_000);
  },
);
