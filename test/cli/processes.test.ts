/**
 * `passerelle serve` and `passerelle worker` as processes: the development defaults, stopping on a signal
 * (even one that lands while starting), and `token` minting from another folder what a server on the same
 * DATA_DIR accepts (test/support/cli.ts runs the command; the other test/cli files hold its other topics).
 */
import { describe, expect, it, setDefaultTimeout } from "bun:test";
import { existsSync, realpathSync } from "node:fs";
import { join } from "node:path";
import { loadConfig } from "../../src/config.ts";
import { cliFixtures, lineReader, MAIN, run } from "../support/cli.ts";
import { TEST_ENV } from "../support/gateway.ts";
import { describeOnEmbeddedPass } from "../support/passes.ts";
import { freePort } from "../support/ports.ts";
import { cleanEnv, waitReady } from "../support/spawned-gateway.ts";

// Each test starts `bun src/main.ts` once or twice, a second or so each, more on a busy machine (other test
// files run meanwhile).
setDefaultTimeout(60_000);

const { tempDir } = cliFixtures();

describe("passerelle (the command line)", () => {
  it("serve with nothing set starts on the development defaults, says so once, and stops on SIGTERM", async () => {
    const dataDir = tempDir();
    const port = await freePort();
    const child = Bun.spawn(["bun", MAIN, "serve"], {
      env: cleanEnv({ DATA_DIR: dataDir, PORT: String(port), METRICS_PORT: String(await freePort()), SIMULATORS: "off" }),
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      await waitReady(port);
      child.kill("SIGTERM");
      expect(await child.exited).toBe(0);
      const lines = (await new Response(child.stdout).text())
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      // One line on the way out, the last one: why, and how long stopping took.
      expect(lines.filter((line) => line.msg === "passerelle stopped")).toEqual([lines.at(-1)]);
      expect(lines.at(-1)).toMatchObject({ level: 30, msg: "passerelle stopped", signal: "SIGTERM", stopMs: expect.any(Number) });
      const warnings = lines.filter((line) => line.level === 40);
      expect(warnings.length).toBe(1);
      expect(warnings[0].msg).toContain("development defaults in use");
      expect(warnings[0].msg).toContain("PGlite under");
      expect(warnings[0].msg).toContain("in-process jobs");
      expect(await Bun.file(join(dataDir, "secrets.json")).exists()).toBe(true);
    } finally {
      child.kill("SIGKILL");
    }
  }, 120_000);

  it("stops cleanly on a SIGTERM that arrives while it is still starting", async () => {
    const port = await freePort();
    const child = Bun.spawn(["bun", MAIN, "serve"], {
      env: cleanEnv({ DATA_DIR: tempDir(), PORT: String(port), METRICS_PORT: String(await freePort()), SIMULATORS: "off" }),
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      // The warning is written once the gateway is made and before it listens: the signal lands in its start.
      const reader = child.stdout.getReader();
      const decoder = new TextDecoder();
      let out = "";
      while (!out.includes("development defaults in use")) {
        const { value, done } = await reader.read();
        if (done) break;
        out += decoder.decode(value, { stream: true });
      }
      child.kill("SIGTERM");
      for (let read = await reader.read(); !read.done; read = await reader.read()) out += decoder.decode(read.value, { stream: true });
      expect(await child.exited).toBe(0);
      const lines = out
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      expect(lines.at(-1)).toMatchObject({ msg: "passerelle stopped", signal: "SIGTERM" });
    } finally {
      child.kill("SIGKILL");
    }
  }, 120_000);

  describeOnEmbeddedPass("token uses the server's secrets, from any folder", () => {
    it("mints, from another working directory, a token that a server on the same DATA_DIR accepts", async () => {
      const dataDir = tempDir();
      const port = await freePort();
      const env = { DATA_DIR: dataDir, PORT: String(port), METRICS_PORT: String(await freePort()), SIMULATORS: "off" };
      const server = Bun.spawn(["bun", MAIN, "serve"], { env: cleanEnv(env), cwd: tempDir(), stdout: "ignore", stderr: "ignore" });
      try {
        await waitReady(port, 60_000); // a PGlite start with every migration: 8 s alone, over 30 s at a load of 16
        const minted = await run(["token", "--admin"], { DATA_DIR: dataDir }, tempDir());
        expect(minted.stderr).toBe("");
        const whoami = await fetch(`http://127.0.0.1:${port}/auth/whoami`, { headers: { authorization: `Bearer ${minted.stdout.trim()}` } });
        expect(whoami.status).toBe(200);
      } finally {
        server.kill("SIGKILL");
        await server.exited;
      }
    }, 120_000);

    it("refuses with one line, and creates nothing, when there are no secrets where the server keeps them", async () => {
      const elsewhere = tempDir();
      // A relative DATA_DIR is relative to the working directory: here, a folder no server ever ran in.
      const { stdout, stderr, code } = await run(["token", "--admin"], { DATA_DIR: "./data" }, elsewhere);
      expect(code).toBe(1);
      expect(stdout).toBe("");
      expect(stderr).toBe(
        `passerelle: no development secrets in ${join(realpathSync(elsewhere), "data", "secrets.json")}: start 'passerelle serve' with this DATA_DIR first, or set JWT_SECRET, ENCRYPTION_KEYS and API_KEY_PEPPER to the server's\n`,
      );
      expect(existsSync(join(elsewhere, "data"))).toBe(false);
      // keys rotate would seal under keys nothing can open: it refuses the same way.
      const rotate = await run(["keys", "rotate"], { DATA_DIR: "./data" }, elsewhere);
      expect(rotate.code).toBe(1);
      expect(rotate.stderr).toStartWith("passerelle: no development secrets in ");
      expect(existsSync(join(elsewhere, "data"))).toBe(false);
    });

    it("keeps development state in the project folder's data/ by default, whatever the working directory", () => {
      expect(TEST_ENV.DATA_DIR).toBeUndefined();
      expect(loadConfig(TEST_ENV).dataDir).toBe(join(import.meta.dir, "..", "..", "data"));
    });
  });

  it("worker says once, last, that it stopped, on SIGINT", async () => {
    const child = Bun.spawn(["bun", MAIN, "worker"], { env: cleanEnv({ ...TEST_ENV, DATA_DIR: tempDir() }), stdout: "pipe", stderr: "pipe" });
    try {
      const stdout = lineReader(child.stdout);
      expect(await stdout.waitFor((line) => line.includes('"passerelle started"'))).toBeDefined();
      child.kill("SIGINT");
      expect(await child.exited).toBe(0);
      const lines = (await stdout.rest()).map((line) => JSON.parse(line));
      expect(lines.filter((line) => line.msg === "passerelle stopped")).toEqual([lines.at(-1)]);
      expect(lines.at(-1)).toMatchObject({ level: 30, msg: "passerelle stopped", signal: "SIGINT", stopMs: expect.any(Number) });
    } finally {
      child.kill("SIGKILL");
    }
  }, 60_000);
});
