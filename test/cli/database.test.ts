/**
 * The command line's database commands: `migrate` and `keys rotate`, whole and killed half-way then run again
 * (test/support/cli.ts runs the command; the other test/cli files hold its other topics).
 */
import { describe, expect, it, setDefaultTimeout } from "bun:test";
import { join } from "node:path";
import { ulid } from "ulid";
import { parseEncryptionKeys } from "../../src/config.ts";
import { createKeyring } from "../../src/crypto/seal.ts";
import { credentialField } from "../../src/crypto/sealed-fields.ts";
import { openDatabase } from "../../src/db/connect.ts";
import { migrateToLatest } from "../../src/db/migrate.ts";
import { migrations } from "../../src/db/migrations/index.ts";
import { loadOrBuildPgliteSnapshot, SNAPSHOT_CACHE_DIR } from "../../src/db/pglite-snapshot.ts";
import { cliFixtures, lineReader, MAIN, run } from "../support/cli.ts";
import { TEST_ENV } from "../support/gateway.ts";
import { cleanEnv } from "../support/spawned-gateway.ts";

// Each test starts `bun src/main.ts` up to four times in turn, a second or so each, more on a busy machine
// (other test files run meanwhile).
setDefaultTimeout(60_000);

const { tempDir, cliDatabase } = cliFixtures();

describe("passerelle (the command line)", () => {
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
