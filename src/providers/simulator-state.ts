/**
 * Where a simulator keeps its memory between runs (issue 25): one JSON file per simulator, under the
 * gateway's `DATA_DIR`, rewritten whole after every change (written beside it, then renamed over it, so a
 * crash leaves the old file or the new one, never half of one), and one lock file beside it so that only
 * one process writes it. A second process on the same file (another `serve` on the same `DATA_DIR` with
 * real servers) runs its simulator in memory, as before, and says so.
 *
 * Dates are written as `{ "$date": "<ISO>" }` and read back as `Date`s; everything else is plain JSON.
 *
 * @example
 * ```ts
 * const file = openStateFile("/srv/data/simulators/providerA.json");
 * if (file) {
 *   const saved = file.read(); // undefined the first time
 *   file.write({ nextId: 4, createdAt: new Date() });
 *   file.release();
 * }
 * ```
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** One simulator's state file, held by this process. */
export interface StateFile {
  readonly path: string;
  /** What the file holds, or undefined when there is none yet. */
  read(): unknown;
  /** Replaces the file's content with `value` (atomically); does nothing when it is what the file holds already. */
  write(value: unknown): void;
  /** Gives the lock back; the file stays. */
  release(): void;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: unknown }).code === "EPERM";
  }
}

/** Creates `lockPath` with this process's id, replacing one left by a process that no longer runs. False when a live process holds it. */
function takeLock(lockPath: string): boolean {
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(lockPath, "wx");
      writeSync(fd, String(process.pid));
      closeSync(fd);
      return true;
    } catch (error) {
      if ((error as { code?: unknown }).code !== "EEXIST") throw error;
    }
    const holder = Number.parseInt(readFileSync(lockPath, "utf8"), 10);
    if (Number.isInteger(holder) && holder > 0 && isRunning(holder)) return false;
    rmSync(lockPath, { force: true });
  }
  return false;
}

function encode(value: unknown): string {
  return JSON.stringify(value, function (this: Record<string, unknown>, key, inner) {
    const raw = this[key];
    return raw instanceof Date ? { $date: raw.toISOString() } : inner;
  });
}

function decode(text: string): unknown {
  return JSON.parse(text, (_key, value) =>
    value && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 1 && typeof value.$date === "string"
      ? new Date(value.$date)
      : value,
  );
}

/**
 * Takes the state file at `path` for this process (creating its folder), or answers undefined when another
 * running process holds it.
 */
export function openStateFile(path: string): StateFile | undefined {
  mkdirSync(dirname(path), { recursive: true });
  const lockPath = `${path}.lock`;
  if (!takeLock(lockPath)) return undefined;
  let written: string | undefined;
  let released = false;
  return {
    path,
    read() {
      if (!existsSync(path)) return undefined;
      written = readFileSync(path, "utf8");
      return decode(written);
    },
    write(value) {
      if (released) return;
      const text = encode(value);
      if (text === written) return;
      const temporary = `${path}.${process.pid}.tmp`;
      writeFileSync(temporary, text, { mode: 0o600 });
      renameSync(temporary, path);
      written = text;
    },
    release() {
      if (released) return;
      released = true;
      rmSync(lockPath, { force: true });
    },
  };
}
