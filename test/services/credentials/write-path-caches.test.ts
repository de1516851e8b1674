// The write paths' performance helpers (issue 8): precompiled statements, and the per-process cache of
// opened provider credentials with its staleness rules.
import { createProviderRegistry } from "../../../src/providers/registry.ts";
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ulid } from "ulid";
import { createKeyring, type Keyring } from "../../../src/crypto/seal.ts";
import { precompile } from "../../../src/db/precompiled.ts";
import { createGatewayCaches } from "../../../src/services/caches.ts";
import { ACTIVE_CREDENTIALS_CACHE_MS, deactivateCredentials, openCredentials, putCredentials } from "../../../src/services/credentials/provider-credentials.ts";
import type { Deps } from "../../../src/services/deps.ts";
import { createTestDatabase, type TestDatabase } from "../../support/db.ts";

let database: TestDatabase;
let keyring: Keyring;
let tenantId: string;

beforeAll(async () => {
  database = await createTestDatabase();
  keyring = await createKeyring([{ version: 1, key: new Uint8Array(32).fill(7) }]);
  tenantId = `ten_${ulid()}`;
  await database.db.insertInto("tenants").values({ id: tenantId, name: "Cache", store_name: "Cache Store" }).execute();
}, 60_000);
afterAll(() => database.dispose(), 30_000);

describe("precompiled statements", () => {
  const selectTenant = precompile<{ id: string }>()((db, p) => db.selectFrom("tenants").select(["id", "store_name"]).where("id", "=", p.id));
  const renameTenant = precompile<{ id: string; store_name: string; updated_at: Date }>()((db, p) =>
    db.updateTable("tenants").set({ store_name: p.store_name, updated_at: p.updated_at }).where("id", "=", p.id).returning(["store_name"]),
  );

  it("runs with new values each time, as the query builder would", async () => {
    expect((await selectTenant(database.db, { id: tenantId })).rows).toEqual([{ id: tenantId, store_name: "Cache Store" }]);
    expect((await selectTenant(database.db, { id: "ten_none" })).rows).toEqual([]);
    const renamed = await renameTenant(database.db, { id: tenantId, store_name: "Renamed", updated_at: new Date() });
    expect(renamed.rows).toEqual([{ store_name: "Renamed" }]);
    expect(renamed.numAffectedRows).toBe(1n);
    await database.db.transaction().execute(async (tx) => {
      await renameTenant(tx, { id: tenantId, store_name: "Cache Store", updated_at: new Date() });
      expect((await selectTenant(tx, { id: tenantId })).rows[0]?.store_name).toBe("Cache Store");
    });
  });

  // One compiled form per shape (from the webhook delivery's former `compiledStatement` tests).
  const byShape = precompile<{ id: string; name: string }>()((db, p, shape) => {
    let query = db.selectFrom("tenants").select(["id", "store_name"]).where("id", "=", p.id);
    if (shape === "named") query = query.where("store_name", "=", p.name);
    return query;
  });

  it("keeps one compiled form per shape, each run with that call's values", async () => {
    await database.db
      .insertInto("tenants")
      .values({ id: "ten_shape_b", name: "B", store_name: "B" })
      .onConflict((oc) => oc.doNothing())
      .execute();
    expect((await byShape(database.db, { id: tenantId, name: "" })).rows).toEqual([{ id: tenantId, store_name: "Cache Store" }]);
    expect((await byShape(database.db, { id: "ten_shape_b", name: "" })).rows).toEqual([{ id: "ten_shape_b", store_name: "B" }]);
    expect((await byShape(database.db, { id: "ten_shape_b", name: "A" }, "named")).rows).toEqual([]);
    expect((await byShape(database.db, { id: "ten_shape_b", name: "B" }, "named")).rows).toEqual([{ id: "ten_shape_b", store_name: "B" }]);
    // The default shape is still the one without the name condition.
    expect((await byShape(database.db, { id: tenantId, name: "B" })).rows).toEqual([{ id: tenantId, store_name: "Cache Store" }]);
  });

  it("refuses a value missing from the run, only in the shapes that use it", async () => {
    await expect(byShape(database.db, { id: tenantId } as never, "named")).rejects.toThrow('no value for "name"');
    expect((await byShape(database.db, { id: tenantId } as never)).rows).toHaveLength(1);
  });

  it("refuses an undefined value and a placeholder that is not a whole parameter", async () => {
    await expect(selectTenant(database.db, { id: undefined as unknown as string })).rejects.toThrow('no value for "id"');
    const nested = precompile<{ id: string; rps: number }>()((db, p) =>
      db
        .updateTable("tenants")
        .set({ rate_limit: { rps: p.rps, burst: 10 } })
        .where("id", "=", p.id),
    );
    await expect(nested(database.db, { id: tenantId, rps: 5 })).rejects.toThrow('the value "rps" is not a whole parameter');
  });
});

describe("opened provider credentials are cached per process", () => {
  const caches = createGatewayCaches();
  // The fields of a set are the ones its provider declares, read from the registry.
  const providers = createProviderRegistry();
  const deps = () => ({ db: database.db, keyring, now: () => new Date(), caches, providers }) as unknown as Deps;
  const lookup = { provider: "providerB" as const, environment: "sandbox" as const };

  it("serves a stored or deactivated set at once in this process, and the active set again after the bound", async () => {
    expect(await openCredentials(deps(), { tenantId, ...lookup })).toBeNull();
    await putCredentials(deps(), { tenantId, ...lookup, fields: { masterKey: "mk_1", privateKey: "pk_1", token: "tk_1" } });
    const first = await openCredentials(deps(), { tenantId, ...lookup });
    expect(first).toMatchObject({ version: 1, fields: { masterKey: "mk_1", privateKey: "pk_1", token: "tk_1" } });
    expect(Object.isFrozen(first!.fields)).toBe(true);

    // Another instance stores version 2 (a write this process did not make): seen within the bound.
    await database.db.updateTable("provider_credentials").set({ active: false }).where("tenant_id", "=", tenantId).execute();
    await database.db
      .insertInto("provider_credentials")
      .values({
        id: `pcr_${ulid()}`,
        tenant_id: tenantId,
        ...lookup,
        version: 2,
        active: true,
        sealed: { masterKey: await keyring.seal("mk_2", { tenantId, field: "providerB.masterKey" }) },
        masked: {},
      })
      .execute();
    expect((await openCredentials(deps(), { tenantId, ...lookup }))?.version).toBe(1);
    await Bun.sleep(ACTIVE_CREDENTIALS_CACHE_MS + 50);
    expect(await openCredentials(deps(), { tenantId, ...lookup })).toMatchObject({ version: 2, fields: { masterKey: "mk_2" } });
    // A payment's own version stays readable after the active set moved on.
    expect((await openCredentials(deps(), { tenantId, ...lookup, version: 1 }))?.fields.masterKey).toBe("mk_1");

    // This process's own deactivation is seen at once.
    await deactivateCredentials(deps(), { tenantId, ...lookup });
    expect(await openCredentials(deps(), { tenantId, ...lookup })).toBeNull();
    await putCredentials(deps(), { tenantId, ...lookup, fields: { masterKey: "mk_3", privateKey: "pk_3", token: "tk_3" } });
    expect((await openCredentials(deps(), { tenantId, ...lookup }))?.fields.masterKey).toBe("mk_3");
  }, 15_000);

  it("shares one read between concurrent callers, and forgets a read that failed", async () => {
    const other = `ten_${ulid()}`;
    await database.db.insertInto("tenants").values({ id: other, name: "Other", store_name: "Other" }).execute();
    await database.db
      .insertInto("provider_credentials")
      .values({ id: `pcr_${ulid()}`, tenant_id: other, ...lookup, version: 1, active: true, sealed: { masterKey: "v1:not-a-sealed-value" }, masked: {} })
      .execute();
    const [a, b] = [openCredentials(deps(), { tenantId: other, ...lookup }), openCredentials(deps(), { tenantId: other, ...lookup })];
    expect(a).toBe(b);
    await expect(a).rejects.toThrow();
    await database.db
      .updateTable("provider_credentials")
      .set({ sealed: { masterKey: await keyring.seal("mk_fixed", { tenantId: other, field: "providerB.masterKey" }) } })
      .where("tenant_id", "=", other)
      .execute();
    expect((await openCredentials(deps(), { tenantId: other, ...lookup }))?.fields.masterKey).toBe("mk_fixed");
  });
});
