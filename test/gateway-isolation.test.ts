/**
 * Two gateways in one process share nothing (issue 14, point 4): what each keeps in memory — its caches
 * (`deps.caches`) and its compiled statements (`db/precompiled.ts`, with its database) — is its own. The
 * two gateways below hold the same tenant id and the same provider transaction id in different states, so
 * an answer cached by one and served by the other would show.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ulid } from "ulid";
import { compiledStatementsOf, precompile } from "../src/db/precompiled.ts";
import type { GatewayCaches } from "../src/services/caches.ts";
import { openCredentials, putCredentials } from "../src/services/credentials/provider-credentials.ts";
import { insertDirectPayment } from "./support/db.ts";
import { startTestGateway, type TestGateway } from "./support/gateway.ts";

let a: TestGateway;
let b: TestGateway;
const tenantId = `ten_${ulid()}`;
const transactionId = 7_700_001;

beforeAll(async () => {
  [a, b] = await Promise.all([startTestGateway(), startTestGateway()]);
  // A payment inserted already refunded, as no path of the gateway writes one (it was never credited): not audited.
  b.database.audited = false;
  for (const tg of [a, b]) await tg.gateway.deps.db.insertInto("tenants").values({ id: tenantId, name: "Twin", store_name: "Twin Store" }).execute();
}, 60_000);
afterAll(() => Promise.all([a?.close(), b?.close()]), 30_000);

async function isApproved(tg: TestGateway): Promise<unknown> {
  const response = await tg.request(`/providerA/transaction/${transactionId}/is-approved`, {
    headers: { authorization: `Bearer ${await tg.tenantToken(tenantId)}` },
  });
  expect(response.status).toBe(200);
  return response.json();
}

describe("two gateways in one process", () => {
  it("hold distinct caches, one object per field", () => {
    const [ours, theirs] = [a.gateway.deps.caches, b.gateway.deps.caches];
    expect(ours).not.toBe(theirs);
    const fields = Object.keys(ours) as (keyof GatewayCaches)[];
    expect(fields.length).toBeGreaterThan(0);
    for (const field of fields) expect(ours[field], field).not.toBe(theirs[field]);
    expect(compiledStatementsOf(a.gateway.deps.db)).not.toBe(compiledStatementsOf(b.gateway.deps.db));
  });

  it("answer a transaction from their own database: a final read cached by one is not served by the other", async () => {
    await insertDirectPayment(a.gateway.deps.db, tenantId, transactionId, { state: "succeeded", provider_status: "approved" });
    await insertDirectPayment(b.gateway.deps.db, tenantId, transactionId, { state: "refunded", provider_status: "refunded" });
    expect(await isApproved(a)).toEqual({ transactionId, approved: true, status: "approved" });
    expect(a.gateway.deps.caches.finalReads.final.size).toBe(1);
    expect(b.gateway.deps.caches.finalReads.final.size).toBe(0);
    expect(await isApproved(b)).toEqual({ transactionId, approved: false, status: "refunded" });
    expect(await isApproved(a)).toEqual({ transactionId, approved: true, status: "approved" });
  });

  it("open provider credentials from their own database: a set cached by one is not seen by the other", async () => {
    const lookup = { tenantId, provider: "providerB" as const, environment: "sandbox" as const };
    await putCredentials(a.gateway.deps, { ...lookup, fields: { masterKey: "mk_a", privateKey: "pk_a", token: "tk_a" } });
    expect((await openCredentials(a.gateway.deps, lookup))?.fields.masterKey).toBe("mk_a");
    expect(a.gateway.deps.caches.credentials.size).toBe(1);
    expect(await openCredentials(b.gateway.deps, lookup)).toBeNull();
    await putCredentials(b.gateway.deps, { ...lookup, fields: { masterKey: "mk_b", privateKey: "pk_b", token: "tk_b" } });
    expect((await openCredentials(b.gateway.deps, lookup))?.fields.masterKey).toBe("mk_b");
    expect((await openCredentials(a.gateway.deps, lookup))?.fields.masterKey).toBe("mk_a");
  });

  it("compile a statement into the database it runs on, its handle and transactions sharing one compiled form", async () => {
    const storeName = precompile<{ id: string }>()((db, p) => db.selectFrom("tenants").select("store_name").where("id", "=", p.id));
    const [ours, theirs] = [compiledStatementsOf(a.gateway.deps.db), compiledStatementsOf(b.gateway.deps.db)];
    const [oursBefore, theirsBefore] = [ours.size, theirs.size];
    expect((await storeName(a.gateway.deps.db, { id: tenantId })).rows).toEqual([{ store_name: "Twin Store" }]);
    expect([ours.size, theirs.size]).toEqual([oursBefore + 1, theirsBefore]);
    await a.gateway.deps.db.transaction().execute(async (tx) => {
      expect(compiledStatementsOf(tx)).toBe(ours);
      expect((await storeName(tx, { id: tenantId })).rows).toHaveLength(1);
    });
    expect(ours.size).toBe(oursBefore + 1);
    expect((await storeName(b.gateway.deps.db, { id: tenantId })).rows).toEqual([{ store_name: "Twin Store" }]);
    expect([ours.size, theirs.size]).toEqual([oursBefore + 1, theirsBefore + 1]);
  });

  it("share a gateway's caches with deps spread from it (what tests that build deps do)", () => {
    const spread = { ...a.gateway.deps, now: () => new Date(0) };
    expect(spread.caches).toBe(a.gateway.deps.caches);
  });
});
