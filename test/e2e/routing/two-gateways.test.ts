/**
 * Two gateways on one database (issue 27, point 2): each keeps the tenant's route lists and accounts in its
 * own memory (`routing/route-cache.ts`), and a change made through one — `PUT /routing`, provider credentials
 * stored or deactivated — is obeyed by the other's very next `POST /payments` and `POST /payments/quote`,
 * though the other had just used (and cached) the old routing. The two gateways share one database handle (a
 * pool on PostgreSQL with `DATABASE_URL`, PGlite embedded) and nothing else: each keeps its own caches.
 * Two gateway processes on one PostgreSQL, through PgBouncer too, are `routing-across-processes.test.ts`.
 * Both simulators over real HTTP: MTN Benin is served by provider A (the service's account) and provider B
 * (the tenant's keys); Wave Senegal by provider B only.
 *
 * The second gateway's statements are logged (`statement-log.ts`): a payment of an unchanged tenant makes two
 * statements of its own, as a direct payment does (issue 27, point 2: at most three round trips), then the
 * call's audit log entry, one statement of its own (`with head as (insert into audit_chain_heads …`).
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createProviderASimulator } from "../../../src/providers/providerA/simulator/mod.ts";
import type { TestDatabase } from "../../support/db.ts";
import { createTestDatabase, type RigGateway, type SimulatorServer, startRigGateway, startSimulator } from "../../support/provider-b-rig.ts";
import { logStatements, type StatementLog } from "../../support/statement-log.ts";

type Body = Record<string, any>;

const simA = createProviderASimulator({ approveDelayMs: 50 });
let serverA: ReturnType<typeof Bun.serve>;
let simB: SimulatorServer;
let database: TestDatabase;
let one: RigGateway;
let two: RigGateway;
let tenantId: string;
/** What the second gateway sends to the database. */
let sent: StatementLog;

async function call(gw: RigGateway, method: string, path: string, body?: unknown): Promise<{ status: number; body: Body }> {
  const response = await gw.call(method, path, tenantId, body);
  return { status: response.status, body: (await response.json()) as Body };
}

let phone = 0;
const mtn = () => ({
  amount: 500,
  description: "Order",
  operator: "mtn",
  customer: { phone: { number: `+229971${String(++phone).padStart(5, "0")}`, country: "bj" }, email: "client@example.com" },
});
const wave = () => ({ amount: 500, description: "Order", operator: "wave", customer: { phone: { number: "+221770000123", country: "sn" } } });

/** A payment made through `gw`: which provider it went to, on which credential version. */
async function pay(gw: RigGateway, body: Body): Promise<{ status: number; provider?: string; credentialVersion?: number | null; body: Body }> {
  const created = await call(gw, "POST", "/payments", body);
  if (created.status !== 200) return { status: created.status, body: created.body };
  const row = await database.db.selectFrom("payments").select(["provider", "credential_version"]).where("id", "=", created.body.id).executeTakeFirstOrThrow();
  return { status: 200, provider: row.provider, credentialVersion: row.credential_version, body: created.body };
}

async function quotedRoutes(gw: RigGateway, body: Body): Promise<{ routes: string[]; notConfigured: string | null }> {
  const quote = await call(gw, "POST", "/payments/quote", body);
  expect(quote.status).toBe(200);
  return { routes: quote.body.routes.map((r: Body) => r.provider), notConfigured: quote.body.notConfigured };
}

beforeAll(async () => {
  serverA = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: simA.fetch });
  const urlA = `http://127.0.0.1:${serverA.port}`;
  const accountA = (await (await fetch(`${urlA}/_sim/accounts`, { method: "POST" })).json()) as { secretKey: string; webhookSecret: string };
  simB = await startSimulator();
  database = await createTestDatabase();
  const env = {
    PROVIDER_A_SANDBOX_URL: urlA,
    PROVIDER_A_SANDBOX_SECRET_KEY: accountA.secretKey,
    PROVIDER_A_SANDBOX_WEBHOOK_SECRET: accountA.webhookSecret,
    // The route list's order decides: no payment is sent first to a weaker route at random.
    ROUTING_EXPLORE_SHARE: "0",
  };
  one = await startRigGateway({ sim: simB, database, env });
  sent = logStatements(database);
  two = await startRigGateway({ sim: simB, database: sent.database, env, workers: false });
  await fetch(`${urlA}/_sim/accounts/${accountA.secretKey}/webhook`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ url: `${one.url}/providerA/webhook/sandbox` }),
  });
  ({ tenantId } = await one.tenantWithAccount(simB));
}, 60_000);

afterAll(async () => {
  await two?.close();
  await one?.close();
  await simB?.stop();
  await serverA?.stop(true);
  simA.close();
  await database?.dispose();
});

/** A statement's first words, up to its first table (`transaction` as it is). */
const opening = (statement: string) => /^.*?"(payments|payment_attempts)"( set)?|^\S+( \S+){0,3}/.exec(statement)![0];

describe("two gateways on one database", () => {
  it("a route list set through one is followed by the other's next payment", async () => {
    // The second gateway pays with the default list (provider A first) and keeps it.
    expect((await pay(two, mtn())).provider).toBe("providerA");
    expect((await pay(two, mtn())).provider).toBe("providerA");

    const put = await call(one, "PUT", "/routing", { rules: [{ operator: "mtn", country: "bj", providers: ["providerB", "providerA"] }] });
    expect(put.status).toBe(200);
    expect((await quotedRoutes(two, mtn())).routes).toEqual(["providerB", "providerA"]);
    expect((await pay(two, mtn())).provider).toBe("providerB");

    // And back to the default through the first gateway.
    expect((await call(one, "PUT", "/routing", { rules: [{ operator: "mtn", country: "bj", providers: [] }] })).status).toBe(200);
    expect((await pay(two, mtn())).provider).toBe("providerA");
    expect((await quotedRoutes(two, mtn())).routes).toEqual(["providerA", "providerB"]);
  }, 60_000);

  it("provider credentials deactivated and stored again through one are obeyed by the other's next payment", async () => {
    expect((await call(one, "PUT", "/routing", { rules: [{ operator: "mtn", country: "bj", providers: ["providerB", "providerA"] }] })).status).toBe(200);
    const before = await pay(two, mtn());
    expect(before.provider).toBe("providerB");
    expect((await pay(two, wave())).provider).toBe("providerB");

    // Deactivated through the first gateway: the second no longer has a provider B account for the tenant.
    expect((await call(one, "DELETE", `/tenants/${tenantId}/credentials/providerB/sandbox`)).status).toBe(200);
    expect(await pay(two, mtn())).toMatchObject({ status: 200, provider: "providerA" });
    const refused = await pay(two, wave());
    expect(refused.status).toBe(424);
    expect(refused.body).toMatchObject({ code: "not_configured", message: expect.stringContaining("no provider B credentials") });
    expect(await quotedRoutes(two, wave())).toMatchObject({ routes: [], notConfigured: expect.stringContaining("provider B credentials") });

    // Stored again through the first gateway (a new version): the second pays on it at once, though it had just refused.
    const keys = await simB.account();
    const stored = await call(one, "PUT", `/tenants/${tenantId}/credentials/providerB`, { ...keys, environment: "sandbox" });
    expect(stored.status).toBe(200);
    expect(stored.body.version).toBeGreaterThan(before.credentialVersion ?? 0);
    expect(await pay(two, wave())).toMatchObject({ status: 200, provider: "providerB", credentialVersion: stored.body.version });
    expect(await pay(two, mtn())).toMatchObject({ status: 200, provider: "providerB", credentialVersion: stored.body.version });
    expect((await quotedRoutes(two, mtn())).routes).toEqual(["providerB", "providerA"]);
  }, 60_000);

  it("makes an unchanged tenant's payments without reading its routing again", async () => {
    const reads = two.gateway.deps.caches.routing.snapshots;
    const cached = reads.get(`${tenantId}\u0000sandbox`);
    expect(cached).toBeDefined();
    expect((await pay(two, mtn())).provider).toBe("providerB");
    // The same snapshot object served the payment: nothing was read again.
    expect(reads.get(`${tenantId}\u0000sandbox`)).toBe(cached!);
  }, 30_000);

  it("makes a payment of an unchanged tenant in two statements of its own, as a direct payment", async () => {
    // Provider A first again (its approvals go to the first gateway); warm: the tenant, its routing and its
    // accounts are this gateway's to keep.
    expect((await call(one, "PUT", "/routing", { rules: [{ operator: "mtn", country: "bj", providers: [] }] })).status).toBe(200);
    expect((await pay(two, mtn())).provider).toBe("providerA");
    sent.statements.length = 0;
    const routed = await call(two, "POST", "/payments", mtn());
    expect(routed.status).toBe(200);
    // Reads each process makes at most once a second, whichever request comes then: the tenant, a provider's
    // active credentials, the wallet's success rates (two routes with an account here).
    const everySecond = /from "(tenants|provider_credentials|route_outcomes)"/;
    // Not the payment's: provider B's notifications of the earlier payments, which this gateway receives — the
    // message stored, then the payment or permit it names looked up (services/ipn/receive-ipn.ts) — seen when they
    // arrive while the payment runs (a clean-clone CI check once saw the look-up).
    const background = /^insert into "ipn_messages"|^select "id", "tenant_id", "environment", "credential_version" from "(payments|permits)"/;
    const routedTrips = sent.statements.filter((statement) => !everySecond.test(statement) && !background.test(statement));
    expect(sent.statements.filter((statement) => everySecond.test(statement)).length).toBeLessThanOrEqual(3);
    // The payment and its first attempt, only while the tenant's routing is unchanged; the provider's id, the
    // attempt's and what the customer does next. Nothing of the tenant's routing is read. Then the call's audit
    // log entry (issue 30), one statement of its own (the chain's head advanced and the entry inserted from it).
    expect(routedTrips.map(opening)).toEqual([
      'with "payment" as (insert into "payments"',
      'with "attempt" as (update "payment_attempts" set',
      "with head as (",
    ]);
    expect(routedTrips[0]).toContain("routing_versions");
    expect(routed.body).toMatchObject({
      state: "pending",
      nextAction: { type: "none" },
      attempts: [{ outcome: "started", providerTransactionId: expect.any(String) }],
    });
    // What GET /payments/{id} shows of it is what the answer said.
    const read = await call(two, "GET", `/payments/${routed.body.id}`);
    expect(read.body).toMatchObject({ nextAction: routed.body.nextAction, attempts: routed.body.attempts });

    // The direct payment, for comparison: its row, then the provider's id.
    sent.statements.length = 0;
    const direct = await call(two, "POST", "/providerA/direct-payment", {
      description: "Order",
      amount: 500,
      payment_method: "mnoA_open",
      phone_number: { number: "+22997000001", country: "bj" },
    });
    expect(direct.status).toBe(200);
    expect(sent.statements.filter((statement) => !everySecond.test(statement) && !background.test(statement)).map(opening)).toEqual([
      'insert into "payments"',
      'update "payments" set',
      "with head as (",
    ]);
  }, 30_000);
});
