import { afterAll, describe, expect, it, setDefaultTimeout } from "bun:test";
import { describeOnEmbeddedPass } from "./support/passes.ts";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ulid } from "ulid";
import { loadConfig, parseEncryptionKeys } from "../src/config.ts";
import { openDatabase, type DatabaseHandle } from "../src/db/connect.ts";
import { migrateToLatest } from "../src/db/migrate.ts";
import { migrations } from "../src/db/migrations/index.ts";
import { loadOrBuildPgliteSnapshot, SNAPSHOT_CACHE_DIR } from "../src/db/pglite-snapshot.ts";
import { createKeyring } from "../src/crypto/seal.ts";
import { credentialField } from "../src/crypto/sealed-fields.ts";
import { createTokenVerifier } from "../src/services/auth/tokens.ts";
import { createScratchDatabase } from "./support/db.ts";
import { TEST_ENV } from "./support/gateway.ts";
import { freePort } from "./support/ports.ts";
import { cleanEnv, waitReady } from "./support/spawned-gateway.ts";

// Each test starts `bun src/main.ts` one to eight times in turn, a second or so each, more on a busy machine
// (other test files run meanwhile).
setDefaultTimeout(60_000);

const MAIN = join(import.meta.dir, "..", "src", "main.ts");
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "passerelle-cli-"));
  dirs.push(dir);
  return dir;
}

async function run(args: string[], env: Record<string, string>, cwd?: string) {
  const child = Bun.spawn(["bun", MAIN, ...args], { env: cleanEnv(env), stdout: "pipe", stderr: "pipe", ...(cwd ? { cwd } : {}) });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, code };
}

/** Reads a child's output line by line as it comes: `waitFor` a line, then the `rest` once it ends. */
function lineReader(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  const lines: string[] = [];
  let buffer = "";
  let ended = false;
  const readMore = async () => {
    const { done, value } = await reader.read();
    if (done) ended = true;
    buffer += decoder.decode(value, { stream: !done });
    const parts = buffer.split("\n");
    buffer = parts.pop()!;
    lines.push(...parts);
    if (ended && buffer) lines.push(buffer);
  };
  return {
    lines,
    /** The first line (from the start) that `match` accepts, or undefined when the stream ends without one. */
    async waitFor(match: (line: string) => boolean): Promise<string | undefined> {
      for (;;) {
        const found = lines.find(match);
        if (found !== undefined || ended) return found;
        await readMore();
      }
    },
    /** Every line, once the stream has ended. */
    async rest(): Promise<string[]> {
      while (!ended) await readMore();
      return lines;
    },
  };
}

/**
 * A database for the CLI to work on, on the driver the tests run on: a scratch database on the server
 * `DATABASE_URL` names, or a PGlite data directory. `env` points the CLI at it; `open` opens it here.
 */
async function cliDatabase(options: { snapshot: boolean } = { snapshot: true }) {
  const serverUrl = process.env.DATABASE_URL;
  if (serverUrl) {
    const scratch = await createScratchDatabase(serverUrl);
    afterAll(() => scratch.drop());
    return {
      env: { DATABASE_URL: scratch.url } as Record<string, string>,
      open: (): Promise<DatabaseHandle> => openDatabase({ driver: "postgres", url: scratch.url }),
    };
  }
  const dataDir = tempDir();
  return {
    env: { DATA_DIR: dataDir } as Record<string, string>,
    open: (): Promise<DatabaseHandle> =>
      openDatabase({
        driver: "pglite",
        dataDir: join(dataDir, "pglite"),
        ...(options.snapshot ? { snapshot: () => loadOrBuildPgliteSnapshot(SNAPSHOT_CACHE_DIR) } : {}),
      }),
  };
}

describe("passerelle (the command line)", () => {
  it("token --admin prints one admin token that the gateway accepts", async () => {
    const { stdout, code } = await run(["token", "--admin", "--env", "live"], TEST_ENV);
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split("\n");
    expect(lines.length).toBe(1);
    const principal = await createTokenVerifier({ secret: TEST_ENV.JWT_SECRET!, issuer: undefined, audience: undefined, jwksUrl: undefined }).verify(lines[0]!);
    expect(principal).toMatchObject({ role: "admin", environment: "live", tenantId: null });
  });

  it("token refuses unclear arguments with its usage and exit status 2", async () => {
    const { stdout, stderr, code } = await run(["token"], TEST_ENV);
    expect(code).toBe(2);
    expect(stdout).toBe("");
    expect(stderr).toStartWith("passerelle: token needs exactly one of --admin or --tenant <ten_…>\nusage: passerelle token --admin | --tenant <ten_…>");
  });

  it("stops on bad configuration with one line naming the variable", async () => {
    const { stderr, code } = await run(["serve"], { NODE_ENV: "production", JWT_SECRET: "x".repeat(40) });
    expect(code).toBe(1);
    expect(stderr).toBe("passerelle: Invalid configuration: ENCRYPTION_KEYS is required when NODE_ENV=production\n");
    const bad = await run(["serve"], { ...TEST_ENV, PORT: "http" });
    expect(bad.code).toBe(1);
    expect(bad.stderr.trimEnd().split("\n")).toEqual([expect.stringContaining("Invalid configuration: PORT")]);
  });

  describeOnEmbeddedPass("says in one plain line what a bad variable must be", () => {
    const cases: [Record<string, string>, string][] = [
      [{ PORT: "abc" }, 'PORT must be an integer from 0 to 65535 (got "abc")'],
      [{ PORT: "70000" }, 'PORT must be an integer from 0 to 65535 (got "70000")'],
      [{ METRICS_PORT: "-1" }, 'METRICS_PORT must be an integer from 0 to 65535 (got "-1")'],
      [{ MAX_AMOUNT: "0" }, 'MAX_AMOUNT must be a positive integer (got "0")'],
      [{ IDEMPOTENCY_LOCK_MS: "10" }, 'IDEMPOTENCY_LOCK_MS must be an integer of at least 1000 (got "10")'],
      [{ NODE_ENV: "prod" }, 'NODE_ENV must be one of development, production, test (got "prod")'],
      [{ LOG_LEVEL: "loud" }, 'LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent (got "loud")'],
      // A URL may carry a password: it is never echoed.
      [{ DATABASE_URL: "mysql://root:hunter2@db/x" }, "DATABASE_URL must be a postgres:// or postgresql:// URL"],
      [{ REDIS_URL: "http://:hunter2@cache" }, "REDIS_URL must be a redis:// or rediss:// URL"],
      [{ JWT_SECRET: "hunter2" }, "JWT_SECRET must be at least 32 bytes"],
    ];
    for (const [variables, line] of cases) {
      it(`${Object.entries(variables)[0]!.join("=")}`, async () => {
        const { stdout, stderr, code } = await run(["serve"], { ...TEST_ENV, ...variables });
        expect(code).toBe(1);
        expect(stdout).toBe("");
        expect(stderr).toBe(`passerelle: Invalid configuration: ${line}\n`);
        expect(stderr).not.toContain("hunter2");
      });
    }
  });

  it("stops with one line when the database cannot be reached", async () => {
    const { stderr, code } = await run(["serve"], { ...TEST_ENV, DATABASE_URL: "postgres://postgres@127.0.0.1:1/none" });
    expect(code).toBe(1);
    const lines = stderr.trimEnd().split("\n");
    expect(lines.length).toBe(1);
    expect(lines[0]).toStartWith("passerelle: ");
    expect(lines[0]).toContain("ECONNREFUSED");
  });

  it("keys rotate re-seals every stored secret under the first key and says how many", async () => {
    const dataDir = tempDir();
    const oldKey = `1:${Buffer.alloc(32, 11).toString("base64")}`;
    const newKey = `2:${Buffer.alloc(32, 22).toString("base64")}`;
    const tenantId = `ten_${ulid()}`;
    const v1 = await createKeyring(parseEncryptionKeys(oldKey)!);
    const context = { tenantId, field: credentialField("providerB", "masterKey") };
    const open = () => openDatabase({ driver: "pglite", dataDir: join(dataDir, "pglite"), snapshot: () => loadOrBuildPgliteSnapshot(SNAPSHOT_CACHE_DIR) });
    let database = await open();
    await migrateToLatest(database.db);
    await database.db.insertInto("tenants").values({ id: tenantId, name: "Rotate", store_name: "Rotate" }).execute();
    await database.db
      .insertInto("provider_credentials")
      .values({
        id: `pcr_${ulid()}`,
        tenant_id: tenantId,
        provider: "providerB",
        environment: "sandbox",
        version: 1,
        sealed: { masterKey: await v1.seal("mk_rotate_me", context) },
        masked: {},
      })
      .execute();
    await database.close();

    const env = { ...TEST_ENV, DATA_DIR: dataDir, ENCRYPTION_KEYS: `${newKey},${oldKey}` };
    const first = await run(["keys", "rotate"], env);
    expect(first.stderr).toBe("");
    expect(first.stdout).toBe("re-sealed 1 secret(s) under key v2; 0 already were\n");
    expect((await run(["keys", "rotate"], env)).stdout).toBe("re-sealed 0 secret(s) under key v2; 1 already were\n");

    database = await open();
    const row = await database.db.selectFrom("provider_credentials").select("sealed").executeTakeFirstOrThrow();
    await database.close();
    expect(row.sealed.masterKey).toStartWith("v2:");
    const onlyNew = await createKeyring(parseEncryptionKeys(newKey)!);
    expect(await onlyNew.open(row.sealed.masterKey!, context)).toBe("mk_rotate_me");
  }, 60_000);

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
        await waitReady(port);
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
      expect(loadConfig(TEST_ENV).dataDir).toBe(join(import.meta.dir, "..", "data"));
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

  describeOnEmbeddedPass("--help, -h and usage errors", () => {
    const commands: [string[], string][] = [
      [["serve"], "usage: passerelle serve [--no-workers]"],
      [["worker"], "usage: passerelle worker"],
      [["migrate"], "usage: passerelle migrate"],
      [["token"], "usage: passerelle token --admin | --tenant <ten_…>"],
      [["sandbox"], "usage: passerelle sandbox [--port-a <n>]"],
      [["keys", "rotate"], "usage: passerelle keys rotate [--pause-ms <n>]"],
      [["prune"], "usage: passerelle prune [--batch-size <n>]"],
      [["openapi"], "usage: passerelle openapi"],
    ];

    it("passerelle --help, -h, help and no command at all print the list of commands and exit 0", async () => {
      for (const args of [["--help"], ["-h"], ["help"], []]) {
        const { stdout, stderr, code } = await run(args, {});
        expect({ args, code, stderr }).toEqual({ args, code: 0, stderr: "" });
        expect(stdout).toStartWith("usage: passerelle <command> [options]\n");
        for (const [name] of commands) expect(stdout).toContain(`\n  ${name.join(" ")}`);
      }
    });

    for (const [name, usage] of commands) {
      it(`${name.join(" ")} --help and -h print its usage, exit 0 and do nothing else`, async () => {
        const dataDir = join(tempDir(), "data");
        // With a PORT that would stop anything that reads the configuration: the help never does.
        for (const flag of ["--help", "-h"]) {
          const { stdout, stderr, code } = await run([...name, flag], { DATA_DIR: dataDir, PORT: "abc" });
          expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
          expect(stdout).toStartWith(`${usage}`);
          expect(stdout.endsWith("\n")).toBe(true);
        }
        expect((await run(["help", ...name], {})).stdout).toStartWith(usage);
        expect(existsSync(dataDir)).toBe(false);
      });
    }

    it("refuses an unknown option or argument with one line, the command's usage, and exit status 2", async () => {
      const cases: [string[], string, string][] = [
        [["serve", "--bogus"], "unknown option '--bogus'", "usage: passerelle serve"],
        [["keys", "rotate", "--dry-run"], "unknown option '--dry-run'", "usage: passerelle keys rotate"],
        [["migrate", "now"], "unexpected argument 'now'", "usage: passerelle migrate"],
        [["token", "--admin", "--ttl", "soon"], '--ttl must be a positive number of seconds (got "soon")', "usage: passerelle token"],
        [["keys", "rotate", "--pause-ms", "x"], '--pause-ms must be a whole number of milliseconds (got "x")', "usage: passerelle keys rotate"],
        [["prune", "--batch-size", "lots"], '--batch-size must be a whole number from 1 to 50000 (got "lots")', "usage: passerelle prune"],
        [["keys"], "keys needs a command: rotate", "usage: passerelle keys rotate"],
        [["keys", "turn"], "unknown keys command 'turn' (did you mean 'keys rotate'?)", "usage: passerelle keys rotate"],
        [["serv"], "unknown command 'serv'", "usage: passerelle <command>"],
      ];
      for (const [args, message, usage] of cases) {
        const { stdout, stderr, code } = await run(args, TEST_ENV);
        expect({ args, code, stdout }).toEqual({ args, code: 2, stdout: "" });
        const [first, second] = stderr.split("\n");
        expect({ args, first, second: second?.slice(0, usage.length) }).toEqual({ args, first: `passerelle: ${message}`, second: usage });
      }
    });
  });

  describe("migrate", () => {
    it("says which migrations it applied, or that there was none to apply", async () => {
      const names = Object.keys(migrations).sort();
      // A database three migrations in, as an older release left it.
      const database = await cliDatabase({ snapshot: false });
      const handle = await database.open();
      await migrateToLatest(handle.db, Object.fromEntries(names.slice(0, 3).map((name) => [name, migrations[name]!])));
      await handle.close();

      const env = { ...TEST_ENV, ...database.env };
      const first = await run(["migrate"], env);
      expect({ code: first.code, stderr: first.stderr }).toEqual({ code: 0, stderr: "" });
      expect(first.stdout).toBe(`applied ${names.length - 3} migrations (${names.slice(3).join(", ")})\n`);
      const again = await run(["migrate"], env);
      expect(again.stdout).toBe(`no migration to apply (the database is at ${names.at(-1)})\n`);
    }, 120_000);
  });

  describe("keys rotate, interrupted and run again", () => {
    it("shows its progress, and a second run finishes what a killed one left without redoing it", async () => {
      const oldKey = `1:${Buffer.alloc(32, 11).toString("base64")}`;
      const newKey = `2:${Buffer.alloc(32, 22).toString("base64")}`;
      const v1 = await createKeyring(parseEncryptionKeys(oldKey)!);
      const tenantId = `ten_${ulid()}`;
      const context = { tenantId, field: "tenantSecret.callback" };
      const database = await cliDatabase();
      let handle = await database.open();
      await migrateToLatest(handle.db);
      await handle.db.insertInto("tenants").values({ id: tenantId, name: "Rotate", store_name: "Rotate" }).execute();
      const total = 40;
      for (let i = 0; i < total; i++)
        await handle.db
          .insertInto("tenant_secrets")
          .values({ id: `tsc_${String(i).padStart(2, "0")}`, tenant_id: tenantId, kind: "callback", sealed_secret: await v1.seal(`secret ${i}`, context) })
          .execute();
      await handle.close();
      const env = { ...TEST_ENV, ...database.env, ENCRYPTION_KEYS: `${newKey},${oldKey}` };

      // Asking for help rotates nothing.
      expect((await run(["keys", "rotate", "--help"], env)).code).toBe(0);

      // Slowed down, and killed at its first progress line: part of the rows are done, the rest not.
      const child = Bun.spawn(["bun", MAIN, "keys", "rotate", "--pause-ms", "100"], { env: cleanEnv(env), stdout: "pipe", stderr: "pipe" });
      const progress = await lineReader(child.stderr).waitFor((line) => line.startsWith("re-sealed "));
      child.kill("SIGKILL");
      await child.exited;
      expect(progress).toMatch(new RegExp(`^re-sealed \\d+/${total}$`));

      const underNewKey = async () => {
        handle = await database.open();
        try {
          const rows = await handle.db.selectFrom("tenant_secrets").select(["id", "sealed_secret"]).orderBy("id").execute();
          return rows.filter((row) => row.sealed_secret.startsWith("v2:"));
        } finally {
          await handle.close();
        }
      };
      const done = (await underNewKey()).length;
      expect(done).toBeGreaterThan(0);
      expect(done).toBeLessThan(total);

      // The summary is stdout's only line, even with the simulators on (a development machine's default).
      const second = await run(["keys", "rotate"], { ...env, SIMULATORS: "on" });
      expect(second.code).toBe(0);
      expect(second.stdout).toBe(`re-sealed ${total - done} secret(s) under key v2; ${done} already were\n`);
      const lines = second.stderr.trimEnd().split("\n");
      expect(lines.length).toBeGreaterThan(0);
      for (const line of lines) expect(line).toMatch(new RegExp(`^re-sealed \\d+/${total - done}$`));

      const rows = await underNewKey();
      expect(rows.length).toBe(total);
      const onlyNew = await createKeyring(parseEncryptionKeys(newKey)!);
      expect(await Promise.all(rows.map((row) => onlyNew.open(row.sealed_secret, context)))).toEqual(rows.map((_, i) => `secret ${i}`));
    }, 120_000);
  });
});
