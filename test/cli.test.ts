import { afterAll, describe, expect, it } from "bun:test";
import { existsSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ulid } from "ulid";
import { loadConfig, parseEncryptionKeys } from "../src/config.ts";
import { openDatabase } from "../src/db/connect.ts";
import { migrateToLatest } from "../src/db/migrate.ts";
import { loadOrBuildPgliteSnapshot, SNAPSHOT_CACHE_DIR } from "../src/db/pglite-snapshot.ts";
import { createKeyring } from "../src/crypto/seal.ts";
import { credentialField } from "../src/crypto/sealed-fields.ts";
import { createTokenVerifier } from "../src/services/auth/tokens.ts";
import { TEST_ENV } from "./support/gateway.ts";

const MAIN = join(import.meta.dir, "..", "src", "main.ts");
const dirs: string[] = [];
afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "passerelle-cli-"));
  dirs.push(dir);
  return dir;
}

function freePort(): number {
  const server = Bun.serve({ port: 0, fetch: () => new Response() });
  const port = server.port!;
  server.stop(true);
  return port;
}

/** The environment of a fresh machine: no PASSERELLE variables, nothing from the test runner's own. */
function cleanEnv(extra: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...extra };
}

/** Polls a server's `/health/ready` for up to 30 s; true once it answers 200. */
async function becomesReady(port: number): Promise<boolean> {
  for (let i = 0; i < 300; i++) {
    await Bun.sleep(100);
    if (await fetch(`http://127.0.0.1:${port}/health/ready`).then((r) => r.status === 200, () => false)) return true;
  }
  return false;
}

async function run(args: string[], env: Record<string, string>, cwd?: string) {
  const child = Bun.spawn(["bun", MAIN, ...args], { env: cleanEnv(env), stdout: "pipe", stderr: "pipe", ...(cwd ? { cwd } : {}) });
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, code };
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

  it("token refuses unclear arguments", async () => {
    const { stderr, code } = await run(["token"], TEST_ENV);
    expect(code).toBe(1);
    expect(stderr).toBe("passerelle: token needs exactly one of --admin or --tenant <ten_…>\n");
  });

  it("stops on bad configuration with one line naming the variable", async () => {
    const { stderr, code } = await run(["serve"], { NODE_ENV: "production", JWT_SECRET: "x".repeat(40) });
    expect(code).toBe(1);
    expect(stderr).toBe("passerelle: Invalid configuration: ENCRYPTION_KEYS is required when NODE_ENV=production\n");
    const bad = await run(["serve"], { ...TEST_ENV, PORT: "http" });
    expect(bad.code).toBe(1);
    expect(bad.stderr.trimEnd().split("\n")).toEqual([expect.stringContaining("Invalid configuration: PORT")]);
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
      .values({ id: `pcr_${ulid()}`, tenant_id: tenantId, provider: "providerB", environment: "sandbox", version: 1, sealed: { masterKey: await v1.seal("mk_rotate_me", context) }, masked: {} })
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
    const port = freePort();
    const child = Bun.spawn(["bun", MAIN, "serve"], {
      env: cleanEnv({ DATA_DIR: dataDir, PORT: String(port), METRICS_PORT: String(freePort()), SIMULATORS: "off" }),
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      expect(await becomesReady(port)).toBe(true);
      child.kill("SIGTERM");
      expect(await child.exited).toBe(0);
      const lines = (await new Response(child.stdout).text()).trim().split("\n").map((line) => JSON.parse(line));
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

  describe("token uses the server's secrets, from any folder", () => {
    it("mints, from another working directory, a token that a server on the same DATA_DIR accepts", async () => {
      const dataDir = tempDir();
      const port = freePort();
      const env = { DATA_DIR: dataDir, PORT: String(port), METRICS_PORT: String(freePort()), SIMULATORS: "off" };
      const server = Bun.spawn(["bun", MAIN, "serve"], { env: cleanEnv(env), cwd: tempDir(), stdout: "ignore", stderr: "ignore" });
      try {
        expect(await becomesReady(port)).toBe(true);
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
});
