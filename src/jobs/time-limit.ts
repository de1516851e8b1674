/**
 * A job handler's time limit: an attempt that has not settled in time fails (and is retried per its
 * `attempts`), so a hung handler — a provider that never answers, a statement on a lost connection — never
 * holds its job, its BullMQ lock or a worker slot forever. The handler's promise is not cancelled: it runs on
 * in the background, and its late outcome is ignored (handlers are idempotent against the database).
 *
 * @module
 */

/** Default time limit of a job attempt when its queue sets none (`ProcessOptions.timeLimitMs`). */
export const DEFAULT_JOB_TIME_LIMIT_MS = 5 * 60_000;

/** The error an attempt fails with when its handler outlives the time limit. */
export class JobTimeLimitError extends Error {
  override name = "JobTimeLimitError";
  readonly code = "JOB_TIME_LIMIT";
}

/**
 * Runs `handler()` (a synchronous throw fails the attempt too) and settles like it, or rejects with a
 * {@link JobTimeLimitError} once `ms` have passed.
 *
 * @example
 * ```ts
 * await withinTimeLimit(() => handler(context), 60_000, "webhooks job dlv_…");
 * ```
 */
export function withinTimeLimit(handler: () => Promise<void>, ms: number, what: string): Promise<void> {
  const run = Promise.resolve().then(handler);
  run.catch(() => {}); // its late rejection, after the limit, is not an unhandled one
  let timer: ReturnType<typeof setTimeout> | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new JobTimeLimitError(`${what}: no outcome within its time limit of ${ms} ms`)), ms);
  });
  return Promise.race([run, limit]).finally(() => clearTimeout(timer));
}
