/**
 * Runs the gateway's migrations with Kysely's `Migrator`.
 *
 * @module
 */
import type { Kysely } from "kysely";
import { Migrator, type Migration } from "kysely/migration";
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
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  const { error, results = [] } = await migrator.migrateToLatest();
  if (error !== undefined) {
    // Pending migrations run in one transaction, so a failure rolls back the whole batch.
    const failed = results.find((r) => r.status === "Error")?.migrationName;
    const reason = error instanceof Error ? error.message : String(error);
    const what = failed === undefined ? "Database migration failed" : `Database migration ${failed} failed`;
    throw new MigrationError(`${what} (nothing applied): ${reason}`, failed, { cause: error });
  }
  return { applied: results.filter((r) => r.status === "Success").map((r) => r.migrationName) };
}
