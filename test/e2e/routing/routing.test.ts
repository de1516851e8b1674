/**
 * Routing (issue 16) on the default providers, over real HTTP against provider A's simulator: the route
 * lists (GET/PUT /routing), the operators a tenant can take (GET /payment-methods), the quote, the window
 * the choice follows (GET /routing/stats), the attempts a payment shows, and a route's circuit that opens
 * after consecutive failures and half-opens after its pause. The gateway runs on virtual time
 * (`virtual-time.ts`): the circuit's pause, and provider A's client's waits before retrying a refused
 * connection, pass as the test advances the clock.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import type { TestGateway } from "../../support/gateway.ts";
import { type ProviderARig, startProviderARig } from "../../support/provider-a-rig.ts";
import { advanceThroughWaits, virtualTime } from "../../support/virtual-time.ts";
import { waitUntil } from "../../support/wait.ts";

type Body = Record<string, any>;

let rig: ProviderARig;
let tg: TestGateway;
let base: string;
const time = virtualTime();

function client(token: string) {
  return async (path: string, init: { method?: string; json?: unknown } = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (init.json !== undefined) headers["content-type"] = "application/json";
    const response = await fetch(`${base}${path}`, {
      method: init.method ?? "GET",
      headers,
      body: init.json === undefined ? undefined : JSON.stringify(init.json),
    });
    return { status: response.status, body: (await response.json()) as Body };
  };
}

async function tenant() {
  return client(await tg.tenantToken(await tg.insertTenant()));
}

const mtn = (amount = 500, number = "+22997000000") => ({ amount, description: "Order", operator: "mtn", customer: { phone: { number, country: "bj" } } });

/**
 * A payment sent to the live provider A, which refuses every connection: its client tries three times, waiting
 * 100 ms, then 400 ms, on the gateway's timers before trying again; the test moves virtual time through each wait.
 */
async function payOnRefusingProvider(api: ReturnType<typeof client>) {
  const answer = api("/payments", { method: "POST", json: mtn() });
  await advanceThroughWaits(time, [100, 400], { what: "provider A's client", timeoutMs: 8_000 });
  return answer;
}

beforeAll(async () => {
  rig = await startProviderARig({
    env: {
      // The live environment's provider A is a closed port: every call is refused before anything is sent.
      PROVIDER_A_LIVE_URL: "http://127.0.0.1:9",
      PROVIDER_A_LIVE_SECRET_KEY: "sk_live_unreachable",
      CIRCUIT_BREAKER_FAILURES: "3",
      CIRCUIT_BREAKER_HALF_OPEN_MS: "1500",
    },
    time,
  });
  ({ tg, base } = rig);
});

afterAll(async () => {
  await rig?.close();
});

describe("route lists", () => {
  it("lists every wallet with its default route list, and takes a tenant's own order", async () => {
    const api = await tenant();
    const routing = await api("/routing");
    expect(routing.status).toBe(200);
    const mtnBj = routing.body.routes.find((r: Body) => r.operator === "mtn" && r.country === "bj");
    expect(mtnBj).toMatchObject({ configured: false, providers: ["providerA", "providerB"], serving: ["providerA", "providerB"] });
    const reversed = await api("/routing", { method: "PUT", json: { rules: [{ operator: "mtn", country: "bj", providers: ["providerB", "providerA"] }] } });
    expect(reversed.body.routes.find((r: Body) => r.operator === "mtn" && r.country === "bj")).toMatchObject({
      configured: true,
      providers: ["providerB", "providerA"],
      serving: ["providerA", "providerB"],
    });
    const refused = await api("/routing", { method: "PUT", json: { rules: [{ operator: "airtel", country: "ne", providers: ["providerB"] }] } });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toEqual([expect.stringContaining("rules.0.providers: providerB does not serve airtel in ne")]);
    const unknown = await api("/routing", { method: "PUT", json: { rules: [{ operator: "nope", country: "bj", providers: ["providerA"] }] } });
    expect(unknown.status).toBe(400);
    const set = await api("/routing", { method: "PUT", json: { rules: [{ operator: "airtel", country: "ne", providers: ["providerA"] }] } });
    expect(set.status).toBe(200);
    expect(set.body.routes.find((r: Body) => r.operator === "airtel")).toEqual({
      operator: "airtel",
      country: "ne",
      providers: ["providerA"],
      configured: true,
      serving: ["providerA"],
    });
    const reset = await api("/routing", { method: "PUT", json: { rules: [{ operator: "airtel", country: "ne", providers: [] }] } });
    expect(reset.body.routes.find((r: Body) => r.operator === "airtel").configured).toBe(false);
    // Another tenant's lists are its own.
    const other = await tenant();
    await api("/routing", { method: "PUT", json: { rules: [{ operator: "airtel", country: "ne", providers: ["providerA"] }] } });
    expect((await other("/routing")).body.routes.find((r: Body) => r.operator === "airtel").configured).toBe(false);
  });

  it("lists the operators a tenant can take in a country, with their flow and routes", async () => {
    const api = await tenant();
    const methods = await api("/payment-methods?country=bj");
    expect(methods.status).toBe(200);
    const mtnBj = methods.body.methods.find((m: Body) => m.operator === "mtn");
    expect(mtnBj).toMatchObject({ currency: "XOF", flow: "push", otpHint: null });
    expect(mtnBj.routes[0]).toMatchObject({ provider: "providerA", method: "mnoA_open" });
    // Provider B needs the tenant's own keys: without them, it is no route of this tenant's.
    expect(mtnBj.routes.map((r: Body) => r.provider)).toEqual(["providerA"]);
    expect((await api("/payment-methods?country=BJ")).status).toBe(400);
    expect((await api("/payment-methods?country=zz")).body.methods).toEqual([]);
  });
});

describe("a routed payment", () => {
  it("answers its attempt, its reason and what the customer does next; the quote says the same without acting", async () => {
    const api = await tenant();
    const quote = await api("/payments/quote", { method: "POST", json: mtn() });
    expect(quote.status).toBe(200);
    expect(quote.body).toMatchObject({ valid: true, errors: [], operator: "mtn", country: "bj", currency: "XOF", flow: "push", notConfigured: null });
    expect(quote.body.routes[0]).toMatchObject({ provider: "providerA", fees: null });
    const badQuote = await api("/payments/quote", { method: "POST", json: { ...mtn(), customer: { phone: { number: "+22897000000", country: "bj" } } } });
    expect(badQuote.body).toMatchObject({ valid: false, errors: ["customer.phone.number must start with +229 for country bj"] });
    expect((await api("/payments")).body.data).toEqual([]);

    const created = await api("/payments", { method: "POST", json: { ...mtn(), metadata: { order: "1042" } } });
    expect(created.status).toBe(200);
    expect(created.body).toMatchObject({
      provider: "providerA",
      state: "pending",
      operator: "mtn",
      customData: { order: "1042" },
      nextAction: { type: "none" },
      attempts: [{ attempt: 1, provider: "providerA", outcome: "started" }],
    });
    expect(created.body.attempts[0].reason).toContain("first of the route list");
    expect(created.body.attempts[0].providerTransactionId).toBe(created.body.providerTransactionId);
    await waitUntil(async () => (await api(`/payments/${created.body.id}`)).body.state === "succeeded", { what: "paid", timeoutMs: 8_000 });
    // Its end counts for its route.
    const stats = await api("/routing/stats");
    const route = stats.body.routes.find((r: Body) => r.provider === "providerA" && r.operator === "mtn" && r.country === "bj");
    expect(route.succeeded).toBeGreaterThanOrEqual(1);
    expect(stats.body.windowMinutes).toBe(15);
  });
});

describe("a route's circuit", () => {
  it("opens after consecutive failures (the provider is not called then) and lets a payment through after its pause", async () => {
    const owner = await tg.insertTenant({ liveEnabled: true });
    const live = client(await tg.tenantToken(owner, "live"));
    for (let i = 0; i < 3; i++) {
      const failed = await payOnRefusingProvider(live);
      expect(failed.status).toBe(502);
      expect(failed.body.message).toContain("could not be reached");
      expect(failed.body.message).not.toContain("circuits are open");
    }
    const open = await live("/payments", { method: "POST", json: mtn() });
    expect(open.status).toBe(502);
    expect(open.body.message).toContain("circuits are open");
    const payments = (await live("/payments")).body.data as Body[];
    const skipped = (await live(`/payments/${payments[0]!.id}`)).body;
    expect(skipped).toMatchObject({ state: "failed", failureCode: "circuit_open", attempts: [{ outcome: "circuit_open" }] });
    const stats = await live("/routing/stats");
    expect(stats.body.circuits).toContainEqual({ provider: "providerA", operator: "mtn", country: "bj", circuit: "open" });
    // Not a millisecond before its pause ends: still open.
    await time.advance(1_499);
    expect((await live("/payments", { method: "POST", json: mtn() })).body.message).toContain("circuits are open");
    // After the pause one payment goes through to the provider again (still unreachable: open again).
    await time.advance(1);
    const probe = await payOnRefusingProvider(live);
    expect(probe.body.message).toContain("could not be reached");
    expect((await live("/payments", { method: "POST", json: mtn() })).body.message).toContain("circuits are open");
    // The sandbox's route is another circuit: unaffected.
    const sandbox = client(await tg.tenantToken(owner));
    expect((await sandbox("/payments", { method: "POST", json: mtn() })).status).toBe(200);
  });
});
