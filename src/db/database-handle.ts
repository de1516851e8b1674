/**
 * What an open database is, and what each driver's opener takes: the types `connect.ts` (which picks the
 * driver) and `open-postgres.ts` / `open-pglite.ts` (which open it) share, kept apart so neither imports the other.
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

/** An open database: Kysely plus the few operations the service needs around it. */
export interface DatabaseHandle {
  db: Kysely<Database>;
  driver: "postgres" | "pglite";
  /** Resolves when the database answers `select 1`; for `/health/ready`. */
  ping(): Promise<void>;
  /** Ends the pool, or shuts PGlite down cleanly (flushing an on-disk data directory). */
  close(): Promise<void>;
}
