/**
 * The reconciliation CSV (`Accept: text/csv` on GET /reports/reconciliation and /admin/reports/reconciliation)
 * never hands a spreadsheet a formula: provider B's simulator reports formula-like channel names for paid
 * checkouts, they reach the report's operator column, and each such cell is neutralised (OWASP: a `'` before
 * a cell beginning with `=`, `+`, `-`, `@`, tab or CR). Over real HTTP, gateway and simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { reconciliationCsv, type Reconciliation } from "../../../src/services/reports/reconciliation.ts";
import type { TestDatabase } from "../../support/db.ts";
import type { Json } from "../../support/json.ts";
import { createTestDatabase, startRigGateway, startSimulator, type RigGateway, type SimulatorServer } from "../../support/provider-b-rig.ts";
import { waitUntil } from "../../support/wait.ts";

/** Channel names the provider reports, and the cell each must become in the CSV. */
const REPORTED = [
  { channel: '=HYPERLINK("http://evil.example/","Click")', cell: `"'=HYPERLINK(""http://evil.example/"",""Click"")"` },
  { channel: "+1+1", cell: "'+1+1" },
  { channel: "-2+3", cell: "'-2+3" },
  { channel: "@SUM(A1:A9)", cell: "'@SUM(A1:A9)" },
  { channel: "wave;=1+1", cell: '"wave;=1+1"' },
];

/** Characters that make a spreadsheet read a cell as a formula (OWASP's list, with the full-width forms). */
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

/** The cells of a CSV line without quotes or line breaks inside a cell (every line of this test's report). */
function cellsOf(line: string): string[] {
  const cells: string[] = [];
  const pattern = /("(?:[^"]|"")*"|[^,]*)(,|$)/g;
  for (const match of line.matchAll(pattern)) {
    cells.push(match[1]!);
    if (match[2] === "") break;
  }
  return cells;
}

let sim: SimulatorServer;
let database: TestDatabase;
let gw: RigGateway;
let tenantId: string;

beforeAll(async () => {
  sim = await startSimulator();
  database = await createTestDatabase();
  gw = await startRigGateway({ sim, database, workerOptions: { sweepEveryMs: 60_000 } });
  ({ tenantId } = await gw.tenantWithAccount(sim));
  for (const { channel } of REPORTED) {
    const response = await gw.call("POST", "/providerB/checkout", tenantId, {
      amount: 1000,
      description: "Commande",
      returnUrl: "https://shop.example/merci",
      cancelUrl: "https://shop.example/panier",
      customer: { name: "Awa Diop", email: "awa@example.com", phone: "+221770000000" },
    });
    const answer = (await response.json()) as Json;
    expect(response.status, JSON.stringify(answer)).toBe(200);
    expect((await sim.press(answer.token, "pay", { payment_method: channel })).status).toBe(200);
    await waitUntil(
      async () => {
        const payment = (await (await gw.call("GET", `/payments/${answer.paymentId}`, tenantId)).json()) as Json;
        return payment.state === "succeeded" && payment.paymentMethod === channel;
      },
      { what: `the checkout paid with ${channel}`, timeoutMs: 10_000 },
    );
  }
}, 90_000);

afterAll(async () => {
  await gw?.close();
  await sim?.stop();
  await database?.dispose();
});

describe("the reconciliation CSV", () => {
  it("shows the provider's reported channels as the operator, and as JSON unchanged", async () => {
    const report = (await (await gw.call("GET", "/reports/reconciliation", tenantId)).json()) as Reconciliation;
    expect(report.rows.map((row) => row.operator).sort()).toEqual(REPORTED.map((r) => r.channel).sort());
  });

  for (const [name, request] of [
    ["GET /reports/reconciliation (tenant)", () => gw.call("GET", "/reports/reconciliation", tenantId, undefined, { accept: "text/csv" })],
    [
      "GET /admin/reports/reconciliation (operator)",
      async () =>
        fetch(`${gw.url}/admin/reports/reconciliation?tenantId=${tenantId}`, {
          headers: { authorization: `Bearer ${await gw.adminToken()}`, accept: "text/csv" },
        }),
    ],
  ] as const)
    it(`neutralises every formula-like cell the provider reported: ${name}`, async () => {
      const response = await request();
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toContain("text/csv");
      const lines = (await response.text()).trimEnd().split("\n");
      const totals = lines.filter((line) => line.startsWith("total,"));
      expect(totals.length).toBe(REPORTED.length);
      for (const { cell } of REPORTED) expect(totals.filter((line) => cellsOf(line)[3] === cell)).toHaveLength(1);
      for (const line of lines)
        for (const cell of cellsOf(line)) expect({ line, cell, formula: FORMULA_START.test(cell) }).toEqual({ line, cell, formula: false });
    });
});

describe("reconciliationCsv", () => {
  it("neutralises a tab or CR at a cell's start and formula text in every text column, never a number", () => {
    const report: Reconciliation = {
      from: "2026-01-01T00:00:00.000Z",
      to: "2026-02-01T00:00:00.000Z",
      environment: "sandbox",
      rows: [{ kind: "payment", provider: "providerB", operator: "\tcmd", state: "succeeded", currency: "XOF", count: 1, total: 500 }],
      differences: [
        {
          tenantId: "ten_1",
          kind: "payment",
          id: "pay_1",
          provider: "providerB",
          ourState: "pending",
          providerState: "succeeded",
          providerStatus: "\r=1+1",
          amount: -5,
          currency: "XOF",
          firstSeenAt: "2026-01-02T00:00:00.000Z",
          lastSeenAt: "2026-01-02T00:00:00.000Z",
        },
      ],
    };
    const lines = reconciliationCsv(report).split("\n");
    expect(lines[1]).toBe("total,payment,providerB,'\tcmd,succeeded,XOF,1,500,,,,,,,");
    expect(lines[2]).toBe(`difference,payment,providerB,,pending,XOF,1,-5,pay_1,ten_1,succeeded,"'\r=1+1",2026-01-02T00:00:00.000Z,,`);
  });
});
