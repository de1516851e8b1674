import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { sql } from "kysely";
import { ulid } from "ulid";
import { createKeyring, SealError, type Keyring } from "../../src/crypto/seal.ts";
import { credentialField, tenantSecretField } from "../../src/crypto/sealed-fields.ts";
import { rotateSealedSecrets } from "../../src/services/keys/rotate-sealed.ts";
import { ENDPOINT_SECRET_FIELD } from "../../src/services/webhooks/endpoints.ts";
import { startTestGateway, type TestGateway } from "../support/gateway.ts";

const key = (fill: number) => new Uint8Array(32).fill(fill);
let v1: Keyring;
const context = { tenantId: "ten_01JAAAAAAAAAAAAAAAAAAAAAAA", field: "providerB.masterKey" };

beforeAll(async () => {
  v1 = await createKeyring([{ version: 1, key: key(1) }]);
});

describe("sealing secrets (AES-256-GCM)", () => {
  it("opens what it sealed, with a fresh IV each time, in the v<N>: format", async () => {
    const a = await v1.seal("mk_live_secret", context);
    const b = await v1.seal("mk_live_secret", context);
    expect(a).toMatch(/^v1:[A-Za-z0-9+/]+=*$/);
    expect(a).not.toBe(b);
    expect(a).not.toContain("mk_live_secret");
    expect(await v1.open(a, context)).toBe("mk_live_secret");
    expect(await v1.open(b, context)).toBe("mk_live_secret");
  });

  it("refuses a ciphertext moved to another tenant or another field", async () => {
    const sealed = await v1.seal("mk_live_secret", context);
    await expect(v1.open(sealed, { ...context, tenantId: "ten_01JBBBBBBBBBBBBBBBBBBBBBBB" })).rejects.toThrow(SealError);
    await expect(v1.open(sealed, { ...context, field: "providerB.privateKey" })).rejects.toThrow(SealError);
  });

  it("refuses a tampered byte and an unknown key version", async () => {
    const sealed = await v1.seal("mk_live_secret", context);
    const bytes = Buffer.from(sealed.slice(3), "base64");
    bytes[bytes.length - 20]! ^= 0x01;
    await expect(v1.open(`v1:${bytes.toString("base64")}`, context)).rejects.toThrow(SealError);
    await expect(v1.open(sealed.replace(/^v1:/, "v9:"), context)).rejects.toThrow("No encryption key with version 9");
    const otherKey = await createKeyring([{ version: 1, key: key(2) }]);
    await expect(otherKey.open(sealed, context)).rejects.toThrow(SealError);
  });
});

describe("passerelle keys rotate (rotateSealedSecrets)", () => {
  let tg: TestGateway;
  beforeAll(async () => {
    tg = await startTestGateway();
  }, 60_000);
  afterAll(() => tg.close(), 30_000);

  it("re-seals every stored secret under the first key, keeps them readable, and leaves no old version", async () => {
    const db = tg.gateway.deps.db;
    const tenantId = await tg.insertTenant();
    const plain = { masterKey: "mk_test_0001", privateKey: "pk_test_0002", token: "tk_test_0003" };
    const sealed: Record<string, string> = {};
    for (const [name, value] of Object.entries(plain)) sealed[name] = await v1.seal(value, { tenantId, field: credentialField("providerB", name) });
    await db
      .insertInto("provider_credentials")
      .values({ id: `pcr_${ulid()}`, tenant_id: tenantId, provider: "providerB", environment: "sandbox", version: 1, sealed, masked: { masterKey: "0001" } })
      .execute();
    await db
      .insertInto("tenant_secrets")
      .values({
        id: `tsc_${ulid()}`,
        tenant_id: tenantId,
        kind: "callback",
        sealed_secret: await v1.seal("whsec_callback", { tenantId, field: tenantSecretField("callback") }),
      })
      .execute();

    const endpointId = `whe_${ulid()}`;
    await db
      .insertInto("webhook_endpoints")
      .values({ id: endpointId, tenant_id: tenantId, environment: "sandbox", url: "https://hooks.example.com/x" })
      .execute();
    await db
      .insertInto("webhook_endpoint_secrets")
      .values({
        id: `whs_${ulid()}`,
        endpoint_id: endpointId,
        tenant_id: tenantId,
        sealed_secret: await v1.seal("whsec_endpoint", { tenantId, field: ENDPOINT_SECRET_FIELD }),
      })
      .execute();

    // The plaintext never reaches the database.
    const raw =
      JSON.stringify((await sql`select * from provider_credentials`.execute(db)).rows) +
      JSON.stringify((await sql`select * from tenant_secrets`.execute(db)).rows);
    for (const value of [...Object.values(plain), "whsec_callback"]) expect(raw).not.toContain(value);

    const v2 = await createKeyring([
      { version: 2, key: key(3) },
      { version: 1, key: key(1) },
    ]);
    expect(await rotateSealedSecrets({ db }, v2)).toEqual({ resealed: 5, current: 0 });
    expect(await rotateSealedSecrets({ db }, v2)).toEqual({ resealed: 0, current: 5 });

    const onlyV2 = await createKeyring([{ version: 2, key: key(3) }]);
    const row = await db.selectFrom("provider_credentials").select("sealed").where("tenant_id", "=", tenantId).executeTakeFirstOrThrow();
    for (const [name, value] of Object.entries(row.sealed)) {
      expect(value).toStartWith("v2:");
      expect(await onlyV2.open(value, { tenantId, field: credentialField("providerB", name) })).toBe(plain[name as keyof typeof plain]);
    }
    const secret = await db.selectFrom("tenant_secrets").select("sealed_secret").where("tenant_id", "=", tenantId).executeTakeFirstOrThrow();
    expect(secret.sealed_secret).toStartWith("v2:");
    expect(await onlyV2.open(secret.sealed_secret, { tenantId, field: tenantSecretField("callback") })).toBe("whsec_callback");
    const endpointSecret = await db
      .selectFrom("webhook_endpoint_secrets")
      .select("sealed_secret")
      .where("endpoint_id", "=", endpointId)
      .executeTakeFirstOrThrow();
    expect(await onlyV2.open(endpointSecret.sealed_secret, { tenantId, field: ENDPOINT_SECRET_FIELD })).toBe("whsec_endpoint");
  });
});
