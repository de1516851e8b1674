/**
 * Waiting in tests: poll a condition until it holds, or fail the test with what was awaited. The one
 * polling loop of the suite; a test that waits for something uses it rather than a loop of its own.
 */

export interface WaitOptions {
  /** What is awaited, for the failure message ("timed out after 10000 ms waiting for <what>"). */
  what: string;
  /**
   * How long to poll before failing; default 10 000 — what takes 100 ms alone can take seconds on a CI machine
   * running four test files, their gateways and a browser on two cores (a 5-s default failed there).
   */
  timeoutMs?: number;
  /** Pause between two checks; default 20. */
  intervalMs?: number;
  /** What was last seen, added to the failure message (the state a record was left in, say). */
  lastSeen?: () => unknown;
}

/**
 * Polls `check` every `intervalMs` until it returns a truthy value, which it returns; fails the test
 * with `what` after `timeoutMs`.
 *
 * @example
 * ```ts
 * await waitUntil(() => receiver.receipts.length === 2, { what: "two requests", timeoutMs: 3000 });
 * const row = await waitUntil(async () => ((await rowOf(id)).state === "succeeded" ? rowOf(id) : undefined), { what: "the payment to settle" });
 * ```
 */
export async function waitUntil<T>(check: () => T | Promise<T>, options: WaitOptions): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) {
      const seen = options.lastSeen ? `; last seen: ${JSON.stringify(options.lastSeen())}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${options.what}${seen}`);
    }
    await Bun.sleep(options.intervalMs ?? 20);
  }
}
