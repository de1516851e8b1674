/**
 * A lock file beside a PGlite data directory. PGlite does not lock its directory, and two
 * processes writing one directory corrupt it (e.g. `passerelle serve` and `passerelle worker`
 * both left on the embedded default).
 *
 * @module
 */
import { mkdir, open, readFile, rm } from "node:fs/promises";
import { dirname } from "node:path";

/**
 * Creates `lockPath` holding this process's id, unless it exists. Returns the function that removes it,
 * or undefined when someone else holds it.
 */
export async function tryCreateLockFile(lockPath: string): Promise<(() => Promise<void>) | undefined> {
  await mkdir(dirname(lockPath), { recursive: true });
  try {
    const file = await open(lockPath, "wx");
    await file.writeFile(String(process.pid));
    await file.close();
    return () => rm(lockPath, { force: true });
  } catch (error) {
    if ((error as { code?: unknown }).code !== "EEXIST") throw error;
    return undefined;
  }
}

/** Thrown when another live process holds the data directory. */
export class DataDirInUseError extends Error {
  override readonly name = "DataDirInUseError";
}

/**
 * Takes `<dataDir>.lock` for this process, replacing a lock left by a process that no longer
 * runs, and returns the function that releases it.
 *
 * @example
 * ```ts
 * const release = await lockDataDir("/srv/data/pglite");
 * try { ... } finally { await release(); }
 * ```
 * @throws {DataDirInUseError} when a running process (this one included) holds the lock.
 */
export async function lockDataDir(dataDir: string): Promise<() => Promise<void>> {
  const lockPath = `${dataDir}.lock`;
  for (let attempt = 0; attempt < 2; attempt++) {
    const release = await tryCreateLockFile(lockPath);
    if (release) return release;
    const holder = Number.parseInt(await readFile(lockPath, "utf8").catch(() => ""), 10);
    if (Number.isInteger(holder) && holder > 0 && isRunning(holder)) {
      throw new DataDirInUseError(
        `PGlite data directory ${dataDir} is in use by process ${holder}` +
          (holder === process.pid ? " (this one: it is already open)" : "") +
          `. PGlite serves one process: run the server and the workers in one process, or set DATABASE_URL. ` +
          `If no such process runs, delete ${lockPath}.`,
      );
    }
    await rm(lockPath, { force: true });
  }
  throw new DataDirInUseError(`Could not lock PGlite data directory ${dataDir} (${lockPath} keeps reappearing)`);
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as { code?: unknown }).code === "EPERM";
  }
}
