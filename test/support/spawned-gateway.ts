/** For tests that run the gateway's own command (`bun src/main.ts …`) as a child process. */
import { watchGatewayOrigin } from "./openapi-validation.ts";
import { waitUntil } from "./wait.ts";

/** The environment of a fresh machine (no PASSERELLE variables, nothing from the test runner's own), plus `extra`. */
export function cleanEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...extra };
}

/**
 * Polls `http://127.0.0.1:<port>/health/ready` until it answers 200; fails the test after `timeoutMs` (default
 * 30 s). Then watches the port: the gateway's responses to later `fetch` calls are checked against the document.
 */
export async function waitReady(port: number, timeoutMs = 30_000): Promise<void> {
  await waitUntil(
    () =>
      fetch(`http://127.0.0.1:${port}/health/ready`).then(
        (r) => r.status === 200,
        () => false,
      ),
    { what: `the gateway on port ${port} to answer /health/ready with 200`, timeoutMs, intervalMs: 100 },
  );
  // From now on every `fetch` to it is checked against the OpenAPI document (openapi-validation.ts).
  watchGatewayOrigin(`http://127.0.0.1:${port}`);
}

/**
 * Resolves once a child gateway process (`bun src/main.ts worker|serve`, stdout piped) logged that it
 * started; fails after `timeoutMs`. Its log is drained from then on, so the pipe never fills.
 */
export async function waitForStart(child: Bun.Subprocess<"ignore", "pipe", "inherit">, timeoutMs: number): Promise<void> {
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let text = "";
  const timeout = Bun.sleep(timeoutMs).then(() => {
    throw new Error(`the process did not start within ${timeoutMs} ms`);
  });
  while (!text.includes("passerelle started")) {
    const chunk = await Promise.race([reader.read(), timeout]);
    if (chunk.done) throw new Error(`the process exited before it started: ${text}`);
    text += decoder.decode(chunk.value, { stream: true });
  }
  reader.releaseLock();
  void child.stdout.pipeTo(new WritableStream()).catch(() => undefined);
}
