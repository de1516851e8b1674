/**
 * Audit log appends share their chain's statement (`audit-log/entry.ts`, "Group commit"): entries of one chain
 * that come while its append runs are appended together by the next one, in the order they came, and the chain
 * stays whole (`auditLogChainBreaks`); a lone entry has a statement of its own — one, autocommitted, no
 * transaction; an entry the database refuses fails alone. On the test's driver (PGlite or PostgreSQL); the
 * statements are logged (`statement-log.ts`).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { entryOf } from "../../../src/services/audit-log/entry.ts";
import { appendAuditEntry, auditLogChainBreaks, type NewAuditEntry } from "../../../src/services/audit-log/mod.ts";
import { createGatewayCaches } from "../../../src/services/caches.ts";
import { createTestDatabase, type TestDatabase } from "../../support/db.ts";
import { logStatements, type StatementLog } from "../../support/statement-log.ts";

let database: TestDatabase;
let sent: StatementLog;

beforeAll(async () => {
  database = await createTestDatabase();
  sent = logStatements(database);
}, 30_000);

afterAll(() => database?.dispose());

/** The statements sent, an append (`audit-log/entry.ts`'s one statement) as `append`. */
const sentKinds = () => sent.statements.map((statement) => (/^with head as \(\s*insert into audit_chain_heads/.test(statement) ? "append" : statement));

const entry = (action: string, input: Record<string, unknown> = {}): NewAuditEntry => ({
  tenantId: null,
  environment: "sandbox",
  actorType: "operator",
  actorId: "operator",
  actorRole: "admin",
  action,
  targets: [],
  input,
  changes: null,
  outcome: "success",
  address: "local",
  userAgent: null,
  requestId: `req-${action}`,
});

describe("audit log group commit", () => {
  it("appends the entries that came while the chain's append ran in one more statement, in order, the chain whole", async () => {
    const deps = { db: sent.database.db, now: () => new Date(), caches: createGatewayCaches() };
    sent.statements.length = 0;
    const stored = await Promise.all(Array.from({ length: 12 }, (_, i) => appendAuditEntry(deps, entry(`tenants.create.${i}`))));
    // The first went at once, alone; the eleven that came meanwhile went together in the next: one statement each.
    expect(sentKinds()).toEqual(["append", "append"]);
    expect(stored.map((s) => s.seq)).toEqual(Array.from({ length: 12 }, (_, i) => i + 1));
    expect(stored.map((s) => s.action)).toEqual(Array.from({ length: 12 }, (_, i) => `tenants.create.${i}`));
    for (const [i, s] of stored.entries()) expect(s.prevHash).toBe(i === 0 ? "" : stored[i - 1]!.hash);
    const rows = await database.db
      .selectFrom("audit_log")
      .select(["seq", "hash", "request_id"])
      .where("chain", "=", "operator:sandbox")
      .orderBy("seq")
      .execute();
    expect(rows.map((r) => [Number(r.seq), r.hash, r.request_id])).toEqual(stored.map((s) => [s.seq, s.hash, s.requestId]));
    expect(await auditLogChainBreaks({ db: database.db }, "sandbox")).toEqual([]);
    // Nothing is left waiting.
    expect(deps.caches.auditAppends.size).toBe(0);

    // A lone entry later: a statement of its own, after the others.
    sent.statements.length = 0;
    expect((await appendAuditEntry(deps, entry("tenants.update"))).seq).toBe(13);
    expect(sentKinds()).toEqual(["append"]);
  });

  it("fails only the entry the database refuses when it came with others", async () => {
    const deps = { db: sent.database.db, now: () => new Date(), caches: createGatewayCaches() };
    const before = Number(
      (
        await database.db
          .selectFrom("audit_log")
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
    const results = await Promise.allSettled([
      appendAuditEntry(deps, entry("webhooks.create.a")),
      appendAuditEntry(deps, entry("webhooks.create.b")),
      // A NUL character PostgreSQL cannot store in text: this entry, and only it, is refused.
      appendAuditEntry(deps, entry("webhooks.create.c", { url: "bad\u0000" })),
      appendAuditEntry(deps, entry("webhooks.create.d")),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    const after = await database.db
      .selectFrom("audit_log")
      .select(["action"])
      .where("seq", ">", before)
      .where("chain", "=", "operator:sandbox")
      .orderBy("seq")
      .execute();
    expect(after.map((r) => r.action)).toEqual(["webhooks.create.a", "webhooks.create.b", "webhooks.create.d"]);
    expect(await auditLogChainBreaks({ db: database.db }, "sandbox")).toEqual([]);
  });
  it("stores every field of every entry as it was hashed, whatever the batch's size", async () => {
    const deps = { db: sent.database.db, now: () => new Date(), caches: createGatewayCaches() };
    const full = (i: number): NewAuditEntry => ({
      tenantId: "ten_01JZ0000000000000000000000",
      environment: "live",
      actorType: i % 2 === 0 ? "key" : "person",
      actorId: `actor-${i}`,
      actorRole: i % 2 === 0 ? null : "developer",
      action: `payments.create.${i}`,
      targets: [`pay_${i}`, `evt_${i}`],
      input: { amount: 500 + i, customer: { phone: "+22997000000", tags: ["a", i] }, note: null },
      changes: i % 3 === 0 ? null : { state: { before: "pending", after: "succeeded" } },
      outcome: i % 4 === 0 ? "provider_refused" : "success",
      address: `10.0.0.${i}`,
      userAgent: i === 0 ? null : "x".repeat(290 + i),
      requestId: `req-full-${i}`,
    });
    // One alone, then bursts of 1, 3 and 7: the first of a burst goes alone, the rest together (1, 2 and 6 rows).
    const stored = [await appendAuditEntry(deps, full(0))];
    for (const size of [1, 3, 7]) {
      const from = stored.length;
      sent.statements.length = 0;
      stored.push(...(await Promise.all(Array.from({ length: size }, (_, i) => appendAuditEntry(deps, full(from + i))))));
      expect(sentKinds()).toEqual(size === 1 ? ["append"] : ["append", "append"]);
    }
    const rows = await database.db.selectFrom("audit_log").selectAll().where("chain", "=", "ten_01JZ0000000000000000000000:live").orderBy("seq").execute();
    expect(rows.map(entryOf)).toEqual(stored);
    expect(stored.map((s) => s.seq)).toEqual(stored.map((_, i) => i + 1));
    // The user agent is kept to 300 characters; the others as given.
    expect(stored.map((s) => s.userAgent?.length ?? null)).toEqual([null, 291, 292, 293, 294, 295, 296, 297, 298, 299, 300, 300]);
    expect(stored[4]!.input).toEqual({ amount: 504, customer: { phone: "+22997000000", tags: ["a", 4] }, note: null });
    expect(await auditLogChainBreaks({ db: database.db }, "live")).toEqual([]);
  });
});
