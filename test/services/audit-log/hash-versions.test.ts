/**
 * The audit log's two hash versions (migration 0036, `audit-log/entry.ts`): entries written before the migration
 * (version 1, the SHA-256 of all their fields) and after it (version 2, `sha256(prevHash ‖ contentHash)` made by
 * the database) verify as one chain; a chain goes on from its last entry, or from the retention's cut when it
 * took them all, and still verifies after a cut made since; a changed entry of version 2, one passed off as
 * version 1, and entries removed from a chain's end are found; and the hash is what docs/team.md tells an
 * auditor to compute. On the test's driver (PGlite or PostgreSQL).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHash } from "node:crypto";
import { sql } from "kysely";
import { auditChainHeadsMigration } from "../../../src/db/migrations/0036_audit_chain_heads.ts";
import type { Environment } from "../../../src/db/schema.ts";
import type { Deps } from "../../../src/services/deps.ts";
import { type AuditEntry, appendAuditEntry, auditLogChainBreaks, canonicalJson, type NewAuditEntry } from "../../../src/services/audit-log/mod.ts";
import { createGatewayCaches } from "../../../src/services/caches.ts";
import { pruneOldRows } from "../../../src/services/retention/prune.ts";
import { createTestDatabase, type TestDatabase } from "../../support/db.ts";

let database: TestDatabase;

beforeAll(async () => {
  database = await createTestDatabase();
}, 60_000);

afterAll(() => database?.dispose());

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

const DAY = 86_400_000;
const T0 = Date.parse("2026-01-01T00:00:00.000Z");

const entry = (action: string, tenantId: string | null = null, environment: Environment = "sandbox"): NewAuditEntry => ({
  tenantId,
  environment,
  actorType: tenantId ? "key" : "operator",
  actorId: tenantId ? "key_01" : "operator",
  actorRole: tenantId ? null : "admin",
  action,
  targets: [`pay_${action}`],
  input: { amount: 500, note: action },
  changes: null,
  outcome: "success",
  address: "10.0.0.1",
  userAgent: "curl/8",
  requestId: `req-${action}`,
});

/**
 * Writes an entry as the gateway did before migration 0036 (`appendBatch` at 3522e08): its hash the SHA-256 of
 * the canonical JSON of every field, `prevHash` included — computed here, not by the code under test.
 */
async function writeVersion1(chain: string, seq: number, prevHash: string, fields: NewAuditEntry, at: number): Promise<string> {
  const unhashed = { ...fields, id: `aud_v1_${chain.replace(/\W/g, "")}_${seq}`, chain, seq, at: new Date(at).toISOString(), prevHash };
  const hash = sha256(canonicalJson(unhashed));
  await sql`insert into audit_log (id, chain, seq, at, tenant_id, environment, actor_type, actor_id, actor_role, action, targets, input, changes,
                                   outcome, address, user_agent, request_id, prev_hash, hash)
            values (${unhashed.id}, ${chain}, ${seq}, ${unhashed.at}::timestamptz, ${fields.tenantId}, ${fields.environment}, ${fields.actorType},
                    ${fields.actorId}, ${fields.actorRole}, ${fields.action}, ${fields.targets}::jsonb, ${fields.input}::jsonb,
                    null, ${fields.outcome}, ${fields.address}, ${fields.userAgent}, ${fields.requestId}, ${prevHash}, ${hash})`.execute(database.db);
  return hash;
}

/** The retention's purge, as `pruneOldRows` runs it, with every entry older than `retentionMs` at `now` past it. */
function prune(now: number, retentionMs: number) {
  const far = 1_000 * 365 * DAY;
  const config = {
    retention: {
      eventsMs: far,
      deliveriesMs: far,
      ipnsMs: far,
      routeOutcomesMs: far,
      idempotencyKeysMs: far,
      auditLogMs: retentionMs,
      everyMs: 0,
      batchSize: 100,
    },
  } as unknown as Deps["config"];
  return pruneOldRows({ db: database.db, now: () => new Date(now), config });
}

const chainRows = (chain: string) =>
  database.db.selectFrom("audit_log").select(["seq", "prev_hash", "hash", "hash_version"]).where("chain", "=", chain).orderBy("seq").execute();

const OPERATOR = "operator:sandbox";
const SHOP = "ten_01HASHVERSIONS0000000000:sandbox";
const SHOP_ID = "ten_01HASHVERSIONS0000000000";

describe("the audit log's hash versions", () => {
  it("verifies entries written before migration 0036 and after it as one chain, and goes on from a cut made before or after", async () => {
    const db = database.db;
    await auditChainHeadsMigration.down!(db);

    // Before the migration: three entries on the operator's chain, two on a shop's, which retention then took.
    let prev = "";
    const operatorV1: string[] = [];
    for (let seq = 1; seq <= 3; seq++) operatorV1.push((prev = await writeVersion1(OPERATOR, seq, prev, entry(`old.${seq}`), T0 + seq * DAY)));
    prev = "";
    for (let seq = 1; seq <= 2; seq++) prev = await writeVersion1(SHOP, seq, prev, entry(`old.shop.${seq}`, SHOP_ID), T0 + (seq * DAY) / 2);
    // Older than T0 + 1.5 days (T0 + 10 days, a retention of 8.5): the operator's first entry and both of the shop's.
    const report = await prune(T0 + 10 * DAY, 8.5 * DAY);
    expect(report.audit_log.pruned).toBe(3);

    await auditChainHeadsMigration.up(db);
    const heads = await db.selectFrom("audit_chain_heads").select(["chain", "seq", "hash"]).orderBy("chain").execute();
    expect(heads.map((h) => [h.chain, Number(h.seq), h.hash])).toEqual([
      [OPERATOR, 3, operatorV1[2]!],
      [SHOP, 2, prev],
    ]);
    expect(await auditLogChainBreaks({ db }, "sandbox")).toEqual([]);

    // After it: appended by the gateway, concurrently (one alone, then two together), and one on the emptied chain.
    let now = T0 + 20 * DAY;
    const deps = { db, now: () => new Date(now), caches: createGatewayCaches() };
    const appended = await Promise.all([
      appendAuditEntry(deps, entry("new.1")),
      appendAuditEntry(deps, entry("new.2")),
      appendAuditEntry(deps, entry("new.3")),
      appendAuditEntry(deps, entry("new.shop.1", SHOP_ID)),
    ]);
    expect(appended.map((e) => [e.seq, e.hashVersion])).toEqual([
      [4, 2],
      [5, 2],
      [6, 2],
      [3, 2],
    ]);
    expect(appended[0]!.prevHash).toBe(operatorV1[2]!);
    expect(appended[3]!.prevHash).toBe(prev);
    const operator = await chainRows(OPERATOR);
    expect(operator.map((r) => [Number(r.seq), r.hash_version])).toEqual([
      [2, 1],
      [3, 1],
      [4, 2],
      [5, 2],
      [6, 2],
    ]);
    for (let i = 1; i < operator.length; i++) expect(operator[i]!.prev_hash).toBe(operator[i - 1]!.hash);
    expect(await auditLogChainBreaks({ db }, "sandbox")).toEqual([]);

    // A cut after the migration, through version 2 entries: everything before T0 + 20 days + 1 ms (the operator's 2
    // to 6, the shop's 3), not the operator's 7.
    now = T0 + 21 * DAY;
    await appendAuditEntry(deps, entry("new.4"));
    expect((await prune(T0 + 30 * DAY + 1, 10 * DAY)).audit_log.pruned).toBe(6);
    expect((await chainRows(OPERATOR)).map((r) => Number(r.seq))).toEqual([7]);
    expect(await chainRows(SHOP)).toEqual([]);
    expect(await auditLogChainBreaks({ db }, "sandbox")).toEqual([]);
    // The chains go on from there: the operator's after its 7, the shop's from its head, its every entry gone.
    now = T0 + 40 * DAY;
    const later = await appendAuditEntry(deps, entry("new.5"));
    expect(later.prevHash).toBe((await chainRows(OPERATOR))[0]!.hash);
    expect((await appendAuditEntry(deps, entry("new.shop.2", SHOP_ID))).seq).toBe(4);
    expect(later.seq).toBe(8);
    expect(await auditLogChainBreaks({ db }, "sandbox")).toEqual([]);
  });

  it("finds a changed entry of version 2, one passed off as version 1, and entries removed from a chain's end", async () => {
    const db = database.db;
    const deps = { db, now: () => new Date(), caches: createGatewayCaches() };
    const chain = "ten_01HASHVERSIONSTAMPER0000:live";
    const tenant = "ten_01HASHVERSIONSTAMPER0000";
    const stored: AuditEntry[] = [];
    for (let i = 0; i < 4; i++) stored.push(await appendAuditEntry(deps, entry(`tamper.${i}`, tenant, "live")));
    expect(await auditLogChainBreaks({ db }, "live")).toEqual([]);

    // A superuser can turn the trigger off: the chain is what tells.
    const behindTheTrigger = async (change: () => Promise<unknown>) => {
      await sql`alter table audit_log disable trigger audit_log_append_only`.execute(db);
      try {
        await change();
      } finally {
        await sql`alter table audit_log enable trigger audit_log_append_only`.execute(db);
      }
    };
    await behindTheTrigger(() => db.updateTable("audit_log").set({ outcome: "forbidden" }).where("id", "=", stored[1]!.id).execute());
    expect(await auditLogChainBreaks({ db }, "live")).toEqual([
      { chain, seq: 2, id: stored[1]!.id, message: `entry 2 (${stored[1]!.id}) does not match its hash: it was changed` },
    ]);
    await behindTheTrigger(() => db.updateTable("audit_log").set({ outcome: "success" }).where("id", "=", stored[1]!.id).execute());
    expect(await auditLogChainBreaks({ db }, "live")).toEqual([]);

    // Its hash made again by version 1's definition, and the entry called version 1: not after a version 2.
    const { hash: _, hashVersion: __, ...fields } = stored[2]!;
    await behindTheTrigger(() =>
      db
        .updateTable("audit_log")
        .set({ hash_version: 1, hash: sha256(canonicalJson(fields)) })
        .where("id", "=", stored[2]!.id)
        .execute(),
    );
    const downgraded = await auditLogChainBreaks({ db }, "live");
    expect(downgraded.map((b) => [b.seq, b.message])).toEqual([
      [3, `entry 3 (${stored[2]!.id}) is of hash version 1 after one of version 2`],
      [4, `entry 4 (${stored[3]!.id}) does not follow the hash of the entry before it`],
    ]);
    await behindTheTrigger(() => db.updateTable("audit_log").set({ hash_version: 2, hash: stored[2]!.hash }).where("id", "=", stored[2]!.id).execute());

    // The last entry removed: nothing before it tells, its head does.
    await behindTheTrigger(() => db.deleteFrom("audit_log").where("id", "=", stored[3]!.id).execute());
    expect(await auditLogChainBreaks({ db }, "live")).toEqual([
      { chain, seq: 4, id: "", message: "the chain's head is entry 4 but its last entry is 3: entries are missing at its end" },
    ]);
    database.expectedViolations = [`audit_log_chain_broken ${chain} 4`];
  });

  it("is the hash docs/team.md tells an auditor to compute, in the gateway and in the database alike", async () => {
    const db = database.db;
    const deps = { db, now: () => new Date("2026-03-01T12:00:00.000Z"), caches: createGatewayCaches() };
    const first = await appendAuditEntry(deps, entry("by-hand.1", null, "live"));
    const second = await appendAuditEntry(deps, entry("by-hand.2", null, "live"));
    for (const e of [first, second]) {
      // By hand: drop seq, prevHash, hash and hashVersion; JSON with sorted keys, no spaces; SHA-256 in hex.
      const { seq: _s, prevHash, hash, hashVersion, ...content } = e;
      expect(hashVersion).toBe(2);
      const contentHash = sha256(canonicalJson(content));
      expect(Object.keys(content).sort()).toEqual(
        [
          "action",
          "actorId",
          "actorRole",
          "actorType",
          "address",
          "at",
          "chain",
          "changes",
          "environment",
          "id",
          "input",
          "outcome",
          "requestId",
          "targets",
          "tenantId",
          "userAgent",
        ].sort(),
      );
      expect(hash).toBe(sha256(prevHash + contentHash));
      const { rows } = await sql<{ link: string }>`select encode(sha256(convert_to(${prevHash} || ${contentHash}, 'UTF8')), 'hex') as link`.execute(db);
      expect(rows[0]!.link).toBe(hash);
    }
    expect(second.prevHash).toBe(first.hash);
  });
});
