/**
 * The read path's per-process caches: a final provider A transaction is served for at most
 * FINAL_READ_CACHE_MS without a query, keyed by tenant, environment and id; concurrent misses (of a
 * transaction or of a tenant) share one query. Queries are counted with a Kysely plugin.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { KyselyPlugin } from "kysely";
import { NotFoundError } from "../../../src/errors.ts";
import type { Deps } from "../../../src/services/deps.ts";
import { applyDirectPaymentUpdate } from "../../../src/services/direct-payments/apply-update.ts";
import { FINAL_READ_CACHE_MS, getTransactionStatus, isTransactionApproved } from "../../../src/services/direct-payments/read-transaction.ts";
import { REFRESH_FLOOR_MS } from "../../../src/services/direct-payments/refresh.ts";
import { createTenantFinder } from "../../../src/services/tenants/find-tenant.ts";
import { insertDirectPayment } from "../../support/db.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";

let tg: TestGateway;
let tenantA: string;
let tenantB: string;

beforeAll(async () => {
  tg = await startTestGateway();
  tenantA = await tg.insertTenant();
  tenantB = await tg.insertTenant();
}, 30_000);
afterAll(() => tg.close());

/** The gateway's dependencies on a database handle of their own that counts the queries sent. */
function countingDeps(): { deps: Deps; queries: () => number } {
  let count = 0;
  const counter: KyselyPlugin = {
    transformQuery: (args) => {
      count++;
      return args.node;
    },
    transformResult: async (args) => args.result,
  };
  return { deps: { ...tg.gateway.deps, db: tg.gateway.deps.db.withPlugin(counter) }, queries: () => count };
}

let nextTransactionId = 9_000;
async function insertPayment(
  tenantId: string,
  state: "pending" | "succeeded" | "refunded",
  providerStatus: string,
): Promise<{ id: string; transactionId: number }> {
  const transactionId = nextTransactionId++;
  const { id } = await insertDirectPayment(tg.gateway.deps.db, tenantId, transactionId, {
    state,
    provider_status: providerStatus,
    description: "cached read",
    // Read by the provider within the second: a pending row is served as stored, no provider call.
    provider_synced_at: new Date(Date.now() + 60_000),
  });
  return { id, transactionId };
}

describe("final transaction reads", () => {
  it("serve a final answer from the process for FINAL_READ_CACHE_MS, then read it again", async () => {
    const { deps, queries } = countingDeps();
    const { id, transactionId } = await insertPayment(tenantA, "succeeded", "approved");
    const lookup = { tenantId: tenantA, environment: "sandbox" as const, transactionId };
    expect(await isTransactionApproved(deps, lookup)).toEqual({ transactionId, approved: true, status: "approved" });
    const afterFirst = queries();
    expect(FINAL_READ_CACHE_MS).toBe(REFRESH_FLOOR_MS);
    expect((await getTransactionStatus(deps, lookup)).status).toBe("approved");
    expect(await isTransactionApproved(deps, lookup)).toEqual({ transactionId, approved: true, status: "approved" });
    expect(queries()).toBe(afterFirst);

    // The state moves forward (a refund applied by another instance): seen once the bound has passed.
    await tg.gateway.deps.db
      .updateTable("payments")
      .set({ state: "refunded", provider_status: "refunded" } as never)
      .where("id", "=", id)
      .execute();
    await Bun.sleep(FINAL_READ_CACHE_MS + 50);
    expect(await isTransactionApproved(deps, lookup)).toEqual({ transactionId, approved: false, status: "refunded" });
    expect(queries()).toBeGreaterThan(afterFirst);
  });

  it("drop the process's copy when this process applies a change: the next read shows it at once", async () => {
    const { deps } = countingDeps();
    const { id, transactionId } = await insertPayment(tenantA, "succeeded", "approved");
    const lookup = { tenantId: tenantA, environment: "sandbox" as const, transactionId };
    expect((await isTransactionApproved(deps, lookup)).approved).toBe(true);
    const report = {
      providerPaymentId: String(transactionId),
      reference: null,
      providerStatus: "refunded",
      state: "refunded",
      errorCode: null,
      approvedAt: null,
    } as const;
    await applyDirectPaymentUpdate(deps, id, { kind: "provider", report });
    expect(await isTransactionApproved(deps, lookup)).toEqual({ transactionId, approved: false, status: "refunded" });
  });

  it("share one query among concurrent readers that miss together", async () => {
    const { deps, queries } = countingDeps();
    const { transactionId } = await insertPayment(tenantA, "succeeded", "approved");
    const lookup = { tenantId: tenantA, environment: "sandbox" as const, transactionId };
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? getTransactionStatus(deps, lookup) : isTransactionApproved(deps, lookup))));
    expect(answers.every((answer) => answer.status === "approved")).toBe(true);
    expect(queries()).toBe(1);
  });

  it("never cache a pending answer", async () => {
    const { deps, queries } = countingDeps();
    const { transactionId } = await insertPayment(tenantA, "pending", "pending");
    const lookup = { tenantId: tenantA, environment: "sandbox" as const, transactionId };
    expect((await getTransactionStatus(deps, lookup)).status).toBe("pending");
    const afterFirst = queries();
    expect((await getTransactionStatus(deps, lookup)).status).toBe("pending");
    expect(queries()).toBe(afterFirst * 2);
  });

  it("keep tenants and environments apart: a cached transaction is still 404 to another tenant or environment", async () => {
    const { deps } = countingDeps();
    const { transactionId } = await insertPayment(tenantA, "succeeded", "approved");
    expect((await isTransactionApproved(deps, { tenantId: tenantA, environment: "sandbox", transactionId })).approved).toBe(true);
    await expect(isTransactionApproved(deps, { tenantId: tenantB, environment: "sandbox", transactionId })).rejects.toBeInstanceOf(NotFoundError);
    await expect(getTransactionStatus(deps, { tenantId: tenantA, environment: "live", transactionId })).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("the tenant finder", () => {
  it("shares one query among concurrent misses, and a forget drops a read in flight", async () => {
    const { deps, queries } = countingDeps();
    const finder = createTenantFinder(deps);
    const found = await Promise.all(Array.from({ length: 20 }, () => finder.find(tenantA)));
    expect(found.every((tenant) => tenant?.id === tenantA)).toBe(true);
    expect(queries()).toBe(1);

    finder.forget(tenantA);
    const before = finder.find(tenantA); // in flight
    finder.forget(tenantA); // e.g. this process disabled the tenant meanwhile
    await tg.gateway.deps.db.updateTable("tenants").set({ disabled: true }).where("id", "=", tenantA).execute();
    await before;
    expect((await finder.find(tenantA))?.disabled).toBe(true);
    await tg.gateway.deps.db.updateTable("tenants").set({ disabled: false }).where("id", "=", tenantA).execute();
  });
});
