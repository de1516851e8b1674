/**
 * Opening the database: PostgreSQL through postgres.js, or PGlite in process.
 * Which one runs is configuration (`DATABASE_URL` set or not), decided by the caller.
 *
 * @module
 */
import type { DatabaseHandle, PgliteSnapshotSource, PostgresBounds } from "./database-handle.ts";

export type { DatabaseHandle, PgliteSnapshotSource, PostgresBounds } from "./database-handle.ts";

/** Where the data lives. */
export type DatabaseOptions =
  | ({
      driver: "postgres";
      url: string;
      /** Pool size; postgres.js defaults to 10. */
      max?: number;
    } & PostgresBounds)
  | {
      driver: "pglite";
      /** A directory on disk; undefined = in memory. */
      dataDir?: string;
      /**
       * Tarball to start from when there is no database yet (always for memory, on the first
       * start for a `dataDir`). A function is called only then, so building it can be skipped.
       */
      snapshot?: PgliteSnapshotSource;
    };

/**
 * Opens the database. Both drivers read `int8`/`count(*)` as JS numbers and take jsonb as
 * plain values. It does not migrate: call `migrateToLatest(handle.db)` next.
 *
 * PGlite is a single connection: queries and transactions run one at a time, and a query on
 * `db` issued inside `db.transaction()` (instead of on `trx`) waits forever.
 *
 * @example
 * ```ts
 * const handle = await openDatabase(
 *   config.databaseUrl
 *     ? { driver: "postgres", url: config.databaseUrl }
 *     : { driver: "pglite", dataDir: "./data/pglite" },
 * );
 * await migrateToLatest(handle.db);
 * await handle.ping();
 * await handle.close();
 * ```
 */
// Each driver is loaded when it is chosen: a production process never loads PGlite, and the embedded
// default never loads postgres.js.
export async function openDatabase(opts: DatabaseOptions): Promise<DatabaseHandle> {
  switch (opts.driver) {
    case "postgres":
      return (await import("./open-postgres.ts")).openPostgres(opts.url, opts.max, opts);
    case "pglite":
      return (await import("./open-pglite.ts")).openPglite(opts.dataDir, opts.snapshot);
  }
}
