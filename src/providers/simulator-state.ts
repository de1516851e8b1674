/**
 * Where a simulator keeps its memory between runs (issue 25): one JSON file per simulator, under the
 * gateway's `DATA_DIR`, rewritten whole (written beside it, then renamed over it, so a crash leaves the old
 * file or the new one, never half of one), and one lock file beside it so that only one process writes it.
 * A second process on the same file (another `serve` on the same `DATA_DIR` with real servers) runs its
 * simulator in memory, as before, and says so.
 *
 * Changes are written soon, not at once: a write waits ten times as long as the last one took (at least
 * 50 ms, at most 5 s), so a simulator holding thousands of transactions spends at most a tenth of its time
 * writing them; `close()` writes what is left and marks the file closed cleanly. A file that was not (the
 * process was killed) may miss the last moments' changes: {@link LoadedState.cleanlyClosed} tells the
 * simulator to skip its counters ahead, so that an id handed out then is never handed out again.
 *
 * Dates are written as `{ "$date": "<ISO>" }` and read back as `Date`s; everything else is plain JSON.
 *
 * @example
 * ```ts
 * const file = openStateFile("/srv/data/simulators/providerA.json");
 * if (file) {
 *   const saved = file.read(); // undefined the first time
 *   file.changed(() => ({ nextId: 4, createdAt: new Date() }));
 *   file.close(() => ({ nextId: 4, createdAt: new Date() }));
 * }
 * ```
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { dirname } from "node:path";

/** What a state file held when it was opened. */
export interface LoadedState {
  state: unknown;
  /** False when the process that wrote it stopped without `close()`: its last changes may be missing. */
  cleanlyClosed: boolean;
}

/** One simulator's state file, held by this process. */
export interface StateFile {
  readonly path: string;
  /** What the file holds, or undefined when there is none yet. */
  read(): LoadedState | undefined;
  /** Something changed: `snapshot()` is written soon (once for any number of changes meanwhile). */
  changed(snapshot: () => unknown): void;
  /** Writes `snapshot()` now, as closed cleanly, and gives the lock back; nothing is written after. */
  close(snapshot: () => unknown): void;
}

const MIN_WAIT_MS = 50;
const MAX_WAIT_MS = 5_000;

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
 * running process holds it. A write made later, from a timer, that fails is told to `onWriteError`.
 */
export function openStateFile(path: string, onWriteError: (error: Error) => void = () => {}): StateFile | undefined {
  mkdirSync(dirname(path), { recursive: true });
  const lockPath = `${path}.lock`;
  if (!takeLock(lockPath)) return undefined;
  let written: string | undefined;
  let closed = false;
  let pending: (() => unknown) | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let notBefore = 0;
  let waitMs = MIN_WAIT_MS;

  function replace(text: string): void {
    if (text === written) return;
    const temporary = `${path}.${process.pid}.tmp`;
    writeFileSync(temporary, text, { mode: 0o600 });
    renameSync(temporary, path);
    written = text;
  }

  function write(snapshot: () => unknown, cleanlyClosed: boolean): void {
    const started = performance.now();
    replace(encode({ cleanlyClosed, state: snapshot() }));
    const tookMs = performance.now() - started;
    waitMs = Math.min(MAX_WAIT_MS, Math.max(MIN_WAIT_MS, 10 * tookMs));
    notBefore = performance.now() + waitMs;
  }

  function flush(): void {
    timer = undefined;
    const snapshot = pending;
    pending = undefined;
    if (!snapshot || closed) return;
    try {
      write(snapshot, false);
    } catch (error) {
      // A write from a timer must not take the process down (a full disk, a folder removed): the next change tries again.
      onWriteError(error instanceof Error ? error : new Error(String(error)));
    }
  }

  return {
    path,
    read() {
      if (!existsSync(path)) return undefined;
      const saved = decode(readFileSync(path, "utf8")) as { cleanlyClosed?: unknown; state?: unknown };
      // From now on the file speaks of a run that has not closed: if this one is killed before its first
      // write, the next start still knows that ids may have been handed out since.
      replace(encode({ cleanlyClosed: false, state: saved.state }));
      return { state: saved.state, cleanlyClosed: saved.cleanlyClosed === true };
    },
    changed(snapshot) {
      if (closed) return;
      pending = snapshot;
      if (timer) return;
      timer = setTimeout(flush, Math.max(0, notBefore - performance.now()));
      timer.unref?.();
    },
    close(snapshot) {
      if (closed) return;
      if (timer) clearTimeout(timer);
      write(snapshot, true);
      closed = true;
      rmSync(lockPath, { force: true });
    },
  };
}
