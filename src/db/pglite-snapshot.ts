/**
 * Migrated PGlite data-directory tarballs: built once (initdb is the slow part of PGlite, ~2.5 s
 * and ~850 MB RSS at peak), cached on disk, loaded in ~0.5 s by every later in-memory or first
 * on-disk start.
 *
 * @module
 */
import { tmpdir } from "node:os";
import { readFileSync, readdirSync } from "node:fs";
import { readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Migration } from "kysely/migration";
import { tryCreateLockFile } from "./data-dir-lock.ts";
import { migrateToLatest } from "./migrate.ts";
import { migrations as gatewayMigrations } from "./migrations/index.ts";
import { PGLITE_INITDB_PARAMS, PGLITE_START_PARAMS, createPglite, pgliteHandle } from "./open-pglite.ts";

/** Bump when the way snapshots are built changes in a way the key below does not see. */
const SNAPSHOT_FORMAT = 1;
/** A lock older than this belongs to a builder that died; builds take a few seconds. */
const STALE_LOCK_MS = 120_000;
const WAIT_POLL_MS = 100;

/**
 * Builds a migrated snapshot from scratch: a fresh in-memory PGlite, every migration, a
 * checkpoint, then a gzipped tarball of the data directory.
 *
 * @example
 * ```ts
 * const tarball = await buildPgliteSnapshot();
 * const handle = await openDatabase({ driver: "pglite", snapshot: tarball });
 * ```
 */
export async function buildPgliteSnapshot(migrations: Record<string, Migration> = gatewayMigrations): Promise<Blob> {
  const pglite = await createPglite({});
  const handle = pgliteHandle(pglite);
  try {
    await migrateToLatest(handle.db, migrations);
    await pglite.exec("checkpoint");
    return await pglite.dumpDataDir("gzip");
  } finally {
    await handle.close();
  }
}

/**
 * The cache file name for a snapshot of `migrations`: it changes whenever a migration's code
 * (the files under `migrations/` when running from source, each function's text in any case),
 * the PGlite version or its start parameters change, so a stale snapshot is never loaded.
 *
 * @example
 * ```ts
 * await pgliteSnapshotPath(tmpdir()); // "/tmp/passerelle-pglite-3f2a…c1.tar.gz"
 * ```
 */
export async function pgliteSnapshotPath(cacheDir: string, migrations: Record<string, Migration> = gatewayMigrations): Promise<string> {
  const source = JSON.stringify({
    format: SNAPSHOT_FORMAT,
    pglite: pgliteVersion(),
    start: PGLITE_START_PARAMS,
    initdb: PGLITE_INITDB_PARAMS,
    migrations: Object.entries(migrations).map(([name, m]) => [name, m.up.toString(), m.down?.toString() ?? ""]),
    files: migrationFilesText(),
  });
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(source)));
  const key = Array.from(digest.subarray(0, 12), (b) => b.toString(16).padStart(2, "0")).join("");
  return join(cacheDir, `passerelle-pglite-${key}.tar.gz`);
}

/** Where snapshots are cached unless told otherwise: shared by tests and the quick start on one machine. */
export const SNAPSHOT_CACHE_DIR = join(tmpdir(), "passerelle");

/**
 * Returns the cached snapshot for the current migrations under `cacheDir`, building and
 * caching it first when missing (or when `rebuild` is set, e.g. after it failed to load).
 * Safe across processes: one builds under a lock file while others wait, and the file appears
 * atomically (written under a temporary name, then renamed).
 *
 * @example
 * ```ts
 * const snapshot = await loadOrBuildPgliteSnapshot(tmpdir());
 * const handle = await openDatabase({ driver: "pglite", snapshot });
 * ```
 */
export async function loadOrBuildPgliteSnapshot(cacheDir: string, opts: { rebuild?: boolean; migrations?: Record<string, Migration> } = {}): Promise<Blob> {
  const path = await pgliteSnapshotPath(cacheDir, opts.migrations);
  if (opts.rebuild) await rm(path, { force: true });
  for (;;) {
    const cached = await readIfPresent(path);
    if (cached) return cached;
    const release = await tryLock(`${path}.lock`);
    if (!release) {
      await Bun.sleep(WAIT_POLL_MS);
      continue;
    }
    try {
      // Another process may have finished between our read and our lock.
      const raced = await readIfPresent(path);
      if (raced) return raced;
      const snapshot = await buildPgliteSnapshot(opts.migrations);
      await writeAtomically(path, new Uint8Array(await snapshot.arrayBuffer()));
      return snapshot;
    } finally {
      await release();
    }
  }
}

async function readIfPresent(path: string): Promise<Blob | undefined> {
  try {
    return new Blob([await readFile(path)], { type: "application/gzip" });
  } catch (error) {
    if (isErrno(error, "ENOENT")) return undefined;
    throw error;
  }
}

/** Creates the lock file, or returns undefined while a live builder holds it. */
async function tryLock(lockPath: string): Promise<(() => Promise<void>) | undefined> {
  const release = await tryCreateLockFile(lockPath);
  if (release) return release;
  const age = await stat(lockPath).then(
    (s) => Date.now() - s.mtimeMs,
    () => 0,
  );
  if (age > STALE_LOCK_MS) await rm(lockPath, { force: true });
  return undefined;
}

async function writeAtomically(path: string, bytes: Uint8Array): Promise<void> {
  const temp = `${path}.${process.pid}.${crypto.randomUUID()}.tmp`;
  try {
    await writeFile(temp, bytes);
    await rename(temp, path);
  } finally {
    await rm(temp, { force: true });
  }
}

function isErrno(error: unknown, code: string): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === code;
}

/** The migration source files, so an edit to a helper next to `up()` changes the key too; "" in a bundle. */
function migrationFilesText(): string {
  try {
    const dir = join(import.meta.dir, "migrations");
    return readdirSync(dir)
      .filter((name) => name.endsWith(".ts"))
      .sort()
      .map((name) => `${name}\n${readFileSync(join(dir, name), "utf8")}`)
      .join("\n");
  } catch {
    return "";
  }
}

/** The installed PGlite version, or "unknown" when the package cannot be located (a bundle). */
function pgliteVersion(): string {
  try {
    const entry = Bun.resolveSync("@electric-sql/pglite", import.meta.dir);
    const manifest = JSON.parse(readFileSync(join(dirname(entry), "..", "package.json"), "utf8")) as { version?: unknown };
    return String(manifest.version ?? "unknown");
  } catch {
    return "unknown";
  }
}
