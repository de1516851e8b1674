/**
 * Argument checks and retry arithmetic shared by both drivers, so that a call the BullMQ driver
 * would refuse is refused by the in-process driver too.
 *
 * @module
 */

import type { JobBackoff, JobOptions, ProcessOptions } from "./queue.ts";
import { DEFAULT_JOB_TIME_LIMIT_MS } from "./time-limit.ts";

/** {@link JobOptions} with defaults applied. */
export interface NormalizedJobOptions {
  jobId: string | undefined;
  delayMs: number;
  attempts: number;
  backoff: JobBackoff | undefined;
}

/**
 * Throws a TypeError unless `queue` is a usable queue name: non-empty, no `:` (BullMQ builds Redis
 * keys as `<prefix>:<queue>:…` and refuses `:` in names).
 *
 * @example
 * ```ts
 * assertQueueName("webhooks"); // ok
 * assertQueueName("a:b");      // throws
 * ```
 */
export function assertQueueName(queue: string): void {
  if (typeof queue !== "string" || queue.length === 0 || queue.includes(":")) {
    throw new TypeError(`invalid queue name ${JSON.stringify(queue)}: non-empty, without ':'`);
  }
}

/**
 * Throws a TypeError unless `id` is a non-empty string (job and scheduler ids).
 *
 * @example
 * ```ts
 * assertId("jobId", "dlv_01H…"); // ok
 * ```
 */
export function assertId(what: string, id: string): void {
  if (typeof id !== "string" || id.length === 0) {
    throw new TypeError(`invalid ${what} ${JSON.stringify(id)}: a non-empty string is required`);
  }
}

/**
 * Validates {@link JobOptions} and applies the defaults (no delay, one attempt, no backoff).
 *
 * @example
 * ```ts
 * normalizeJobOptions({ attempts: 3 }); // { jobId: undefined, delayMs: 0, attempts: 3, backoff: undefined }
 * ```
 */
export function normalizeJobOptions(opts: JobOptions = {}): NormalizedJobOptions {
  if (opts.jobId !== undefined) assertId("jobId", opts.jobId);
  const delayMs = opts.delayMs ?? 0;
  if (!Number.isFinite(delayMs) || delayMs < 0) {
    throw new TypeError(`invalid delayMs ${delayMs}: a finite number ≥ 0 is required`);
  }
  const attempts = opts.attempts ?? 1;
  if (!Number.isInteger(attempts) || attempts < 1) {
    throw new TypeError(`invalid attempts ${attempts}: an integer ≥ 1 is required`);
  }
  const backoff = opts.backoff;
  if (backoff !== undefined) {
    if (backoff.type !== "fixed" && backoff.type !== "exponential") {
      throw new TypeError(`invalid backoff type ${JSON.stringify(backoff.type)}`);
    }
    if (!Number.isFinite(backoff.delayMs) || backoff.delayMs < 0) {
      throw new TypeError(`invalid backoff delayMs ${backoff.delayMs}: a finite number ≥ 0 is required`);
    }
  }
  return { jobId: opts.jobId, delayMs: Math.round(delayMs), attempts, backoff };
}

/**
 * Validates {@link ProcessOptions} and returns the concurrency (default 1).
 *
 * @example
 * ```ts
 * normalizeConcurrency({ concurrency: 4 }); // 4
 * ```
 */
export function normalizeConcurrency(opts: ProcessOptions = {}): number {
  const concurrency = opts.concurrency ?? 1;
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new TypeError(`invalid concurrency ${concurrency}: an integer ≥ 1 is required`);
  }
  return concurrency;
}

/**
 * The time limit of a queue's attempts, validated (a finite number > 0); the default when unset.
 *
 * @example
 * ```ts
 * normalizeTimeLimit({ timeLimitMs: 60_000 }); // 60000
 * ```
 */
export function normalizeTimeLimit(opts: ProcessOptions = {}): number {
  const ms = opts.timeLimitMs ?? DEFAULT_JOB_TIME_LIMIT_MS;
  if (!Number.isFinite(ms) || ms <= 0) throw new TypeError(`invalid timeLimitMs ${ms}: a number > 0 is required`);
  return ms;
}

/**
 * Throws a TypeError unless `everyMs` is a usable repeat interval (a finite number > 0).
 *
 * @example
 * ```ts
 * assertEveryMs(60_000); // ok
 * ```
 */
export function assertEveryMs(everyMs: number): void {
  if (!Number.isFinite(everyMs) || everyMs <= 0) {
    throw new TypeError(`invalid everyMs ${everyMs}: a finite number > 0 is required`);
  }
}

/**
 * Milliseconds to wait after failed attempt `failedAttempt` (1-based) before the next one, with
 * BullMQ's built-in formulas: fixed → `delayMs`; exponential → `delayMs * 2^(failedAttempt-1)`.
 *
 * @example
 * ```ts
 * backoffDelayMs({ type: "exponential", delayMs: 100 }, 3); // 400
 * backoffDelayMs(undefined, 1);                              // 0
 * ```
 */
export function backoffDelayMs(backoff: JobBackoff | undefined, failedAttempt: number): number {
  if (!backoff) return 0;
  if (backoff.type === "fixed") return backoff.delayMs;
  return Math.round(backoff.delayMs * 2 ** (failedAttempt - 1));
}
