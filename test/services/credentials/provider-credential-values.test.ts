/**
 * Provider credentials that cannot work (issue 13, point 8): a value that cannot travel in an HTTP header
 * is refused when stored, a short value is never shown whole, and a provider call that fails on our side
 * (no answer from the provider) is logged with its reason, never with a key. The gateway runs on virtual time
 * (`virtual-time.ts`): provider A's client's waits before retrying a refused connection pass as the test
 * advances the clock.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { sql } from "kysely";
import { ulid } from "ulid";
import { credentialField } from "../../../src/crypto/sealed-fields.ts";
import { createLogger } from "../../../src/logger.ts";
import { createProviderAClient } from "../../../src/providers/providerA/client.ts";
import { ProviderCallError } from "../../../src/providers/provider.ts";
import { failureReason } from "../../../src/providers/failure-reason.ts";
import { putCredentials } from "../../../src/services/credentials/provider-credentials.ts";
import { startTestGateway, type TestGateway } from "../../support/gateway.ts";
import { freePort } from "../../support/ports.ts";
import { advanceThroughWaits, virtualTime } from "../../support/virtual-time.ts";

let tg: TestGateway;
let admin: string;
/** Nothing listens there: provider B's calls are refused before any answer. */
let deadPort: number;
const time = virtualTime();

const send = (method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}) =>
  tg.request(path, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });

const setB = { environment: "sandbox", masterKey: "mk_test_aaaa1111", privateKey: "test_private_bbbb2222", token: "tk_test_cccc3333" };
/** The service's own provider A key (its calls go to the dead port too). */
const SERVICE_KEY = "sk_sandbox_service_0123456789";
const RULE = "must contain only visible ASCII characters: no spaces, line breaks, accents or typographic characters like …";

const checkoutBody = {
  amount: 5000,
  description: "Commande 42",
  returnUrl: "https://shop.example/merci",
  cancelUrl: "https://shop.example/panier",
  customer: { name: "Awa Diop" },
};

async function storedSets(tenantId: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`select count(*)::int as n from provider_credentials where tenant_id = ${tenantId}`.execute(tg.gateway.deps.db);
  return rows[0]!.n;
}

beforeAll(async () => {
  deadPort = await freePort();
  tg = await startTestGateway(
    {
      PROVIDER_B_SANDBOX_URL: `http://127.0.0.1:${deadPort}/sandbox-api/v1`,
      PROVIDER_B_LIVE_URL: `http://127.0.0.1:${deadPort}/api/v1`,
      PROVIDER_A_SANDBOX_URL: `http://127.0.0.1:${deadPort}`,
      PROVIDER_A_SANDBOX_SECRET_KEY: SERVICE_KEY,
      PROVIDER_A_SANDBOX_WEBHOOK_SECRET: "wh_sandbox_service_0123456789",
      PROVIDER_TIMEOUT_MS: "2000",
    },
    { time },
  );
  admin = await tg.adminToken();
}, 60_000);
afterAll(() => tg.close(), 30_000);

describe("PUT /tenants/{tenant_id}/credentials/{provider}", () => {
  it("refuses a value that cannot travel in an HTTP header with 400 naming the field, and stores nothing", async () => {
    const tenantId = await tg.insertTenant();
    for (const bad of ["…", "mk_test_aaaa\n1111", "clé_secrète_1234", " mk_test_aaaa1111", "mk test aaaa1111"]) {
      const response = await send("PUT", `/tenants/${tenantId}/credentials/providerB`, admin, { ...setB, masterKey: bad });
      expect(response.status, JSON.stringify(bad)).toBe(400);
      expect(await response.json()).toMatchObject({ statusCode: 400, code: "validation_failed", message: [`masterKey ${RULE}`] });
    }
    // The README's example as typed: every field is the ellipsis.
    const copied = await send("PUT", `/tenants/${tenantId}/credentials/providerB`, admin, {
      environment: "sandbox",
      masterKey: "…",
      privateKey: "…",
      token: "…",
      publicKey: "…",
    });
    expect(((await copied.json()) as { message: string[] }).message).toEqual(
      ["masterKey", "privateKey", "token", "publicKey"].map((field) => `${field} ${RULE}`),
    );
    const providerA = await send("PUT", `/tenants/${tenantId}/credentials/providerA`, admin, {
      environment: "sandbox",
      secretKey: "sk_sandbox_…",
      webhookSecret: "wh_sandbox_abcd1234",
    });
    expect(providerA.status).toBe(400);
    expect(((await providerA.json()) as { message: string[] }).message).toEqual([`secretKey ${RULE}`]);

    expect(await storedSets(tenantId)).toBe(0);
    const listed = (await (await send("GET", `/tenants/${tenantId}/credentials/providerB`, admin)).json()) as { data: unknown[] };
    expect(listed.data).toEqual([]);
  });

  it("refuses such a value from any other caller of the service too", async () => {
    const tenantId = await tg.insertTenant();
    const stored = putCredentials(tg.gateway.deps, {
      tenantId,
      provider: "providerB",
      environment: "sandbox",
      fields: { ...setB, token: "tk_test\r\ncccc3333" },
    });
    await expect(stored).rejects.toMatchObject({ status: 400, messages: [`token ${RULE}`] });
    expect(await storedSets(tenantId)).toBe(0);
  });

  it("never shows a value shorter than 12 characters whole: it is masked as … alone", async () => {
    const tenantId = await tg.insertTenant();
    const response = await send("PUT", `/tenants/${tenantId}/credentials/providerB`, admin, {
      environment: "sandbox",
      masterKey: "abc",
      privateKey: "short_key01",
      token: "exactly_12ch",
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ masterKey: "…", privateKey: "…", token: "…12ch", publicKey: null });
    const listed = (await (await send("GET", `/tenants/${tenantId}/credentials/providerB`, admin)).json()) as { data: Record<string, unknown>[] };
    expect(listed.data[0]).toMatchObject({ masterKey: "…", privateKey: "…", token: "…12ch" });
  });
});

describe("a provider call that fails on our side", () => {
  const logLinesOf = (provider: string) => tg.logs.filter((line) => line.msg === "provider call failed before an answer" && line.provider === provider);

  it("answers 502 and logs the provider, the operation and the reason, without a key", async () => {
    const tenantId = await tg.insertTenant();
    expect((await send("PUT", `/tenants/${tenantId}/credentials/providerB`, admin, setB)).status).toBe(200);
    const before = logLinesOf("providerB").length;
    const token = await tg.tenantToken(tenantId);
    const response = await send("POST", "/providerB/checkout", token, checkoutBody, { "x-tenant-id": tenantId });
    expect(response.status).toBe(502);
    const lines = logLinesOf("providerB").slice(before);
    expect(lines.length).toBe(1);
    expect(lines[0]).toMatchObject({ level: 40, provider: "providerB", operation: "POST /checkout-invoice/create" });
    expect(String(lines[0]!.reason)).toMatch(/ECONNREFUSED|Unable to connect/);
    const everything = JSON.stringify(tg.logs);
    for (const key of [setB.masterKey, setB.privateKey, setB.token]) expect(everything).not.toContain(key);
  });

  it("logs the same for every kind of call: a permit, a direct payment on the service's provider A account", async () => {
    const tenantId = await tg.insertTenant();
    expect((await send("PUT", `/tenants/${tenantId}/credentials/providerB`, admin, setB)).status).toBe(200);
    const token = await tg.tenantToken(tenantId);
    const permit = await send(
      "POST",
      "/providerB/permits",
      token,
      {
        customer: { name: "Awa Diop", phone: "+221770000000" },
        description: "Abonnement",
        maxAmount: 20000,
        returnUrl: "https://shop.example/ok",
        cancelUrl: "https://shop.example/non",
      },
      { "x-tenant-id": tenantId },
    );
    expect(permit.status).toBe(502);
    expect(logLinesOf("providerB").map((line) => line.operation)).toContain("POST /permit/create");

    const answer = send(
      "POST",
      "/providerA/direct-payment",
      token,
      {
        description: "Order 1042",
        amount: 500,
        payment_method: "mnoA_open",
        phone_number: { number: "+22997000000", country: "bj" },
        firstname: "Ada",
        lastname: "Lovelace",
      },
      { "x-tenant-id": tenantId },
    );
    // Provider A's client tries three times, 100 ms then 400 ms apart on the gateway's timers.
    await advanceThroughWaits(time, [100, 400], { what: "provider A's client" });
    const direct = await answer;
    expect(direct.status).toBe(502);
    const lines = logLinesOf("providerA");
    expect(lines.map((line) => line.operation)).toContain("POST /v1/transactions");
    expect(String(lines.at(-1)!.reason)).toMatch(/ECONNREFUSED|Unable to connect/);
    expect(JSON.stringify(tg.logs)).not.toContain(SERVICE_KEY);
  });

  it("says why a set stored before values were checked cannot be sent", async () => {
    // A set with the README's ellipsis, stored as an older version of the gateway accepted it.
    const tenantId = await tg.insertTenant();
    const deps = tg.gateway.deps;
    const seal = (name: string, value: string) => deps.keyring.seal(value, { tenantId, field: credentialField("providerB", name) });
    await deps.db
      .insertInto("provider_credentials")
      .values({
        id: `pcr_${ulid()}`,
        tenant_id: tenantId,
        provider: "providerB",
        environment: "sandbox",
        version: 1,
        active: true,
        sealed: { masterKey: await seal("masterKey", "…"), privateKey: await seal("privateKey", setB.privateKey), token: await seal("token", setB.token) },
        masked: { masterKey: "…", privateKey: "…2222", token: "…3333", publicKey: null },
      })
      .execute();
    const before = logLinesOf("providerB").length;
    const response = await send("POST", "/providerB/checkout", await tg.tenantToken(tenantId), checkoutBody, { "x-tenant-id": tenantId });
    expect(response.status).toBe(502);
    const lines = logLinesOf("providerB").slice(before);
    expect(lines.length).toBe(1);
    expect(String(lines[0]!.reason)).toContain("PAYDUNYA-MASTER-KEY");
    expect(JSON.stringify(lines[0])).not.toContain(setB.privateKey);
  });

  it("logs provider A's the same way, after the retries of a refused connection, without its secret key", async () => {
    const logs: Record<string, unknown>[] = [];
    const logger = createLogger({ logLevel: "info" }, { write: (line: string) => void logs.push(JSON.parse(line)) });
    const secretKey = "sk_sandbox_0123456789abcdef";
    const client = createProviderAClient({ baseUrl: `http://127.0.0.1:${deadPort}`, secretKey, timeoutMs: 2000, connectRetryDelaysMs: [10], logger });
    const failure = await client.getTransaction(42).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ProviderCallError);
    expect((failure as ProviderCallError).kind).toBe("unreachable");
    expect(logs.length).toBe(1);
    expect(logs[0]).toMatchObject({ level: 40, provider: "providerA", operation: "GET /v1/transactions/42", msg: "provider call failed before an answer" });
    expect(String(logs[0]!.reason)).toMatch(/ECONNREFUSED|Unable to connect/);

    const badKey = createProviderAClient({ baseUrl: `http://127.0.0.1:${deadPort}`, secretKey: "sk_sandbox_…", timeoutMs: 2000, logger });
    await expect(badKey.getTransaction(42)).rejects.toBeInstanceOf(ProviderCallError);
    expect(String(logs[1]?.reason)).toMatch(/authorization/i);
    expect(JSON.stringify(logs)).not.toContain(secretKey);
  });

  it("cuts the keys out of a reason that quotes them", () => {
    const reason = failureReason(new TypeError("could not send mk_live_secret_42 to test_private_xyz", { cause: new Error("refused: mk_live_secret_42") }), [
      "mk_live_secret_42",
      "test_private_xyz",
      undefined,
    ]);
    expect(reason).toBe("TypeError: could not send [redacted] to [redacted] (cause: Error: refused: [redacted])");
  });
});
