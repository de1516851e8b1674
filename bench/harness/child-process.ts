/**
 * The servers under load run as child processes: started here, their output kept (the tail only) for
 * the error message when one fails, waited for over HTTP, and stopped with SIGTERM then SIGKILL.
 */
import { createServer } from "node:net";

export interface ChildServer {
  label: string;
  pid: number;
  /** Resolves with the exit code when the process ends. */
  exited: Promise<number>;
  /** True once the process has ended. */
  hasExited(): boolean;
  /** The last lines the process wrote to stdout and stderr. */
  outputTail(): string;
}

const TAIL_BYTES = 16_384;
type Killable = { kill(signal?: number | NodeJS.Signals): void; exited: Promise<number> };
const live = new Set<Killable>();

// When the harness exits — normally, after a signal, or on an uncaught error — no child outlives it.
process.on("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

/** Kills `proc` with SIGKILL if it is still running when the harness exits. */
export function killOnExit<T extends Killable>(proc: T): T {
  live.add(proc);
  void proc.exited.then(() => live.delete(proc));
  return proc;
}

/** A TCP port that was free a moment ago on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

/** Starts `cmd` with exactly `env` (nothing inherited), keeping the tail of its output. */
export function spawnChild(label: string, cmd: string[], env: Record<string, string>, cwd: string): ChildServer {
  let tail = "";
  let done = false;
  const proc = killOnExit(Bun.spawn(cmd, { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" }));
  const drain = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    for await (const chunk of stream) {
      tail += decoder.decode(chunk, { stream: true });
      if (tail.length > TAIL_BYTES * 2) tail = tail.slice(-TAIL_BYTES);
    }
  };
  const drained = Promise.all([drain(proc.stdout), drain(proc.stderr)]).catch(() => {});
  const exited = proc.exited.then(async (code) => {
    done = true;
    await Promise.race([drained, Bun.sleep(500)]);
    return code;
  });
  return {
    label,
    pid: proc.pid,
    exited,
    hasExited: () => done,
    outputTail: () => tail.slice(-TAIL_BYTES),
  };
}

/** Runs a short command with exactly `env` and returns its stdout; throws with its stderr on failure. */
export async function runToCompletion(cmd: string[], env: Record<string, string>, cwd: string): Promise<string> {
  const proc = killOnExit(Bun.spawn(cmd, { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" }));
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`'${cmd.join(" ")}' exited with ${code}:\n${stderr.trim() || stdout.trim()}`);
  return stdout;
}

/**
 * Polls `url` until it answers 200. Throws, with the child's output, when the child exits first or
 * `timeoutMs` passes.
 */
export async function waitUntilReady(child: ChildServer, url: string, timeoutMs: number): Promise<number> {
  const started = performance.now();
  let last = "no answer yet";
  while (performance.now() - started < timeoutMs) {
    if (child.hasExited()) {
      const code = await child.exited;
      throw new Error(`${child.label} exited with code ${code} before ${url} answered 200. Its output:\n${indent(child.outputTail())}`);
    }
    try {
      const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
      const body = await response.text();
      if (response.status === 200) return performance.now() - started;
      last = `${response.status} ${body.slice(0, 300)}`;
    } catch (error) {
      last = error instanceof Error ? error.message : String(error);
    }
    await Bun.sleep(100);
  }
  throw new Error(`${child.label} did not answer 200 on ${url} within ${timeoutMs / 1000} s (last: ${last}). Its output:\n${indent(child.outputTail())}`);
}

/**
 * SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone, with how it ended:
 * `stopped` (exit code 0 after SIGTERM), `exit <code> …`, `killed …` (it ignored SIGTERM) or `already exited …`.
 */
export async function stopChild(child: ChildServer, graceMs = 5_000): Promise<string> {
  if (child.hasExited()) return `already exited with ${await child.exited}`;
  signal(child.pid, "SIGTERM");
  const code = await Promise.race([child.exited, Bun.sleep(graceMs).then(() => undefined)]);
  if (code === undefined) {
    signal(child.pid, "SIGKILL");
    await child.exited;
    return `killed: still running ${graceMs / 1000} s after SIGTERM`;
  }
  return code === 0 ? "stopped" : `exit ${code} after SIGTERM`;
}

/** `process.kill` that ignores a process already gone. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {}
}

export function indent(text: string): string {
  const trimmed = text.trim();
  return trimmed
    ? trimmed
        .split("\n")
        .map((line) => `    ${line}`)
        .join("\n")
    : "    (nothing)";
}
