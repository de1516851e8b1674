/**
 * The database layer: table types, opening PostgreSQL or PGlite, migrations, PGlite snapshots.
 * Only `db/` imports Kysely table types; everything else reaches the tables through `Database`.
 *
 * @module
 */
export { openDatabase, type DatabaseHandle, type DatabaseOptions, type PgliteSnapshotSource } from "./connect.ts";
export { DataDirInUseError } from "./data-dir-lock.ts";
export { MigrationError, migrateToLatest } from "./migrate.ts";
export { migrations } from "./migrations/index.ts";
export { pgliteDataDirExists } from "./open-pglite.ts";
export { buildPgliteSnapshot, loadOrBuildPgliteSnapshot, pgliteSnapshotPath } from "./pglite-snapshot.ts";
export type * from "./schema.ts";
