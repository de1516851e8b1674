/**
 * `Idempotency-Key` on `POST /providerA/direct-payment` (issue 13, points 3 and 4; contract §4 and §9),
 * over real HTTP: a started gateway, the provider A simulator on its own port behind a small proxy that
 * delays or fails the next matching request, and the simulator's ledger as the witness of what reached
 * the provider.
 *
 * - The key holds while its first request runs, however long its provider calls take: a retry meanwhile
 *   is 409, never a second payment. The gateway runs on virtual time (`virtual-time.ts`): the lock's term and
 *   its renewals pass as the test advances the clock, while the provider holds its answer.
 * - A 502/504 after which the USSD push may have reached the phone names the payment (`paymentId`, and
 *   `transactionId` when known) and is replayed to the same key; one after which nothing could still
 *   charge is not stored, so the same key runs again.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { ConfigError, loadConfig } from "../../../src/config.ts";
import { createProviderASimulator, type ProviderASimulator } from "../../../src/providers/providerA/simulator/mod.ts";
import { startTestGateway, TEST_ENV, type TestGateway } from "../../support/gateway.ts";
import { freePort } from "../../support/ports.ts";
import { advanceThroughWaits, virtualTime } from "../../support/virtual-time.ts";
import { waitUntil } from "../../support/wait.ts";

/** Per provider call (real time); the late answers below fit in it. */
const TIMEOUT_MS = 3_500;
/** The lock's term in this file: far shorter than one late provider call (see the lock test). */
const LOCK_MS = 1_000;

/**
 * What the proxy does to the next request matching `match`: a late answer is held until `until` settles (the
 * provider acted meanwhile), a hanging one outlasts the gateway's timeout, a 5xx is answered without forwarding.
 */
type Fault = { match: RegExp; kind: "late"; until: Promise<unknown> } | { match: RegExp; kind: "hang" | "fail5xx" };

/** The gateway's clock and timers (the lock's term and its renewal beats); the provider's own timeout stays real. */
const time = virtualTime();

let simulator: ProviderASimulator;
let simServer: ReturnType<typeof Bun.serve>;
let simBase: string;
let proxy: ReturnType<typeof Bun.serve>;
const faults: Fault[] = [];
/** Every request the proxy received, as `METHOD /path`. */
const upstreamCalls: string[] = [];
let account: { secretKey: string; webhookSecret: string };
let tg: TestGateway;
let tenantId: string;
let token: string;

/** Forwards to the simulator; a fault forwards and answers late (the provider acted), or answers 500 without forwarding. */
async function forward(request: Request): Promise<Response> {
  const url = new URL(request.url);
  const call = `${request.method} ${url.pathname}`;
  upstreamCalls.push(call);
  const index = faults.findIndex((fault) => fault.match.test(call));
  const fault = index >= 0 ? faults.splice(index, 1)[0] : undefined;
  if (fault?.kind === "fail5xx") return Response.json({ message: "Server error" }, { status: 500 });
  const headers = new Headers(request.headers);
  headers.delete("host");
  const forwarded = await fetch(`${simBase}${url.pathname}${url.search}`, {
    method: request.method,
    headers,
    body: request.method === "GET" ? undefined : await request.arrayBuffer(),
  });
  const body = await forwarded.arrayBuffer();
  if (fault?.kind === "late") await fault.until;
  if (fault?.kind === "hang") await Bun.sleep(TIMEOUT_MS + 1_000);
  return new Response(body, { status: forwarded.status, headers: { "content-type": "application/json" } });
}

interface Answer {
  status: number;
  /** The output, or the contract's error body (on /trpc, the one inside tRPC's envelope). */
  body: Record<string, any>;
  replayed: string | null;
}

/** `POST /providerA/direct-payment` over REST, or the same procedure over /trpc. */
async function pay(input: object, options: { key?: string; surface?: "rest" | "trpc"; gateway?: TestGateway; token?: string } = {}): Promise<Answer> {
  const surface = options.surface ?? "rest";
  const headers: Record<string, string> = { authorization: `Bearer ${options.token ?? token}`, "content-type": "application/json" };
  if (options.key) headers["idempotency-key"] = options.key;
  const path = surface === "rest" ? "/providerA/direct-payment" : "/trpc/providerA.directPayment";
  const response = await (options.gateway ?? tg).request(path, { method: "POST", headers, body: JSON.stringify(input) });
  const json = (await response.json()) as Record<string, any>;
  const body = surface === "rest" ? json : response.ok ? json.result.data : json.error.data.httpBody;
  return { status: response.status, body, replayed: response.headers.get("idempotent-replayed") };
}

let counter = 0;
/** A payment no other test makes (its description finds it in the simulator's ledger), and a fresh key. */
function fresh(label: string, amount = 2_000) {
  const description = `${label} ${++counter} ${crypto.randomUUID().slice(0, 8)}`;
  return {
    key: `key-${crypto.randomUUID()}`,
    description,
    input: { description, amount, payment_method: "mnoA_open", phone_number: { number: "+22997000000", country: "bj" } },
  };
}

/** The simulator's transactions for one test's payment: what reached the provider. */
async function providerTransactions(description: string): Promise<{ id: number; merchant_reference: string | null; push_sent: boolean }[]> {
  const listed = (await (await fetch(`${simBase}/_sim/transactions`)).json()) as {
    transactions: { id: number; description: string; merchant_reference: string | null; push_sent: boolean }[];
  };
  return listed.transactions.filter((trx) => trx.description === description);
}

async function paymentRow(paymentId: string, gateway = tg) {
  return gateway.gateway.deps.db
    .selectFrom("payments")
    .select(["state", "outcome_unknown", "provider_transaction_id", "failure_code"])
    .where("id", "=", paymentId)
    .executeTakeFirstOrThrow();
}

const withoutRequestId = (body: Record<string, unknown>) => ({ ...body, requestId: null });

beforeAll(async () => {
  simulator = createProviderASimulator({ approveDelayMs: 60_000 });
  simServer = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: simulator.fetch });
  simBase = simServer.url.toString().replace(/\/$/, "");
  proxy = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: forward });
  account = (await (await fetch(`${simBase}/_sim/accounts`, { method: "POST" })).json()) as { secretKey: string; webhookSecret: string };
  tg = await startTestGateway(
    {
      PROVIDER_A_SANDBOX_URL: proxy.url.toString().replace(/\/$/, ""),
      PROVIDER_A_SANDBOX_SECRET_KEY: account.secretKey,
      PROVIDER_A_SANDBOX_WEBHOOK_SECRET: account.webhookSecret,
      PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
    },
    { time },
  );
  // A lock far shorter than one provider call: the start-up check refuses this pair (see below), so it
  // is set past it, to show that the renewal alone holds the key while the request runs.
  tg.config.idempotencyLockMs = LOCK_MS;
  tenantId = await tg.insertTenant();
  token = await tg.tenantToken(tenantId);
}, 60_000);

afterAll(async () => {
  simulator?.close();
  await tg?.close();
  await simServer?.stop(true);
  await proxy?.stop(true);
});

describe("PROVIDER_TIMEOUT_MS and IDEMPOTENCY_LOCK_MS at start-up", () => {
  it("refuses a PROVIDER_TIMEOUT_MS whose three calls do not fit in the lock's first term, naming both settings", () => {
    let message = "";
    try {
      loadConfig({ ...TEST_ENV, PROVIDER_TIMEOUT_MS: "20000" });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message).toBe(
      "Invalid configuration: PROVIDER_TIMEOUT_MS=20000 does not fit in IDEMPOTENCY_LOCK_MS=60000: a direct payment makes 3 provider calls in turn " +
        "(3 × 20000 ms + 5000 ms = 65000 ms); set PROVIDER_TIMEOUT_MS to at most 18333 or IDEMPOTENCY_LOCK_MS to at least 65000",
    );
    expect(() => loadConfig({ ...TEST_ENV, PROVIDER_TIMEOUT_MS: "3000", IDEMPOTENCY_LOCK_MS: "10000" })).toThrow("IDEMPOTENCY_LOCK_MS=10000");
  });

  it("takes calls that fit: the defaults, and a longer timeout with a longer lock", () => {
    const defaults = loadConfig({ ...TEST_ENV });
    expect([defaults.providerTimeoutMs, defaults.idempotencyLockMs]).toEqual([15_000, 60_000]);
    expect(loadConfig({ ...TEST_ENV, PROVIDER_TIMEOUT_MS: "18333" }).providerTimeoutMs).toBe(18_333);
    const longer = loadConfig({ ...TEST_ENV, PROVIDER_TIMEOUT_MS: "20000", IDEMPOTENCY_LOCK_MS: "65000" });
    expect([longer.providerTimeoutMs, longer.idempotencyLockMs]).toEqual([20_000, 65_000]);
  });

  it("refuses an IDEMPOTENCY_LOCK_MS below one second", () => {
    expect(() => loadConfig({ ...TEST_ENV, IDEMPOTENCY_LOCK_MS: "500" })).toThrow("Invalid configuration: IDEMPOTENCY_LOCK_MS");
  });
});

describe("Idempotency-Key while a direct payment outlasts its lock's first term", () => {
  it("answers 409 to a retry after the first term, then replays the first answer: one provider transaction, one push", async () => {
    const { key, description, input } = fresh("late push");
    const providerAnswers = Promise.withResolvers<void>();
    faults.push({ match: /^POST \/v1\/mtn_open$/, kind: "late", until: providerAnswers.promise });
    const claimedAt = time.now().getTime();
    let answered = false;
    const first = pay(input, { key }).finally(() => (answered = true));

    // The push reached the provider, which holds its answer while the test moves the clock past the lock's first
    // term (LOCK_MS after the key was claimed).
    const pushes = () => upstreamCalls.filter((call) => call === "POST /v1/mtn_open").length;
    const pushesBefore = pushes();
    await waitUntil(() => pushes() > pushesBefore, { what: "the push reaching the provider", timeoutMs: 5_000, intervalMs: 5 });
    const lockedUntil = async () =>
      (await tg.gateway.deps.db.selectFrom("idempotency_keys").select("locked_until").where("key", "=", key).executeTakeFirstOrThrow()).locked_until.getTime();
    // Each beat (every third of the term) moves the lock a whole term past its own time; each renewal is written
    // before the clock moves on.
    await time.advance(LOCK_MS + 300, {
      settle: () => waitUntil(async () => (await lockedUntil()) === time.now().getTime() + LOCK_MS, { what: "the lock renewed at this beat" }),
    });
    expect(answered).toBe(false);

    const retry = await pay(input, { key });
    expect(retry.status).toBe(409);
    expect(retry.body).toMatchObject({ statusCode: 409, code: "idempotency_in_flight", error: "Conflict" });
    const [row] = await tg.gateway.deps.db.selectFrom("idempotency_keys").select(["state", "locked_until"]).where("key", "=", key).execute();
    expect(row!.state).toBe("in_flight");
    // Renewed at the third beat (a third of the term short of its end): a term past that beat.
    const beatMs = Math.floor(LOCK_MS / 3);
    expect(row!.locked_until.getTime()).toBe(claimedAt + 3 * beatMs + LOCK_MS);

    providerAnswers.resolve();
    const done = await first;
    expect(done.status).toBe(200);
    expect(done.body).toMatchObject({ ok: true, status: "pending", description });
    expect(done.body.paymentId).toMatch(/^pay_/);

    const replay = await pay(input, { key });
    expect(replay.status).toBe(200);
    expect(replay.replayed).toBe("true");
    expect(replay.body).toEqual(done.body);

    const reached = await providerTransactions(description);
    expect(reached).toHaveLength(1);
    expect(reached[0]).toMatchObject({ id: done.body.transactionId, merchant_reference: done.body.paymentId, push_sent: true });
  }, 20_000);
});

describe("Idempotency-Key after a direct payment's unknown outcome", () => {
  it("a push that got no answer in time: 504 naming paymentId and transactionId, replayed to the same key on both surfaces", async () => {
    const { key, description, input } = fresh("push timeout");
    faults.push({ match: /^POST \/v1\/mtn_open$/, kind: "hang" });
    const first = await pay(input, { key });
    expect(first.status).toBe(504);
    expect(first.replayed).toBeNull();
    const { paymentId, transactionId } = first.body;
    expect(first.body).toMatchObject({ statusCode: 504, code: "provider_timeout", error: "Gateway Timeout" });
    expect(paymentId).toMatch(/^pay_/);
    expect(transactionId).toBeInteger();
    expect(await paymentRow(paymentId)).toMatchObject({ state: "pending", outcome_unknown: true, provider_transaction_id: String(transactionId) });

    // The merchant can follow the payment it names.
    const followed = await tg.request(`/payments/${paymentId}`, { headers: { authorization: `Bearer ${token}` } });
    expect(followed.status).toBe(200);
    expect(await followed.json()).toMatchObject({ id: paymentId, state: "pending", outcomeUnknown: true });

    const again = await pay(input, { key });
    expect(again.status).toBe(504);
    expect(again.replayed).toBe("true");
    expect(withoutRequestId(again.body)).toEqual(withoutRequestId(first.body));
    const overTrpc = await pay(input, { key, surface: "trpc" });
    expect(overTrpc.status).toBe(504);
    expect(overTrpc.replayed).toBe("true");
    expect(withoutRequestId(overTrpc.body)).toEqual(withoutRequestId(first.body));

    const reached = await providerTransactions(description);
    expect(reached).toHaveLength(1);
    expect(reached[0]).toMatchObject({ id: transactionId, merchant_reference: paymentId, push_sent: true });
  }, 20_000);

  it("a 5xx on create: 502 naming paymentId (no transactionId yet), replayed to the same key without a second create", async () => {
    const { key, input } = fresh("create 5xx");
    faults.push({ match: /^POST \/v1\/transactions$/, kind: "fail5xx" });
    const creates = () => upstreamCalls.filter((call) => call === "POST /v1/transactions").length;
    const createsBefore = creates();
    const first = await pay(input, { key });
    expect(first.status).toBe(502);
    expect(first.body.code).toBe("provider_error");
    expect(first.body.paymentId).toMatch(/^pay_/);
    expect(first.body).not.toHaveProperty("transactionId");
    expect(await paymentRow(first.body.paymentId)).toMatchObject({ state: "pending", outcome_unknown: true });

    const again = await pay(input, { key });
    expect(again.status).toBe(502);
    expect(again.replayed).toBe("true");
    expect(withoutRequestId(again.body)).toEqual(withoutRequestId(first.body));
    expect(creates() - createsBefore).toBe(1);
  });

  it("a 5xx on the token call (no push sent): 502 naming nothing, not stored; the same key runs again and pays once", async () => {
    const { key, description, input } = fresh("token 5xx");
    faults.push({ match: /^POST \/v1\/transactions\/\d+\/token$/, kind: "fail5xx" });
    const first = await pay(input, { key });
    expect(first.status).toBe(502);
    expect(first.body.code).toBe("provider_error");
    expect(first.body).not.toHaveProperty("paymentId");
    expect(first.body.message).toContain("nothing was sent to the phone");
    expect(await tg.gateway.deps.db.selectFrom("idempotency_keys").select("key").where("key", "=", key).execute()).toHaveLength(0);

    const retry = await pay(input, { key });
    expect(retry.status).toBe(200);
    expect(retry.replayed).toBeNull();
    expect(retry.body).toMatchObject({ ok: true, status: "pending", description });
    const replay = await pay(input, { key });
    expect(replay.replayed).toBe("true");
    expect(replay.body).toEqual(retry.body);

    // The first transaction was created but never pushed, and its payment failed: one push in all.
    const reached = await providerTransactions(description);
    expect(reached).toHaveLength(2);
    expect(reached.filter((trx) => trx.push_sent).map((trx) => trx.merchant_reference)).toEqual([retry.body.paymentId]);
    const failed = reached.find((trx) => !trx.push_sent)!;
    expect(await paymentRow(failed.merchant_reference!)).toMatchObject({ state: "failed", failure_code: "provider_error", outcome_unknown: false });
  });

  it("a provider that refused the connection (nothing sent): 502 naming nothing, not stored; the same key runs again once it is up", async () => {
    const port = await freePort();
    // On a virtual time of its own: the client's waits before retrying the refused connection are stepped through.
    const downTime = virtualTime();
    const down = await startTestGateway(
      {
        PROVIDER_A_SANDBOX_URL: `http://127.0.0.1:${port}`,
        PROVIDER_A_SANDBOX_SECRET_KEY: account.secretKey,
        PROVIDER_A_SANDBOX_WEBHOOK_SECRET: account.webhookSecret,
        PROVIDER_TIMEOUT_MS: String(TIMEOUT_MS),
      },
      { time: downTime },
    );
    let upAgain: ReturnType<typeof Bun.serve> | undefined;
    try {
      const downToken = await down.tenantToken(await down.insertTenant());
      const { key, description, input } = fresh("refused connection");
      const answer = pay(input, { key, gateway: down, token: downToken });
      await advanceThroughWaits(downTime, [100, 400], { what: "provider A's client" });
      const first = await answer;
      expect(first.status).toBe(502);
      expect(first.body).toMatchObject({ code: "provider_error", message: "Provider A could not be reached; nothing was sent" });
      expect(first.body).not.toHaveProperty("paymentId");
      const [failed] = await down.gateway.deps.db
        .selectFrom("payments")
        .select(["id", "state", "failure_code"])
        .where("description", "=", description)
        .execute();
      expect(failed).toMatchObject({ state: "failed", failure_code: "provider_unreachable" });

      upAgain = Bun.serve({ hostname: "127.0.0.1", port, fetch: forward });
      const retry = await pay(input, { key, gateway: down, token: downToken });
      expect(retry.status).toBe(200);
      expect(retry.replayed).toBeNull();
      expect(retry.body.paymentId).not.toBe(failed!.id);
      const replay = await pay(input, { key, gateway: down, token: downToken });
      expect(replay.replayed).toBe("true");
      expect(replay.body).toEqual(retry.body);
      expect(await providerTransactions(description)).toMatchObject([{ merchant_reference: retry.body.paymentId, push_sent: true }]);
    } finally {
      await upAgain?.stop(true);
      await down.close();
    }
  }, 20_000);
});
