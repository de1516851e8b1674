import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sql, type Kysely } from "kysely";
import { ulid } from "ulid";
import { openDatabase } from "../../src/db/connect.ts";
import { DataDirInUseError } from "../../src/db/data-dir-lock.ts";
import { MigrationError, migrateToLatest } from "../../src/db/migrate.ts";
import { migrations } from "../../src/db/migrations/index.ts";
import { loadOrBuildPgliteSnapshot } from "../../src/db/pglite-snapshot.ts";
import type { Database, NewIdempotencyKey, NewProviderCredentials } from "../../src/db/schema.ts";
import { SNAPSHOT_CACHE_DIR, createTestDatabase, type TestDatabase } from "../support/db.ts";
import { rejectionOf } from "../support/errors.ts";

const DRIVER = process.env.DATABASE_URL ? "postgres" : "pglite";
const HOOK_TIMEOUT = 60_000;

async function insertTenant(db: Kysely<Database>, rateLimit: { rps: number; burst: number } | null = null): Promise<string> {
  const id = `ten_${ulid()}`;
  await db.insertInto("tenants").values({ id, name: "Acme", store_name: "Acme Store", rate_limit: rateLimit }).execute();
  return id;
}

function credentialSet(tenantId: string, version: number, active = true): NewProviderCredentials {
  return {
    id: `crd_${ulid()}`,
    tenant_id: tenantId,
    provider: "providerB",
    environment: "sandbox",
    version,
    active,
    sealed: { masterKey: "v1:AAAA", privateKey: "v1:BBBB", token: "v1:CCCC" },
    masked: { masterKey: "…c3f9", privateKey: "…a1b2", token: "…9z8y", publicKey: null },
  };
}

/** Postgres error code of a rejected query (postgres.js: `code`; PGlite: `code` too). */
async function errorCode(promise: Promise<unknown>): Promise<string | undefined> {
  return ((await rejectionOf(promise, 10_000)) as { code?: string }).code;
}

describe(`database on ${DRIVER}`, () => {
  let database: TestDatabase;
  let db: Kysely<Database>;

  beforeAll(async () => {
    database = await createTestDatabase();
    db = database.db;
  }, HOOK_TIMEOUT);

  afterAll(async () => {
    await database?.dispose();
  }, HOOK_TIMEOUT);

  it("applies every migration, and a second run applies none", async () => {
    expect(database.driver).toBe(DRIVER);
    const rows = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(db);
    expect(rows.rows.map((r) => r.name)).toEqual(Object.keys(migrations));
    expect(await migrateToLatest(db)).toEqual({ applied: [] });
    for (const table of ["tenants", "api_keys", "tenant_secrets", "provider_credentials", "idempotency_keys"]) {
      const found = await sql<{ t: string | null }>`select to_regclass(${table}) as t`.execute(db);
      expect(found.rows[0]?.t).toBe(table);
    }
  });

  it(
    "answers ping while open, and refuses it once closed",
    async () => {
      expect(await database.ping()).toBeUndefined();
      const closed = await createTestDatabase();
      await closed.dispose();
      expect(await rejectionOf(closed.ping(), 10_000)).toBeInstanceOf(Error);
    },
    HOOK_TIMEOUT,
  );

  it("reads int8 and count(*) as numbers", async () => {
    await insertTenant(db);
    await insertTenant(db);
    const { n } = await db
      .selectFrom("tenants")
      .select((eb) => eb.fn.countAll<number>().as("n"))
      .executeTakeFirstOrThrow();
    expect(typeof n).toBe("number");
    expect(n).toBeGreaterThanOrEqual(2);
    const big = await sql<{ v: number }>`select ${9_007_199_254_740_991}::int8 as v`.execute(db);
    expect(big.rows[0]?.v).toBe(Number.MAX_SAFE_INTEGER);
    const small = await sql<{ v: number }>`select sum(x)::int8 as v from (values (1), (2)) as t(x)`.execute(db);
    expect(small.rows[0]?.v).toBe(3);
  });

  it("round-trips jsonb as an object, stored as a jsonb object (not a string)", async () => {
    const id = await insertTenant(db, { rps: 5, burst: 10 });
    const row = await db.selectFrom("tenants").select("rate_limit").where("id", "=", id).executeTakeFirstOrThrow();
    expect(row.rate_limit).toEqual({ rps: 5, burst: 10 });
    const raw = await sql<{ kind: string; rps: number }>`
      select jsonb_typeof(rate_limit) as kind, (rate_limit->>'rps')::int as rps from tenants where id = ${id}`.execute(db);
    expect(raw.rows[0]).toEqual({ kind: "object", rps: 5 });
  });

  it("stores any JSON value the same way on both drivers (a string is a JSON string)", async () => {
    const tenantId = await insertTenant(db);
    const now = new Date();
    const expiresAt = new Date(now.getTime() + 86_400_000);
    const values: [string, NewIdempotencyKey["response_body"], string][] = [
      ["k-object", { data: [1, "two", { three: true }], nextCursor: null }, "object"],
      ["k-array", [1, 2, 3], "array"],
      ["k-string", "plain text", "string"],
      ["k-number", 42, "number"],
    ];
    for (const [key, body] of values) {
      await db
        .insertInto("idempotency_keys")
        .values({
          tenant_id: tenantId,
          environment: "sandbox",
          method: "POST",
          path: "/providerA/direct-payment",
          key,
          request_hash: "abc",
          state: "done",
          locked_until: now,
          response_status: 201,
          response_body: body,
          response_headers: { "content-type": "application/json" },
          expires_at: expiresAt,
        })
        .execute();
    }
    for (const [key, body, kind] of values) {
      const row = await db
        .selectFrom("idempotency_keys")
        .select(["response_body", "response_headers", "locked_until", sql<string>`jsonb_typeof(response_body)`.as("kind")])
        .where("tenant_id", "=", tenantId)
        .where("key", "=", key)
        .executeTakeFirstOrThrow();
      expect(row.response_body).toEqual(body ?? null);
      expect(row.kind).toBe(kind);
      expect(row.response_headers).toEqual({ "content-type": "application/json" });
      expect(row.locked_until).toBeInstanceOf(Date);
      expect(row.locked_until.getTime()).toBe(now.getTime());
    }
  });

  it("rejects a second active credential set for the same tenant, provider and environment", async () => {
    const tenantId = await insertTenant(db);
    await db.insertInto("provider_credentials").values(credentialSet(tenantId, 1)).execute();
    expect(await errorCode(db.insertInto("provider_credentials").values(credentialSet(tenantId, 2)).execute())).toBe("23505");

    // Replacing: deactivate the old version, then the new one may be active; old versions stay.
    await db.transaction().execute(async (trx) => {
      await trx
        .updateTable("provider_credentials")
        .set({ active: false, deactivated_at: new Date() })
        .where("tenant_id", "=", tenantId)
        .where("active", "=", true)
        .execute();
      await trx.insertInto("provider_credentials").values(credentialSet(tenantId, 2)).execute();
    });
    const versions = await db
      .selectFrom("provider_credentials")
      .select(["version", "active", "sealed"])
      .where("tenant_id", "=", tenantId)
      .orderBy("version")
      .execute();
    expect(versions.map((v) => [v.version, v.active])).toEqual([
      [1, false],
      [2, true],
    ]);
    expect(versions[1]?.sealed).toEqual({ masterKey: "v1:AAAA", privateKey: "v1:BBBB", token: "v1:CCCC" });
    // The same version twice is rejected too, active or not.
    expect(
      await errorCode(
        db
          .insertInto("provider_credentials")
          .values(credentialSet(tenantId, 2, false))
          .execute(),
      ),
    ).toBe("23505");
  });

  it("enforces the check constraints", async () => {
    const tenantId = await insertTenant(db);
    const badEnvironment = sql`insert into api_keys (id, tenant_id, environment, prefix, secret_hash)
      values (${`key_${ulid()}`}, ${tenantId}, 'production', 'psk_', ${ulid()})`.execute(db);
    expect(await errorCode(badEnvironment)).toBe("23514");
    const unknownTenant = db
      .insertInto("api_keys")
      .values({ id: `key_${ulid()}`, tenant_id: "ten_missing", environment: "sandbox", prefix: "psk_", secret_hash: ulid() })
      .execute();
    expect(await errorCode(unknownTenant)).toBe("23503");
  });

  it("rolls a transaction back as a whole", async () => {
    const tenantId = `ten_${ulid()}`;
    const keyId = `key_${ulid()}`;
    const failing = db.transaction().execute(async (trx) => {
      await trx.insertInto("tenants").values({ id: tenantId, name: "Rollback", store_name: "Rollback" }).execute();
      await trx
        .insertInto("api_keys")
        .values({ id: keyId, tenant_id: tenantId, environment: "sandbox", prefix: "psk_sandbox_ab", secret_hash: ulid() })
        .execute();
      // Same secret hash as nothing else, but the same key id: a unique violation ends it.
      await trx
        .insertInto("api_keys")
        .values({ id: keyId, tenant_id: tenantId, environment: "sandbox", prefix: "psk_sandbox_ab", secret_hash: ulid() })
        .execute();
    });
    expect(await errorCode(failing)).toBe("23505");
    expect(await db.selectFrom("tenants").select("id").where("id", "=", tenantId).execute()).toEqual([]);
    expect(await db.selectFrom("api_keys").select("id").where("id", "=", keyId).execute()).toEqual([]);

    const thrown = db.transaction().execute(async (trx) => {
      await trx.insertInto("tenants").values({ id: tenantId, name: "Rollback", store_name: "Rollback" }).execute();
      throw new Error("changed my mind");
    });
    await expect(thrown).rejects.toThrow("changed my mind");
    expect(await db.selectFrom("tenants").select("id").where("id", "=", tenantId).execute()).toEqual([]);
  });

  it("runs concurrent transactions without mixing them up", async () => {
    const ids = Array.from({ length: 5 }, () => `ten_${ulid()}`);
    const results = await Promise.allSettled(
      ids.map((id, i) =>
        db.transaction().execute(async (trx) => {
          await trx
            .insertInto("tenants")
            .values({ id, name: `T${i}`, store_name: `T${i}` })
            .execute();
          if (i % 2 === 1) throw new Error(`abort ${i}`);
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "rejected", "fulfilled", "rejected", "fulfilled"]);
    const found = await db.selectFrom("tenants").select("id").where("id", "in", ids).execute();
    expect(found.map((r) => r.id).sort()).toEqual([ids[0]!, ids[2]!, ids[4]!].sort());
  });

  it("fails a broken migration with an error naming it, and applies nothing", async () => {
    const broken = {
      ...migrations,
      "9999_broken": {
        up: async (kdb: Kysely<any>) => {
          await kdb.schema.createTable("should_not_exist").addColumn("id", "text").execute();
          await sql`select * from no_such_table`.execute(kdb);
        },
      },
    };
    const error = await migrateToLatest(db, broken).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(MigrationError);
    expect((error as MigrationError).migrationName).toBe("9999_broken");
    expect((error as MigrationError).message).toContain("9999_broken");
    expect((error as MigrationError).message).toContain("no_such_table");
    const table = await sql<{ t: string | null }>`select to_regclass('should_not_exist') as t`.execute(db);
    expect(table.rows[0]?.t).toBeNull();
  });

  it(
    "gives each test database its own data",
    async () => {
      const others: TestDatabase[] = [];
      try {
        for (let i = 0; i < 3; i++) {
          others.push(await createTestDatabase());
        }
        const [a, b] = others as [TestDatabase, TestDatabase];
        const id = await insertTenant(a.db);
        expect(await b.db.selectFrom("tenants").select("id").where("id", "=", id).execute()).toEqual([]);
      } finally {
        await Promise.all(others.map((o) => o.dispose()));
      }
    },
    HOOK_TIMEOUT,
  );
});

describe("PGlite on disk", () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "passerelle-db-test-"));
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it(
    "starts a new data directory from the snapshot, then reopens it with its data",
    async () => {
      const dataDir = join(dir, "pglite");
      let built = false;
      const snapshot = async () => {
        built = true;
        return loadOrBuildPgliteSnapshot(SNAPSHOT_CACHE_DIR);
      };
      const first = await openDatabase({ driver: "pglite", dataDir, snapshot });
      expect(built).toBe(true);
      expect(await migrateToLatest(first.db)).toEqual({ applied: [] });
      const id = await insertTenant(first.db, { rps: 1, burst: 2 });
      await first.close();

      built = false;
      const again = await openDatabase({ driver: "pglite", dataDir, snapshot });
      try {
        expect(built).toBe(false);
        const row = await again.db.selectFrom("tenants").select("rate_limit").where("id", "=", id).executeTakeFirst();
        expect(row?.rate_limit).toEqual({ rps: 1, burst: 2 });
      } finally {
        await again.close();
      }
    },
    HOOK_TIMEOUT,
  );

  it(
    "refuses to open a data directory that a running process holds, and takes over a stale lock",
    async () => {
      const dataDir = join(dir, "locked");
      const snapshot = () => loadOrBuildPgliteSnapshot(SNAPSHOT_CACHE_DIR);
      const holder = await openDatabase({ driver: "pglite", dataDir, snapshot });
      try {
        await expect(openDatabase({ driver: "pglite", dataDir, snapshot })).rejects.toBeInstanceOf(DataDirInUseError);
      } finally {
        await holder.close();
      }
      await writeFile(`${dataDir}.lock`, "2147483646"); // no such process
      const next = await openDatabase({ driver: "pglite", dataDir });
      expect(await next.ping()).toBeUndefined();
      await next.close();
    },
    HOOK_TIMEOUT,
  );
});
