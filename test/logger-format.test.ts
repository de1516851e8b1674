/**
 * Log lines as text for a person at a terminal in development, JSON everywhere else (src/logger.ts): the
 * choice itself, then the real command under a pseudo-terminal (`script`, util-linux) and on a pipe.
 */
import { afterAll, describe, expect, it } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { logFormat } from "../src/logger.ts";
import { freePort } from "./support/ports.ts";
import { cleanEnv } from "./support/spawned-gateway.ts";
import { waitUntil } from "./support/wait.ts";

const ROOT = join(import.meta.dir, "..");
const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "passerelle-logs-"));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A pretty line: `[HH:MM:SS.mmm] LEVEL: message`, colours and all (ANSI escapes stripped here). */
const PRETTY_LINE = /^\[\d\d:\d\d:\d\d\.\d{3}\] (INFO|WARN|ERROR|DEBUG): /;
// biome-ignore lint/suspicious/noControlCharactersInRegex: ANSI colour escapes are what the terminal gets
const ANSI = /\u001b\[[0-9;]*m/g;

/** Runs `command` (argv) under a pseudo-terminal: standard output is a TTY, as in a developer's terminal. */
function underTerminal(command: string[], env: Record<string, string>, cwd = ROOT) {
  const quoted = command.map((arg) => `'${arg.replaceAll("'", `'\\''`)}'`).join(" ");
  return Bun.spawn(["script", "-qfec", `exec ${quoted}`, "/dev/null"], { env: cleanEnv(env), cwd, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
}

describe("logFormat", () => {
  it("is pretty only in development on a terminal", () => {
    expect(logFormat({ nodeEnv: "development", isTTY: true })).toBe("pretty");
    expect(logFormat({ nodeEnv: "development", isTTY: false })).toBe("json");
    expect(logFormat({ nodeEnv: "development", isTTY: undefined })).toBe("json"); // a pipe or a file
    expect(logFormat({ nodeEnv: "production", isTTY: true })).toBe("json");
    expect(logFormat({ nodeEnv: "test", isTTY: true })).toBe("json");
    expect(logFormat({ nodeEnv: undefined, isTTY: true })).toBe("json");
  });
});

describe("the logger at a real terminal", () => {
  const logOne = (nodeEnv: string) =>
    underTerminal(
      [
        "bun",
        "-e",
        `import { createLogger } from "./src/logger.ts"; createLogger({ logLevel: "info", nodeEnv: "${nodeEnv}" }).info({ authorization: "Bearer abc", orderId: 42 }, "hello");`,
      ],
      {},
    );

  it("writes text in development, secrets still redacted", async () => {
    const child = logOne("development");
    expect(await child.exited).toBe(0);
    const text = (await new Response(child.stdout).text()).replace(ANSI, "").trim();
    expect(text).toMatch(PRETTY_LINE);
    expect(text).toContain("hello");
    expect(text).toContain('"orderId":42');
    expect(text).toContain("[redacted]");
    expect(text).not.toContain("Bearer abc");
  }, 30_000);

  it("writes JSON in production, even on a terminal", async () => {
    const child = logOne("production");
    expect(await child.exited).toBe(0);
    const line = JSON.parse((await new Response(child.stdout).text()).trim()) as Record<string, unknown>;
    expect(line).toMatchObject({ level: 30, msg: "hello", orderId: 42, authorization: "[redacted]", service: "passerelle" });
  }, 30_000);
});

describe("bun src/main.ts serve", () => {
  it("logs text at a terminal in development, from start to stop", async () => {
    const port = await freePort();
    const out = join(tempDir(), "terminal.log");
    const env = { NODE_ENV: "development", DATA_DIR: tempDir(), PORT: String(port), METRICS_PORT: String(await freePort()), SIMULATORS: "off" };
    const quoted = ["bun", "src/main.ts", "serve"].join(" ");
    // `script` copies the terminal's output to the file as it comes; the gateway is its child (`exec`).
    const child = Bun.spawn(["script", "-qfec", `exec ${quoted}`, out], { env: cleanEnv(env), cwd: ROOT, stdout: "ignore", stderr: "ignore", stdin: "ignore" });
    try {
      // The file appears once `script` has opened it.
      await waitUntil(() => existsSync(out) && readFileSync(out, "utf8").includes("passerelle started"), {
        what: "the gateway to log its start",
        timeoutMs: 60_000,
        intervalMs: 100,
      });
      expect((await fetch(`http://127.0.0.1:${port}/health/live`)).status).toBe(200);
      const gateway = Number(readFileSync(`/proc/${child.pid}/task/${child.pid}/children`, "utf8").trim().split(" ")[0]);
      process.kill(gateway, "SIGTERM");
      expect(await child.exited).toBe(0);
      const lines = readFileSync(out, "utf8")
        .replace(ANSI, "")
        .split(/\r?\n/)
        .filter((line) => PRETTY_LINE.test(line));
      expect(lines.find((line) => line.includes("passerelle started"))).toMatch(/^\[[\d:.]+\] INFO: passerelle started \{"url":/);
      expect(lines.find((line) => line.includes("development defaults in use"))).toMatch(/^\[[\d:.]+\] WARN: /);
      expect(lines.find((line) => line.includes(": request "))).toContain('"route":"/health/live"');
      expect(lines.at(-1)).toMatch(/INFO: passerelle stopped \{"signal":"SIGTERM"/);
      // Nothing else came out: every log line is text, none is JSON.
      expect(
        readFileSync(out, "utf8")
          .split(/\r?\n/)
          .filter((line) => line.trim().startsWith("{")),
      ).toEqual([]);
    } finally {
      child.kill("SIGKILL");
    }
  }, 120_000);

  it("logs JSON in development when standard output is a pipe", async () => {
    const port = await freePort();
    const env = { NODE_ENV: "development", DATA_DIR: tempDir(), PORT: String(port), METRICS_PORT: String(await freePort()), SIMULATORS: "off" };
    const child = Bun.spawn(["bun", "src/main.ts", "serve"], { env: cleanEnv(env), cwd: ROOT, stdout: "pipe", stderr: "pipe" });
    try {
      await waitUntil(
        () =>
          fetch(`http://127.0.0.1:${port}/health/live`).then(
            (r) => r.ok,
            () => false,
          ),
        { what: "the gateway", timeoutMs: 60_000, intervalMs: 100 },
      );
      child.kill("SIGTERM");
      expect(await child.exited).toBe(0);
      const lines = (await new Response(child.stdout).text()).trim().split("\n");
      const parsed = lines.map((line) => JSON.parse(line) as { msg: string });
      expect(parsed.map((line) => line.msg)).toContain("passerelle started");
    } finally {
      child.kill("SIGKILL");
    }
  }, 120_000);
});
