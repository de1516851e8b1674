/**
 * A fresh, migrated database per call, so tests never see each other's data:
 * with `DATABASE_URL` set, a new database on that server (dropped by `dispose()`);
 * otherwise PGlite in memory, loaded from a snapshot cached under the OS temp directory.
 */
import { throughPooler } from "../../src/db/open-postgres.ts";
import { randomBytes } from "node:crypto";
import type { Kysely } from "kysely";
import postgres from "postgres";
import { ulid } from "ulid";
import { openDatabase, type DatabaseHandle } from "../../src/db/connect.ts";
import { migrateToLatest } from "../../src/db/migrate.ts";
import type { Database, NewPayment, Payment } from "../../src/db/schema.ts";
import { loadOrBuildPgliteSnapshot, SNAPSHOT_CACHE_DIR } from "../../src/db/pglite-snapshot.ts";
import { DatabaseUnavailableError } from "../../src/db/availability.ts";
import { audit, type Violation, violationLine } from "../../src/services/audit/audit.ts";

export { SNAPSHOT_CACHE_DIR };

/**
 * A test database; `dispose()` checks the money invariants on what the test left (`passerelle audit`'s, the
 * providers' balances aside: issue 24) and fails on a violation, then closes it and removes whatever it
 * created. A test that breaks an invariant on purpose sets `audited = false`.
 */
export type TestDatabase = DatabaseHandle & {
  dispose(): Promise<void>;
  audited: boolean;
  /** Violations a test caused and asserted on purpose (`<invariant> <subject>`), left out of the check at disposal. */
  expectedViolations?: string[];
};

/** Fails with one line per violation of the money invariants in `db`; a database already unreachable is not audited. */
export async function expectInvariantsHold(db: Kysely<Database>, expected: readonly string[] = []): Promise<void> {
  let violations: Violation[];
  try {
    violations = (await audit({ db })).filter((v) => !expected.includes(`${v.invariant} ${v.subject}`));
  } catch (error) {
    // The test took the database away (an outage it simulated, a dropped connection): nothing to read.
    if (error instanceof DatabaseUnavailableError || /terminat|closed|ECONNREFUSED|connection/i.test(String(error))) return;
    throw error;
  }
  if (violations.length > 0) throw new Error(`the money invariants do not hold:\n${violations.map(violationLine).join("\n")}`);
}

/**
 * Opens a fresh, migrated database: PostgreSQL when `DATABASE_URL` is set, PGlite otherwise.
 *
 * @example
 * ```ts
 * let database: TestDatabase;
 * beforeAll(async () => { database = await createTestDatabase(); }, 30_000);
 * afterAll(() => database.dispose());
 * ```
 */
export async function createTestDatabase(): Promise<TestDatabase> {
  const serverUrl = process.env.DATABASE_URL;
  return serverUrl ? createServerDatabase(serverUrl) : createPgliteDatabase();
}

async function createPgliteDatabase(): Promise<TestDatabase> {
  let handle: DatabaseHandle;
  try {
    handle = await openDatabase({ driver: "pglite", snapshot: await loadOrBuildPgliteSnapshot(SNAPSHOT_CACHE_DIR) });
  } catch {
    // A cached tarball that no longer loads (e.g. written by another PGlite version): rebuild it once.
    const snapshot = await loadOrBuildPgliteSnapshot(SNAPSHOT_CACHE_DIR, { rebuild: true });
    handle = await openDatabase({ driver: "pglite", snapshot });
  }
  try {
    await migrateToLatest(handle.db);
  } catch (error) {
    await handle.close();
    throw error;
  }
  const database: TestDatabase = {
    ...handle,
    audited: true,
    dispose: once(async () => {
      try {
        if (database.audited) await expectInvariantsHold(handle.db, database.expectedViolations);
      } finally {
        await handle.close();
      }
    }),
  };
  return database;
}

async function createServerDatabase(serverUrl: string): Promise<TestDatabase> {
  const name = `passerelle_test_${randomBytes(6).toString("hex")}`;
  await withAdminConnection(serverUrl, (admin) => admin.unsafe(`create database "${name}"`));
  const dropDatabase = () => withAdminConnection(serverUrl, (admin) => admin.unsafe(`drop database if exists "${name}" with (force)`));

  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  let handle: DatabaseHandle | undefined;
  try {
    handle = await openDatabase({ driver: "postgres", url: url.toString(), max: 5 });
    await migrateToLatest(handle.db);
  } catch (error) {
    await handle?.close();
    await dropDatabase();
    throw error;
  }
  const opened = handle;
  const database: TestDatabase = {
    ...opened,
    audited: true,
    dispose: once(async () => {
      try {
        if (database.audited) await expectInvariantsHold(opened.db, database.expectedViolations);
      } finally {
        await opened.close();
        await dropDatabase();
      }
    }),
  };
  return database;
}

async function withAdminConnection<T>(serverUrl: string, run: (admin: postgres.Sql) => Promise<T>): Promise<T> {
  const admin = postgres(throughPooler(serverUrl).url, { max: 1, onnotice: () => {} });
  try {
    return await run(admin);
  } finally {
    await admin.end();
  }
}

function once(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () => (done ??= fn());
}

/**
 * Inserts a provider A direct payment of 500 XOF (`pay_…`, sandbox, the service account) with provider A id
 * `transactionId`; `fields` override any column.
 */
export async function insertDirectPayment(db: Kysely<Database>, tenantId: string, transactionId: number, fields: Partial<NewPayment> = {}): Promise<Payment> {
  return db
    .insertInto("payments")
    .values({
      id: `pay_${ulid()}`,
      tenant_id: tenantId,
      environment: "sandbox",
      provider: "providerA",
      kind: "direct_payment",
      provider_account: "service",
      provider_transaction_id: String(transactionId),
      provider_status: "pending",
      amount: 500,
      currency: "XOF",
      description: "Order",
      payment_method: "mnoA_open",
      ...fields,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** An empty database of its own on a real server, for a test that opens its own connections to it. */
export interface ScratchDatabase {
  name: string;
  /** `serverUrl` with the scratch database's name. */
  url: string;
  /** A one-connection admin pool on `serverUrl` (e.g. to read `pg_stat_activity` or terminate backends). */
  admin: postgres.Sql;
  /** Drops the database (forcing its connections off) and ends `admin`. */
  drop(): Promise<void>;
}

/** Creates a {@link ScratchDatabase} on the server `serverUrl` points at. */
export async function createScratchDatabase(serverUrl: string): Promise<ScratchDatabase> {
  const name = `passerelle_test_${randomBytes(6).toString("hex")}`;
  const admin = postgres(throughPooler(serverUrl).url, { max: 1, onnotice: () => {} });
  await admin.unsafe(`create database "${name}"`);
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    name,
    url: url.toString(),
    admin,
    drop: once(async () => {
      await admin.unsafe(`drop database if exists "${name}" with (force)`);
      await admin.end();
    }),
  };
}
