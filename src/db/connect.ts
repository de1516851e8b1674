/**
 * Opening the database: PostgreSQL through postgres.js, or PGlite in process.
 * Which one runs is configuration (`DATABASE_URL` set or not), decided by the caller.
 *
 * @module
 */
import type { Kysely } from "kysely";
import type { Database } from "./schema.ts";

/** A migrated PGlite data-directory tarball (see `pglite-snapshot.ts`), or a way to get one. */
export type PgliteSnapshotSource = Blob | File | (() => Promise<Blob | File>);

/** How long PostgreSQL work may take before it is given up (the gateway's `config.database`). */
export interface PostgresBounds {
  /** `statement_timeout`: a statement running longer is cancelled by the server. Default 30 000 ms. */
  statementTimeoutMs?: number;
  /** `idle_in_transaction_session_timeout`: a transaction idle longer ends with its session. Default 60 000 ms. */
  idleInTransactionTimeoutMs?: number;
  /** A connection attempt; also how long a transaction waits for a connection (plus one second). Default 3000 ms. */
  connectTimeoutMs?: number;
  /** Told once when the database becomes unreachable and once when it is back (see `availability.ts`). */
  onAvailabilityChange?: (state: "down" | "up", error?: unknown) => void;
}

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

/** An open database: Kysely plus the few operations the service needs around it. */
export interface DatabaseHandle {
  db: Kysely<Database>;
  driver: "postgres" | "pglite";
  /** Resolves when the database answers `select 1`; for `/health/ready`. */
  ping(): Promise<void>;
  /** Ends the pool, or shuts PGlite down cleanly (flushing an on-disk data directory). */
  close(): Promise<void>;
}

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
