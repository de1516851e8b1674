/**
 * Two gateways append to one chain at once (`audit-log/entry.ts`, "One statement"): with no advisory lock, the
 * chain's head row is what serialises them, statement by statement. On the server pass each gateway has a
 * connection pool of its own on one database (so their statements really run at once on the server; with
 * `scripts/with-pgbouncer.ts`, through PgBouncer in transaction mode); on the embedded pass both share the one
 * PGlite, each with its own group commit. Either way the chain comes out one: every entry once, `seq` 1 to n with
 * no gap nor twin, each following the one before it, its head the last, and `passerelle audit`'s check finds
 * nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { Kysely } from "kysely";
import { openDatabase, type DatabaseHandle } from "../../../src/db/connect.ts";
import { migrateToLatest } from "../../../src/db/migrate.ts";
import type { Database } from "../../../src/db/schema.ts";
import { appendAuditEntry, auditLogChainBreaks, type AuditEntry, type NewAuditEntry } from "../../../src/services/audit-log/mod.ts";
import { createGatewayCaches } from "../../../src/services/caches.ts";
import { createScratchDatabase, createTestDatabase, expectInvariantsHold, type ScratchDatabase, type TestDatabase } from "../../support/db.ts";

const serverUrl = process.env.DATABASE_URL;
let scratch: ScratchDatabase | undefined;
let handles: DatabaseHandle[] = [];
let embedded: TestDatabase | undefined;
/** Each gateway's database: two pools on the server, the one PGlite twice embedded. */
let pools: Kysely<Database>[] = [];

beforeAll(async () => {
  if (serverUrl) {
    scratch = await createScratchDatabase(serverUrl);
    handles = [await openDatabase({ driver: "postgres", url: scratch.url, max: 5 }), await openDatabase({ driver: "postgres", url: scratch.url, max: 5 })];
    await migrateToLatest(handles[0]!.db);
    pools = handles.map((handle) => handle.db);
  } else {
    embedded = await createTestDatabase();
    pools = [embedded.db, embedded.db];
  }
}, 60_000);

afterAll(async () => {
  if (handles[0]) await expectInvariantsHold(handles[0].db);
  for (const handle of handles) await handle.close();
  await scratch?.drop();
  await embedded?.dispose();
});

const TENANT = "ten_01CONCURRENTAPPENDS000000";
const CHAIN = `${TENANT}:live`;

const entry = (gateway: number, caller: number, n: number): NewAuditEntry => ({
  tenantId: TENANT,
  environment: "live",
  actorType: "key",
  actorId: `key_${gateway}`,
  actorRole: null,
  action: "payments.create",
  targets: [`pay_${gateway}_${caller}_${n}`],
  input: { amount: 100 + n, gateway, caller },
  changes: null,
  outcome: "success",
  address: `10.0.${gateway}.${caller}`,
  userAgent: null,
  requestId: `req-${gateway}-${caller}-${n}`,
});

describe("appends to one chain from two gateways at once", () => {
  it("make one unbroken chain: every entry once, in seq order, each following the one before", async () => {
    const CALLERS = 8;
    const EACH = 25;
    // Each gateway: its own caches (so its own group commit), its own pool; eight callers appending in turn.
    const gateways = pools.map((db) => ({ db, now: () => new Date(), caches: createGatewayCaches() }));
    const stored: AuditEntry[] = (
      await Promise.all(
        gateways.flatMap((deps, g) =>
          Array.from({ length: CALLERS }, async (_, caller) => {
            const mine: AuditEntry[] = [];
            for (let n = 0; n < EACH; n++) mine.push(await appendAuditEntry(deps, entry(g, caller, n)));
            return mine;
          }),
        ),
      )
    ).flat();
    const total = gateways.length * CALLERS * EACH;
    expect(stored.length).toBe(total);

    const db = pools[0]!;
    const rows = await db.selectFrom("audit_log").select(["id", "seq", "prev_hash", "hash", "request_id"]).where("chain", "=", CHAIN).orderBy("seq").execute();
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(new Set(rows.map((r) => r.request_id)).size).toBe(total);
    expect(rows[0]!.prev_hash).toBe("");
    for (let i = 1; i < rows.length; i++) expect(rows[i]!.prev_hash).toBe(rows[i - 1]!.hash);
    // What each caller was told is what the chain holds.
    const byId = new Map(rows.map((r) => [r.id, r]));
    for (const s of stored) expect([Number(byId.get(s.id)?.seq), byId.get(s.id)?.hash]).toEqual([s.seq, s.hash]);
    const head = await db.selectFrom("audit_chain_heads").select(["seq", "hash"]).where("chain", "=", CHAIN).executeTakeFirstOrThrow();
    expect([Number(head.seq), head.hash]).toEqual([total, rows.at(-1)!.hash]);
    expect(await auditLogChainBreaks({ db }, "live")).toEqual([]);
    // The two gateways' entries are interleaved in the chain: they did append at once.
    const gatewayOf = rows.map((r) => r.request_id.split("-")[1]);
    expect(gatewayOf.filter((g, i) => i > 0 && g !== gatewayOf[i - 1]).length).toBeGreaterThan(1);
  }, 60_000);
});
