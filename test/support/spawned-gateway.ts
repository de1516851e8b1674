/** For tests that run the gateway's own command (`bun src/main.ts …`) as a child process. */
import { waitUntil } from "./wait.ts";

/** The environment of a fresh machine (no PASSERELLE variables, nothing from the test runner's own), plus `extra`. */
export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...extra };
}

/** Polls `http://127.0.0.1:<port>/health/ready` until it answers 200; fails the test after `timeoutMs` (default 30 s). */
export async function waitReady(port: number, timeoutMs = 30_000): Promise<void> {
  await waitUntil(
    () =>
      fetch(`http://127.0.0.1:${port}/health/ready`).then(
        (r) => r.status === 200,
        () => false,
      ),
    { what: `the gateway on port ${port} to answer /health/ready with 200`, timeoutMs, intervalMs: 100 },
  );
}
