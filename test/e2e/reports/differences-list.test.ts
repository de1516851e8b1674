/**
 * The reconciliation's differences as a paged list (issue 29): `GET /reports/reconciliation/differences` and
 * `GET /admin/reports/reconciliation/differences`, in the contract's list shape — every difference once across
 * the pages, newest sighting first (ties on the sighting kept apart by the record's id), a tenant's own only, the
 * other environment and the window left out, a cursor not handed out refused.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { newId } from "../../../src/services/ids.ts";
import { expectError } from "../../support/errors.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";

let tg: TestGateway;
let base: string;
let admin: string;
let shopA: string;
let shopB: string;

interface Difference {
  id: string;
  tenantId: string;
  lastSeenAt: string;
}

const NOW = Date.now();

async function insertDifference(tenantId: string, lastSeenAt: Date, environment: "sandbox" | "live" = "sandbox"): Promise<string> {
  const id = newId("pay");
  await tg.database.db
    .insertInto("reconciliation_differences")
    .values({
      subject_id: id,
      subject_kind: "payment",
      tenant_id: tenantId,
      environment,
      provider: "providerA",
      our_state: "failed",
      provider_state: "succeeded",
      provider_status: "SUCCESS",
      amount: 1000,
      currency: "XOF",
      first_seen_at: lastSeenAt,
      last_seen_at: lastSeenAt,
    })
    .execute();
  return id;
}

async function get(path: string, token: string, tenantId?: string): Promise<Response> {
  return fetch(`${base}${path}`, { headers: { authorization: `Bearer ${token}`, ...(tenantId ? { "x-tenant-id": tenantId } : {}) } });
}

/** Every page of a list, following nextCursor. */
async function everyPage(path: string, token: string): Promise<{ pages: number; data: Difference[] }> {
  const data: Difference[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const separator = path.includes("?") ? "&" : "?";
    const response = await get(`${path}${cursor ? `${separator}cursor=${cursor}` : ""}`, token);
    expect(response.status).toBe(200);
    const page = (await response.json()) as { data: Difference[]; nextCursor: string | null };
    data.push(...page.data);
    cursor = page.nextCursor;
    pages++;
  } while (cursor);
  return { pages, data };
}

const sighted = (difference: Difference) => `${difference.lastSeenAt}|${difference.id}`;

beforeAll(async () => {
  tg = await startTestGateway();
  base = (await tg.gateway.start()).url!;
  admin = await tg.adminToken();
  const create = async (name: string) =>
    (
      (await (
        await fetch(`${base}/tenants`, {
          method: "POST",
          headers: { authorization: `Bearer ${admin}`, "content-type": "application/json" },
          body: JSON.stringify({ name }),
        })
      ).json()) as {
        tenant: { id: string };
      }
    ).tenant.id;
  shopA = await create("Boutique Awa");
  shopB = await create("Chez Kofi");
  // 23 in the window, three of them seen at the same instant; one too old; one live; two of the other shop.
  for (let i = 0; i < 20; i++) await insertDifference(shopA, new Date(NOW - (i + 1) * 3_600_000));
  const tie = new Date(NOW - 90 * 60_000);
  for (let i = 0; i < 3; i++) await insertDifference(shopA, tie);
  await insertDifference(shopA, new Date(NOW - 40 * 86_400_000));
  await insertDifference(shopA, new Date(NOW - 3_600_000), "live");
  await insertDifference(shopB, new Date(NOW - 3_600_000));
  await insertDifference(shopB, new Date(NOW - 7_200_000));
}, 60_000);

afterAll(async () => {
  await tg?.close();
}, 30_000);

describe("GET /reports/reconciliation/differences", () => {
  it("pages the tenant's differences of the window and environment, each once, newest sighting first", async () => {
    const token = await tg.tenantToken(shopA);
    const { pages, data } = await everyPage("/reports/reconciliation/differences?limit=10", token);
    expect(pages).toBe(3);
    expect(data).toHaveLength(23);
    expect(new Set(data.map((d) => d.id)).size).toBe(23);
    expect(data.every((d) => d.tenantId === shopA)).toBe(true);
    const order = data.map(sighted);
    expect(order).toEqual([...order].sort().reverse());
    // The report's own differences are the same records.
    const report = (await (await get("/reports/reconciliation", token)).json()) as { differences: Difference[] };
    expect(report.differences.map((d) => d.id).sort()).toEqual(data.map((d) => d.id).sort());
  });

  it("narrows to the window asked for", async () => {
    const token = await tg.tenantToken(shopA);
    const from = new Date(NOW - 5.5 * 3_600_000).toISOString();
    const { data } = await everyPage(`/reports/reconciliation/differences?from=${encodeURIComponent(from)}`, token);
    // Seen 1 to 5 hours ago, and the three at an hour and a half.
    expect(data).toHaveLength(8);
  });

  it("refuses a cursor it did not hand out", async () => {
    const token = await tg.tenantToken(shopA);
    const forged = Buffer.from(`2026-01-01T00:00:00.000Z|${shopB}`).toString("base64url");
    await expectError(await get(`/reports/reconciliation/differences?cursor=${forged}`, token), 400, "validation_failed");
    await expectError(await get("/reports/reconciliation/differences?cursor=not-a-cursor", token), 400, "validation_failed");
  });
});

describe("GET /admin/reports/reconciliation/differences", () => {
  it("pages every tenant's, or one's; a tenant's token is refused", async () => {
    const every = await everyPage("/admin/reports/reconciliation/differences?limit=10", admin);
    expect(every.data).toHaveLength(25);
    expect(new Set(every.data.map((d) => d.tenantId))).toEqual(new Set([shopA, shopB]));
    const onlyB = await everyPage(`/admin/reports/reconciliation/differences?tenantId=${shopB}`, admin);
    expect(onlyB.data.map((d) => d.tenantId)).toEqual([shopB, shopB]);
    expect((await get("/admin/reports/reconciliation/differences", await tg.tenantToken(shopA))).status).toBe(403);
  });
});
