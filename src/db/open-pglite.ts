/**
 * PGlite (PostgreSQL 18 in WASM) in process, through Kysely's built-in `PGliteDialect`.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join, resolve } from "node:path";
import { PGlite } from "@electric-sql/pglite";
import { Kysely, PGliteDialect, sql } from "kysely";
import type { DatabaseHandle, PgliteSnapshotSource } from "./database-handle.ts";
import { lockDataDir } from "./data-dir-lock.ts";
import type { Database } from "./schema.ts";

const INT8_OID = 20;
const JSON_OID = 114;
const JSONB_OID = 3802;

/**
 * Server settings PGlite starts with. Its default 128 MB of shared buffers costs ~130 MB of
 * RSS per instance; 16 MB cuts that with no measurable loss for this workload.
 */
export const PGLITE_START_PARAMS: readonly string[] = [...PGlite.defaultStartParams, "-c", "shared_buffers=16MB"];

/** Extra initdb arguments: 1 MB WAL segments make a fresh data directory (and a snapshot) ~10 MB smaller. */
export const PGLITE_INITDB_PARAMS: readonly string[] = ["--wal-segsize=1"];

/** Whether `dataDir` already holds a database (so a snapshot would not be used). */
export function pgliteDataDirExists(dataDir: string): boolean {
  return existsSync(join(resolve(dataDir), "PG_VERSION"));
}

/**
 * Starts a PGlite instance with the gateway's settings and value codecs: `int8` read as a
 * number, and json/jsonb parameters always `JSON.stringify`-ed (PGlite otherwise passes a
 * string through as raw JSON text, where postgres.js would encode it: the drivers would disagree).
 *
 * @example
 * ```ts
 * const pglite = await createPglite({ loadDataDir: snapshot }); // in memory, from a tarball
 * ```
 */
export async function createPglite(opts: { dataDir?: string; loadDataDir?: Blob | File }): Promise<PGlite> {
  if (opts.dataDir !== undefined) await mkdir(opts.dataDir, { recursive: true });
  return PGlite.create({
    ...(opts.dataDir === undefined ? {} : { dataDir: opts.dataDir }),
    ...(opts.loadDataDir === undefined ? {} : { loadDataDir: opts.loadDataDir }),
    startParams: [...PGLITE_START_PARAMS],
    initDbStartParams: [...PGLITE_INITDB_PARAMS],
    parsers: { [INT8_OID]: (value: string) => Number(value) },
    serializers: { [JSON_OID]: encodeJson, [JSONB_OID]: encodeJson },
  });
}

function encodeJson(value: unknown): string {
  return JSON.stringify(value);
}

/**
 * Wraps a started PGlite instance in a handle; `close()` shuts the instance down, then runs `onClose`.
 *
 * @example
 * ```ts
 * const handle = pgliteHandle(await createPglite({}));
 * ```
 */
export function pgliteHandle(pglite: PGlite, onClose?: () => Promise<void>): DatabaseHandle {
  // Kysely's PGlite adapter reports one connection, so Kysely serialises queries and transactions.
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) });
  return {
    db,
    driver: "pglite",
    ping: async () => {
      await sql`select 1`.execute(db);
    },
    close: async () => {
      try {
        await db.destroy();
        if (!pglite.closed) await pglite.close();
      } finally {
        await onClose?.();
      }
    },
  };
}

/**
 * Opens PGlite in memory (`dataDir` undefined) or on disk. A missing database starts from
 * `snapshot` when given (~0.5 s), else from initdb (~2.5 s, ~850 MB RSS at peak, once).
 * An on-disk directory is locked (`<dataDir>.lock`) until `close()`: one process at a time.
 *
 * @example
 * ```ts
 * const handle = await openPglite("./data/pglite", () => loadOrBuildPgliteSnapshot(tmpdir()));
 * ```
 */
export async function openPglite(dataDir?: string, snapshot?: PgliteSnapshotSource): Promise<DatabaseHandle> {
  if (dataDir === undefined) {
    return pgliteHandle(await createPglite(snapshot === undefined ? {} : { loadDataDir: await resolveSnapshot(snapshot) }));
  }
  const dir = resolve(dataDir);
  const unlock = await lockDataDir(dir);
  try {
    const loadDataDir = snapshot !== undefined && !pgliteDataDirExists(dir) ? await resolveSnapshot(snapshot) : undefined;
    const pglite = await createPglite({ dataDir: dir, ...(loadDataDir === undefined ? {} : { loadDataDir }) });
    return pgliteHandle(pglite, unlock);
  } catch (error) {
    await unlock();
    throw error;
  }
}

async function resolveSnapshot(snapshot: PgliteSnapshotSource): Promise<Blob | File> {
  return typeof snapshot === "function" ? snapshot() : snapshot;
}
