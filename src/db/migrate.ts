/**
 * Runs the gateway's migrations with Kysely's `Migrator`.
 *
 * @module
 */
import type { Kysely } from "kysely";
import { Migrator, type Migration, type MigrationResultSet } from "kysely/migration";
import { migrations as gatewayMigrations } from "./migrations/index.ts";
import type { Database } from "./schema.ts";

/** Thrown when a migration fails; `cause` holds the database error. */
export class MigrationError extends Error {
  override readonly name = "MigrationError";
  constructor(
    message: string,
    /** The migration that failed, when known. */
    readonly migrationName: string | undefined,
    options: { cause: unknown },
  ) {
    super(message, options);
  }
}

/** Ends the migrations' transaction with a ROLLBACK when one failed, carrying the migrator's results out. */
class FailedMigrations extends Error {
  constructor(readonly result: MigrationResultSet) {
    super("a migration failed");
  }
}

/**
 * Applies every pending migration, in one transaction on PostgreSQL and PGlite, and holds
 * the migration lock meanwhile, so several instances may start at once. `migrations` defaults
 * to the gateway's own list (a test may pass another).
 *
 * @example
 * ```ts
 * const { db } = await openDatabase({ driver: "pglite" });
 * const { applied } = await migrateToLatest(db); // ["0001_initial"] the first time, [] after
 * ```
 * @throws {MigrationError} naming the migration that failed, with the database error as `cause`.
 */
export async function migrateToLatest(db: Kysely<Database>, migrations: Record<string, Migration> = gatewayMigrations): Promise<{ applied: string[] }> {
  // The migrator is given a transaction: its lock is then that transaction's (`TransactionMigrationLockAdapter` on
  // PostgreSQL; PGlite, one connection, needs none), and its checks, the migrations and their record all run in it,
  // on one server session even behind a pooler in transaction mode. A failure rolls the transaction back.
  let outcome: MigrationResultSet;
  try {
    outcome = await db.transaction().execute(async (trx) => {
      // Taken first: the migrator's own checks create its tables when missing, which two first starts at once
      // would otherwise race on (one fails, and its transaction with it).
      await trx.getExecutor().adapter.acquireMigrationLock(trx, { lockTable: "kysely_migration_lock", lockRowId: "migration_lock" });
      const result = await new Migrator({ db: trx, provider: { getMigrations: async () => migrations } }).migrateToLatest();
      if (result.error !== undefined) throw new FailedMigrations(result);
      return result;
    });
  } catch (error) {
    outcome = error instanceof FailedMigrations ? error.result : { error };
  }
  const { error, results = [] } = outcome;
  if (error !== undefined) {
    // Pending migrations run in one transaction, so a failure rolls back the whole batch.
    const failed = results.find((r) => r.status === "Error")?.migrationName;
    const reason = error instanceof Error ? error.message : String(error);
    const what = failed === undefined ? "Database migration failed" : `Database migration ${failed} failed`;
    throw new MigrationError(`${what} (nothing applied): ${reason}`, failed, { cause: error });
  }
  return { applied: results.filter((r) => r.status === "Success").map((r) => r.migrationName) };
}
