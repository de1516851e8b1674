/**
 * The provider A simulator over real HTTP (providers.md "Provider A" and the simulators' control surface,
 * spec §8): accounts, bearer auth, the three calls, the sandbox outcomes by amount, idempotency, the
 * provider's error shape, signed webhooks with retries, and the sandbox console. Only 127.0.0.1 is used.
 */
import { afterAll, beforeAll, describe, expect, it } from "bun:test";
import { createHmac, timingSafeEqual } from "node:crypto";
import { Elysia } from "elysia";
import { createSimulatorApp } from "../../../src/providers/simulators.ts";
import { createProviderASimulator, type ProviderASimulator, type ProviderASimulatorOptions } from "../../../src/providers/providerA/simulator/mod.ts";
import { waitUntil } from "../../support/wait.ts";

const APPROVE_DELAY_MS = 50;

interface Running {
  simulator: ProviderASimulator;
  base: string;
  stop(): Promise<void>;
}

function startSimulator(options: ProviderASimulatorOptions = {}): Running {
  const simulator = createProviderASimulator({
    approveDelayMs: APPROVE_DELAY_MS,
    webhookRetryDelaysMs: [30, 60, 90],
    webhookTimeoutMs: 2_000,
    ...options,
  });
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: simulator.fetch });
  return {
    simulator,
    base: server.url.toString().replace(/\/$/, ""),
    async stop() {
      simulator.close();
      await server.stop(true);
    },
  };
}

interface ReceivedWebhook {
  signature: string;
  rawBody: string;
  body: { name: string; entity: Record<string, unknown> & { id: number; status: string }; [key: string]: unknown };
  answeredStatus: number;
}

/** A local webhook receiver; `failFirst` makes its first answers 500 (to see the simulator retry). */
function startReceiver() {
  const received: ReceivedWebhook[] = [];
  let failuresLeft = 0;
  let alwaysFail = false;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      const rawBody = await request.text();
      const answeredStatus = alwaysFail || failuresLeft > 0 ? 500 : 200;
      if (failuresLeft > 0) failuresLeft--;
      received.push({ signature: request.headers.get("x-fedapay-signature") ?? "", rawBody, body: JSON.parse(rawBody), answeredStatus });
      return new Response(answeredStatus === 200 ? "ok" : "boom", { status: answeredStatus });
    },
  });
  return {
    url: `${server.url.toString().replace(/\/$/, "")}/providerA/webhook/sandbox`,
    received,
    failFirst(count: number) {
      failuresLeft = count;
    },
    failAlways(value: boolean) {
      alwaysFail = value;
    },
    stop: () => server.stop(true),
  };
}

/** Verifies `t=<unix>,s=<hex>` the way a receiver must, written independently of the simulator's code. */
function verifySignature(header: string, rawBody: string, secret: string, nowSeconds = Date.now() / 1000): boolean {
  const parts = header.split(",").map((part) => part.split("=") as [string, string]);
  const t = parts.find(([key]) => key === "t")?.[1];
  const signatures = parts.filter(([key]) => key === "s").map(([, value]) => value);
  if (!t || signatures.length === 0 || Math.abs(nowSeconds - Number(t)) > 300) return false;
  const expected = Buffer.from(createHmac("sha256", secret).update(`${t}.${rawBody}`).digest("hex"));
  return signatures.some((signature) => signature.length === expected.length && timingSafeEqual(Buffer.from(signature), expected));
}

interface Account {
  secretKey: string;
  webhookSecret: string;
}

type WireTransaction = Record<string, unknown> & { id: number; status: string; amount: number; last_error_code: string | null };

function client(run: Running, account: Account) {
  const headers = (extra: Record<string, string> = {}) => ({
    authorization: `Bearer ${account.secretKey}`,
    "content-type": "application/json",
    ...extra,
  });
  const call = async (method: string, path: string, body?: unknown, extra?: Record<string, string>) => {
    const response = await fetch(`${run.base}${path}`, { method, headers: headers(extra), body: body === undefined ? undefined : JSON.stringify(body) });
    return { status: response.status, body: (await response.json()) as any };
  };
  return {
    call,
    async create(amount: number, extra: Record<string, unknown> = {}, requestHeaders?: Record<string, string>): Promise<WireTransaction> {
      const { status, body } = await call("POST", "/v1/transactions", transactionBody(amount, extra), requestHeaders);
      expect(status).toBe(200);
      return body["v1/transaction"];
    },
    async read(id: number): Promise<WireTransaction> {
      const { status, body } = await call("GET", `/v1/transactions/${id}`);
      expect(status).toBe(200);
      return body["v1/transaction"];
    },
    /** The three calls of a direct payment: create, token, push. */
    async pay(amount: number, mode = "mtn_open"): Promise<WireTransaction> {
      const trx = await this.create(amount);
      const token = await call("POST", `/v1/transactions/${trx.id}/token`);
      expect(token.status).toBe(200);
      const push = await call("POST", `/v1/${mode}`, { token: token.body.token });
      expect(push.status).toBe(200);
      return trx;
    },
  };
}

function transactionBody(amount: number, extra: Record<string, unknown> = {}) {
  return {
    description: "Order 42",
    amount,
    currency: { iso: "XOF" },
    custom_metadata: { payment_id: "pay_01TEST" },
    customer: { firstname: "Awa", lastname: "Dossou", email: "awa@example.com", phone_number: { number: "+22997000001", country: "bj" } },
    ...extra,
  };
}

async function newAccount(run: Running, webhookUrl?: string): Promise<Account> {
  const response = await fetch(`${run.base}/_sim/accounts`, { method: "POST" });
  expect(response.status).toBe(201);
  const account = (await response.json()) as Account;
  if (webhookUrl) {
    const set = await fetch(`${run.base}/_sim/accounts/${account.secretKey}/webhook`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: webhookUrl }),
    });
    expect(set.status).toBe(200);
  }
  return account;
}

let run: Running;
let receiver: ReturnType<typeof startReceiver>;

beforeAll(() => {
  run = startSimulator();
  receiver = startReceiver();
});

afterAll(async () => {
  await run.stop();
  await receiver.stop();
});

describe("provider A simulator: accounts and authentication", () => {
  it("answers its liveness route", async () => {
    const response = await fetch(`${run.base}/_sim/health`);
    expect(await response.json()).toEqual({ status: "ok", simulator: "providerA" });
  });

  it('is what createSimulatorApp("providerA") builds for the gateway\'s mount and `passerelle sandbox`', async () => {
    const simulator = createSimulatorApp("providerA", { approveDelayMs: 10 });
    expect("close" in simulator).toBe(true);
    const response = await simulator.handle(new Request("http://localhost/v1/transactions/1"));
    expect(response.status).toBe(401);
    if ("close" in simulator) simulator.close();
  });

  it("creates test accounts with random sandbox keys", async () => {
    const first = await newAccount(run);
    const second = await newAccount(run);
    expect(first.secretKey).toMatch(/^sk_sandbox_[A-Za-z0-9]{20,}$/);
    expect(first.webhookSecret).toMatch(/^wh_sandbox_[A-Za-z0-9]{20,}$/);
    expect(second.secretKey).not.toBe(first.secretKey);
    expect(second.webhookSecret).not.toBe(first.webhookSecret);
  });

  it("refuses a wrong or missing secret key with 401 in the provider's error shape", async () => {
    for (const authorization of ["Bearer sk_sandbox_nope", "", "Basic abc"]) {
      const response = await fetch(`${run.base}/v1/transactions`, {
        method: "POST",
        headers: { authorization, "content-type": "application/json" },
        body: JSON.stringify(transactionBody(500)),
      });
      expect(response.status).toBe(401);
      const body = await response.json();
      expect(typeof body.message).toBe("string");
    }
    const read = await fetch(`${run.base}/v1/transactions/1`);
    expect(read.status).toBe(401);
  });

  it("refuses a webhook target for an unknown account, or one that is not an http(s) URL", async () => {
    const unknown = await fetch(`${run.base}/_sim/accounts/sk_sandbox_unknown/webhook`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: "http://127.0.0.1:1/hook" }),
    });
    expect(unknown.status).toBe(404);
    const account = await newAccount(run);
    const bad = await fetch(`${run.base}/_sim/accounts/${account.secretKey}/webhook`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: "ftp://127.0.0.1/hook" }),
    });
    expect(bad.status).toBe(422);
    expect((await bad.json()).errors.url).toBeArray();
  });
});

describe("POST /v1/transactions", () => {
  it("creates a pending transaction with the provider's fields and an increasing integer id", async () => {
    const api = client(run, await newAccount(run));
    const first = await api.create(500, { mode: "mtn_open", callback_url: "http://127.0.0.1/return" });
    const second = await api.create(700);
    expect(first).toMatchObject({
      klass: "v1/transaction",
      amount: 500,
      description: "Order 42",
      status: "pending",
      mode: "mtn_open",
      currency_id: 1,
      callback_url: "http://127.0.0.1/return",
      custom_metadata: { payment_id: "pay_01TEST" },
      approved_at: null,
      declined_at: null,
      canceled_at: null,
      last_error_code: null,
    });
    expect(Number.isInteger(first.id)).toBe(true);
    expect(second.id).toBeGreaterThan(first.id);
    expect(first.reference).toMatch(/^trx_/);
    expect(Date.parse(first.created_at as string)).not.toBeNaN();
    expect(first.updated_at).toBe(first.created_at);
  });

  it("reports missing description and amount, a bad amount and a bad currency in the provider's error shape", async () => {
    const api = client(run, await newAccount(run));
    const missing = await api.call("POST", "/v1/transactions", { currency: { iso: "XOF" } });
    expect(missing.status).toBe(422);
    expect(typeof missing.body.message).toBe("string");
    expect(missing.body.errors.description).toBeArray();
    expect(missing.body.errors.amount).toBeArray();

    for (const amount of [0, -5, 10.5, "500"]) {
      const bad = await api.call("POST", "/v1/transactions", transactionBody(500, { amount }));
      expect(bad.status).toBe(422);
      expect(Object.keys(bad.body.errors)).toEqual(["amount"]);
    }

    for (const currency of [{ iso: "EUR" }, "XOF", undefined]) {
      const bad = await api.call("POST", "/v1/transactions", transactionBody(500, { currency }));
      expect(bad.status).toBe(422);
      expect(Object.keys(bad.body.errors)).toEqual(["currency"]);
    }

    const malformed = await fetch(`${run.base}/v1/transactions`, {
      method: "POST",
      headers: { authorization: `Bearer ${(await newAccount(run)).secretKey}`, "content-type": "application/json" },
      body: "{not json",
    });
    expect(malformed.status).toBe(400);
    expect(typeof (await malformed.json()).message).toBe("string");
  });

  it("honours Idempotency-Key per account: the same key returns the same transaction", async () => {
    const account = await newAccount(run);
    const api = client(run, account);
    const first = await api.create(800, {}, { "idempotency-key": "pay_01IDEMPOTENT" });
    const again = await api.create(800, {}, { "idempotency-key": "pay_01IDEMPOTENT" });
    expect(again.id).toBe(first.id);
    expect(again.reference).toBe(first.reference);

    const otherKey = await api.create(800, {}, { "idempotency-key": "pay_01OTHER" });
    expect(otherKey.id).not.toBe(first.id);
    const noKey = await api.create(800);
    expect(noKey.id).not.toBe(first.id);

    const otherAccount = await client(run, await newAccount(run)).create(800, {}, { "idempotency-key": "pay_01IDEMPOTENT" });
    expect(otherAccount.id).not.toBe(first.id);

    const conflicting = await api.call("POST", "/v1/transactions", transactionBody(900), { "idempotency-key": "pay_01IDEMPOTENT" });
    expect(conflicting.status).toBe(409);
    expect(typeof conflicting.body.message).toBe("string");
  });

  it("keeps merchant_reference unique per account and finds a transaction by it", async () => {
    const api = client(run, await newAccount(run));
    const trx = await api.create(600, { merchant_reference: "pay_01MERCHANT" });
    const duplicate = await api.call("POST", "/v1/transactions", transactionBody(600, { merchant_reference: "pay_01MERCHANT" }));
    expect(duplicate.status).toBe(422);
    expect(duplicate.body.errors.merchant_reference).toBeArray();
    const found = await api.call("GET", "/v1/transactions/merchant/pay_01MERCHANT");
    expect(found.status).toBe(200);
    expect(found.body["v1/transaction"].id).toBe(trx.id);
    const elsewhere = await client(run, await newAccount(run)).call("GET", "/v1/transactions/merchant/pay_01MERCHANT");
    expect(elsewhere.status).toBe(404);
  });
});

describe("token and USSD push", () => {
  it("hands out one token per transaction with a URL", async () => {
    const api = client(run, await newAccount(run));
    const trx = await api.create(1500);
    const first = await api.call("POST", `/v1/transactions/${trx.id}/token`);
    const second = await api.call("POST", `/v1/transactions/${trx.id}/token`);
    expect(first.status).toBe(200);
    expect(typeof first.body.token).toBe("string");
    expect(first.body.url).toStartWith("http://127.0.0.1:");
    expect(second.body.token).toBe(first.body.token);
  });

  it("accepts every wire mode of providers.md for a phone of its country", async () => {
    const modes = { mtn_open: "bj", moov: "bj", sbin: "bj", moov_tg: "tg", togocel: "tg", mtn_open_gn: "gn", mtn_ci: "ci", airtel_ne: "ne", free_sn: "sn" };
    const api = client(run, await newAccount(run));
    for (const [mode, country] of Object.entries(modes)) {
      const trx = await api.create(2000);
      const { body: token } = await api.call("POST", `/v1/transactions/${trx.id}/token`);
      const push = await api.call("POST", `/v1/${mode}`, { token: token.token, phone_number: { number: "+22900000000", country } });
      expect(push.status).toBe(200);
      expect((await api.read(trx.id)).mode).toBe(mode);
    }
  });

  it("refuses an unknown mode, an unknown token, another account's token and a phone outside the mode's country", async () => {
    const api = client(run, await newAccount(run));
    const trx = await api.create(2000);
    const { body: token } = await api.call("POST", `/v1/transactions/${trx.id}/token`);

    const unknownMode = await api.call("POST", "/v1/mtn_mars", { token: token.token });
    expect(unknownMode.status).toBe(404);
    expect(typeof unknownMode.body.message).toBe("string");

    const unknownToken = await api.call("POST", "/v1/mtn_open", { token: "not-a-token" });
    expect(unknownToken.status).toBe(422);
    expect(unknownToken.body.errors.token).toBeArray();

    const missingToken = await api.call("POST", "/v1/mtn_open", {});
    expect(missingToken.status).toBe(422);
    expect(missingToken.body.errors.token).toBeArray();

    const stolen = await client(run, await newAccount(run)).call("POST", "/v1/mtn_open", { token: token.token });
    expect(stolen.status).toBe(422);

    const wrongCountry = await api.call("POST", "/v1/mtn_ci", { token: token.token });
    expect(wrongCountry.status).toBe(422);
    expect(wrongCountry.body.errors.phone_number).toBeArray();
    expect((await api.read(trx.id)).mode).toBeNull();
  });

  it("answers a repeated push the same way without pushing again", async () => {
    const api = client(run, await newAccount(run));
    const trx = await api.create(3000);
    const { body: token } = await api.call("POST", `/v1/transactions/${trx.id}/token`);
    const first = await api.call("POST", "/v1/moov", { token: token.token });
    const again = await api.call("POST", "/v1/moov", { token: token.token });
    expect(first.status).toBe(200);
    expect(again).toEqual(first);
    const otherMode = await api.call("POST", "/v1/mtn_open", { token: token.token });
    expect(otherMode.status).toBe(422);
  });
});

describe("sandbox outcomes by amount (spec §8)", () => {
  it("approves a payment below 1000 after the configured delay", async () => {
    const api = client(run, await newAccount(run));
    const trx = await api.pay(999);
    expect((await api.read(trx.id)).status).toBe("pending");
    const settled = await waitUntil(
      async () => {
        const t = await api.read(trx.id);
        return t.status !== "pending" ? t : undefined;
      },
      { what: "the transaction to settle", timeoutMs: 3_000, intervalMs: 10 },
    );
    expect(settled.status).toBe("approved");
    expect(settled.approved_at).toBeString();
    expect(settled.last_error_code).toBeNull();
    expect(Date.parse(settled.approved_at as string) - Date.parse(settled.created_at as string)).toBeGreaterThanOrEqual(APPROVE_DELAY_MS - 5);
  });

  it("leaves 1000 and 5000 pending until the console decides", async () => {
    const api = client(run, await newAccount(run));
    const low = await api.pay(1000);
    const high = await api.pay(5000);
    await Bun.sleep(APPROVE_DELAY_MS * 4);
    expect((await api.read(low.id)).status).toBe("pending");
    expect((await api.read(high.id)).status).toBe("pending");
  });

  it("declines a payment above 5000 with a last_error_code", async () => {
    const api = client(run, await newAccount(run));
    const trx = await api.pay(5001);
    const settled = await waitUntil(
      async () => {
        const t = await api.read(trx.id);
        return t.status !== "pending" ? t : undefined;
      },
      { what: "the transaction to settle", timeoutMs: 3_000, intervalMs: 10 },
    );
    expect(settled.status).toBe("declined");
    expect(settled.last_error_code).toBe("INSUFFICIENT_FUND_ERROR");
    expect(settled.declined_at).toBeString();
    expect(settled.approved_at).toBeNull();
  });

  it("does nothing to a transaction that was never pushed", async () => {
    const api = client(run, await newAccount(run));
    const trx = await api.create(100);
    await Bun.sleep(APPROVE_DELAY_MS * 3);
    expect((await api.read(trx.id)).status).toBe("pending");
  });
});

describe("GET /v1/transactions/{id}", () => {
  it("hides another account's transaction behind a 404 in the provider's error shape", async () => {
    const owner = client(run, await newAccount(run));
    const trx = await owner.create(2500);
    const stranger = client(run, await newAccount(run));
    for (const path of [`/v1/transactions/${trx.id}`, "/v1/transactions/999999", "/v1/transactions/abc"]) {
      const { status, body } = await stranger.call("GET", path);
      expect(status).toBe(404);
      expect(typeof body.message).toBe("string");
      expect(JSON.stringify(body)).not.toContain(trx.reference as string);
    }
    const token = await stranger.call("POST", `/v1/transactions/${trx.id}/token`);
    expect(token.status).toBe(404);
  });
});

describe("webhooks", () => {
  it("signs and sends transaction.approved to the account's webhook URL", async () => {
    const account = await newAccount(run, receiver.url);
    const api = client(run, account);
    const trx = await api.pay(500);
    const hooks = await waitUntil(
      () => {
        const list = receiver.received.filter((hook) => hook.body.entity.id === trx.id);
        return list.length > 0 ? list : undefined;
      },
      { what: "its webhook", timeoutMs: 3_000, intervalMs: 10 },
    );
    expect(hooks).toHaveLength(1);
    const [hook] = hooks;
    expect(hook!.body.name).toBe("transaction.approved");
    expect(hook!.body.entity).toMatchObject({ klass: "v1/transaction", id: trx.id, status: "approved", amount: 500 });
    expect(hook!.signature).toMatch(/^t=\d+,s=[0-9a-f]{64}$/);
    expect(verifySignature(hook!.signature, hook!.rawBody, account.webhookSecret)).toBe(true);
    expect(verifySignature(hook!.signature, hook!.rawBody, (await newAccount(run)).webhookSecret)).toBe(false);
    expect(verifySignature(hook!.signature, `${hook!.rawBody} `, account.webhookSecret)).toBe(false);
  });

  it("sends transaction.declined for an amount above 5000", async () => {
    const account = await newAccount(run, receiver.url);
    const trx = await client(run, account).pay(7000);
    const hooks = await waitUntil(
      () => {
        const list = receiver.received.filter((hook) => hook.body.entity.id === trx.id);
        return list.length > 0 ? list : undefined;
      },
      { what: "its webhook", timeoutMs: 3_000, intervalMs: 10 },
    );
    expect(hooks[0]!.body.name).toBe("transaction.declined");
    expect(hooks[0]!.body.entity.last_error_code).toBe("INSUFFICIENT_FUND_ERROR");
    expect(verifySignature(hooks[0]!.signature, hooks[0]!.rawBody, account.webhookSecret)).toBe(true);
  });

  it("retries while the receiver answers 500, signing each attempt", async () => {
    const own = startSimulator();
    const ownReceiver = startReceiver();
    try {
      const account = await newAccount(own, ownReceiver.url);
      ownReceiver.failFirst(2);
      const trx = await client(own, account).pay(300);
      const hooks = await waitUntil(
        () => {
          const list = ownReceiver.received;
          return list.some((hook) => hook.answeredStatus === 200) ? list : undefined;
        },
        { what: "a webhook answered 200", timeoutMs: 3_000, intervalMs: 10 },
      );
      expect(hooks.map((hook) => hook.answeredStatus)).toEqual([500, 500, 200]);
      for (const hook of hooks) {
        expect(hook.body.entity.id).toBe(trx.id);
        expect(hook.body.name).toBe("transaction.approved");
        expect(verifySignature(hook.signature, hook.rawBody, account.webhookSecret)).toBe(true);
      }
      await own.simulator.webhooksIdle();
      const log = await (await fetch(`${own.base}/_sim/accounts/${account.secretKey}/webhook`)).json();
      expect(log.url).toBe(ownReceiver.url);
      expect(log.deliveries).toEqual([
        expect.objectContaining({ event: "transaction.approved", transactionId: trx.id, status: "delivered", attempts: 3, lastResponseStatus: 200 }),
      ]);
    } finally {
      await own.stop();
      await ownReceiver.stop();
    }
  });

  it("gives up after a bounded number of attempts", async () => {
    const own = startSimulator({ webhookRetryDelaysMs: [10, 10] });
    const ownReceiver = startReceiver();
    try {
      const account = await newAccount(own, ownReceiver.url);
      ownReceiver.failAlways(true);
      await client(own, account).pay(300);
      await waitUntil(
        () => {
          const count = ownReceiver.received.length;
          return count >= 3 ? count : undefined;
        },
        { what: "three webhook attempts", timeoutMs: 3_000, intervalMs: 10 },
      );
      await own.simulator.webhooksIdle();
      await Bun.sleep(50);
      expect(ownReceiver.received).toHaveLength(3);
      const log = await (await fetch(`${own.base}/_sim/accounts/${account.secretKey}/webhook`)).json();
      expect(log.deliveries[0]).toMatchObject({ status: "failed", attempts: 3, lastResponseStatus: 500 });
    } finally {
      await own.stop();
      await ownReceiver.stop();
    }
  });

  it("answers the API at once even when the webhook target hangs", async () => {
    const hanging = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Promise<Response>(() => {}) });
    const own = startSimulator({ approveDelayMs: 0 });
    try {
      const account = await newAccount(own, `${hanging.url}hook`);
      const api = client(own, account);
      const trx = await api.pay(100);
      await waitUntil(
        async () => {
          const t = await api.read(trx.id);
          return t.status === "approved" ? t : undefined;
        },
        { what: "the transaction to be approved", timeoutMs: 3_000, intervalMs: 10 },
      );
      const started = performance.now();
      await api.create(200);
      expect(performance.now() - started).toBeLessThan(500);
    } finally {
      await own.stop();
      await hanging.stop(true);
    }
  });

  it("sends nothing for an account without a webhook URL", async () => {
    const account = await newAccount(run);
    const before = receiver.received.length;
    const trx = await client(run, account).pay(400);
    await waitUntil(
      async () => {
        const t = await client(run, account).read(trx.id);
        return t.status === "approved" ? t : undefined;
      },
      { what: "the transaction to be approved", timeoutMs: 3_000, intervalMs: 10 },
    );
    await run.simulator.webhooksIdle();
    const log = await (await fetch(`${run.base}/_sim/accounts/${account.secretKey}/webhook`)).json();
    expect(log).toEqual({ url: null, deliveries: [] });
    expect(receiver.received.filter((hook) => hook.body.entity.id === trx.id)).toHaveLength(0);
    expect(receiver.received.length).toBeGreaterThanOrEqual(before);
  });
});

/** The console's forms for one transaction: action URL by button. */
function consoleForms(html: string, transactionId: number): Record<string, string> {
  const forms: Record<string, string> = {};
  for (const match of html.matchAll(/<form method="post" action="([^"]+)">\s*<button[^>]*data-action="(\w+)"[^>]*data-transaction-id="(\d+)"/g)) {
    if (Number(match[3]) === transactionId) forms[match[2]!] = match[1]!;
  }
  return forms;
}

describe("sandbox console", () => {
  it("lists a pending payment with its id, amount, payment_method, phone, description and Approve / Decline buttons", async () => {
    const api = client(run, await newAccount(run));
    const trx = await api.create(4200, { description: "Console <check> & co" });
    const { body: token } = await api.call("POST", `/v1/transactions/${trx.id}/token`);
    await api.call("POST", "/v1/moov", { token: token.token });

    const response = await fetch(`${run.base}/console`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toContain("text/html");
    const html = await response.text();
    const row = html.slice(html.indexOf(`<tr id="trx-${trx.id}"`));
    expect(row).toContain("4,200 XOF");
    expect(row).toContain("<code>mnoB</code>"); // the merchant's payment_method of the mode pushed (moov)
    expect(row).toContain("+22997000001");
    expect(row).toContain("Console &lt;check&gt; &amp; co");
    expect(html).not.toContain("<check>");
    expect(html).not.toMatch(/<script|<link|src="http/);
    expect(consoleForms(html, trx.id)).toEqual({
      approve: `_sim/transactions/${trx.id}/approve`,
      decline: `_sim/transactions/${trx.id}/decline`,
    });
  });

  it("approves through the page's own form, redirects back to the console and sends the webhook", async () => {
    const account = await newAccount(run, receiver.url);
    const api = client(run, account);
    const trx = await api.pay(2500);
    const consoleUrl = `${run.base}/console`;
    const forms = consoleForms(await (await fetch(consoleUrl)).text(), trx.id);

    const submitted = await fetch(new URL(forms.approve!, consoleUrl), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "action=approve",
      redirect: "manual",
    });
    expect(submitted.status).toBe(303);
    const back = new URL(submitted.headers.get("location")!, submitted.url);
    expect(back.pathname).toBe("/console");
    const page = await (await fetch(back)).text();
    expect(page).toContain(`Transaction ${trx.id} approved.`);
    expect(consoleForms(page, trx.id)).toEqual({});

    expect((await api.read(trx.id)).status).toBe("approved");
    const hooks = await waitUntil(
      () => {
        const list = receiver.received.filter((hook) => hook.body.entity.id === trx.id);
        return list.length > 0 ? list : undefined;
      },
      { what: "its webhook", timeoutMs: 3_000, intervalMs: 10 },
    );
    expect(hooks[0]!.body.name).toBe("transaction.approved");
    expect(verifySignature(hooks[0]!.signature, hooks[0]!.rawBody, account.webhookSecret)).toBe(true);

    const twice = await fetch(new URL(forms.approve!, consoleUrl), {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: "",
      redirect: "manual",
    });
    expect(twice.status).toBe(303);
    expect(await (await fetch(new URL(twice.headers.get("location")!, twice.url))).text()).toContain(
      `Transaction ${trx.id} is approved: it cannot be approved.`,
    );
  });

  it("declines through the JSON control route with a last_error_code and sends transaction.declined", async () => {
    const account = await newAccount(run, receiver.url);
    const api = client(run, account);
    const trx = await api.pay(5000);
    const declined = await fetch(`${run.base}/_sim/transactions/${trx.id}/decline`, { method: "POST" });
    expect(declined.status).toBe(200);
    expect((await declined.json())["v1/transaction"]).toMatchObject({ id: trx.id, status: "declined" });
    const read = await api.read(trx.id);
    expect(read.status).toBe("declined");
    expect(read.last_error_code).toBeString();
    expect(read.declined_at).toBeString();
    const hooks = await waitUntil(
      () => {
        const list = receiver.received.filter((hook) => hook.body.entity.id === trx.id);
        return list.length > 0 ? list : undefined;
      },
      { what: "its webhook", timeoutMs: 3_000, intervalMs: 10 },
    );
    expect(hooks.map((hook) => hook.body.name)).toEqual(["transaction.declined"]);

    const again = await fetch(`${run.base}/_sim/transactions/${trx.id}/approve`, { method: "POST" });
    expect(again.status).toBe(409);
    expect(typeof (await again.json()).message).toBe("string");
    const unknown = await fetch(`${run.base}/_sim/transactions/999999/approve`, { method: "POST" });
    expect(unknown.status).toBe(404);
  });

  it("cancels a pending payment and refunds an approved one, each with its webhook", async () => {
    const account = await newAccount(run, receiver.url);
    const api = client(run, account);
    const canceled = await api.pay(3000);
    expect((await fetch(`${run.base}/_sim/transactions/${canceled.id}/cancel`, { method: "POST" })).status).toBe(200);
    expect((await api.read(canceled.id)).status).toBe("canceled");
    const approved = await api.pay(3000);
    await fetch(`${run.base}/_sim/transactions/${approved.id}/approve`, { method: "POST" });
    expect((await fetch(`${run.base}/_sim/transactions/${approved.id}/refund`, { method: "POST" })).status).toBe(200);
    expect((await api.read(approved.id)).status).toBe("refunded");
    const names = await waitUntil(
      () => {
        const list = receiver.received.filter((hook) => [canceled.id, approved.id].includes(hook.body.entity.id)).map((hook) => hook.body.name);
        return list.length >= 3 ? list : undefined;
      },
      { what: "three webhooks", timeoutMs: 3_000, intervalMs: 10 },
    );
    expect(names.sort()).toEqual(["transaction.approved", "transaction.canceled", "transaction.refunded"]);
  });

  it("works under the gateway's mount path: relative form actions and redirect stay under it", async () => {
    const simulator = createProviderASimulator({ approveDelayMs: APPROVE_DELAY_MS, basePath: "/sandbox/providerA" });
    const gateway = new Elysia().mount("/sandbox/providerA", simulator.fetch);
    const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: (request) => gateway.handle(request) });
    try {
      const mounted: Running = { simulator, base: `${server.url.toString().replace(/\/$/, "")}/sandbox/providerA`, stop: async () => {} };
      const api = client(mounted, await newAccount(mounted));
      const trx = await api.pay(1200);
      const token = await api.call("POST", `/v1/transactions/${trx.id}/token`);
      expect(token.body.url).toBe(`${mounted.base}/console#trx-${trx.id}`);
      const consoleUrl = `${mounted.base}/console`;
      const forms = consoleForms(await (await fetch(consoleUrl)).text(), trx.id);
      const action = new URL(forms.decline!, consoleUrl);
      expect(action.pathname).toBe(`/sandbox/providerA/_sim/transactions/${trx.id}/decline`);
      const submitted = await fetch(action, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "", redirect: "manual" });
      expect(submitted.status).toBe(303);
      expect(new URL(submitted.headers.get("location")!, action).pathname).toBe("/sandbox/providerA/console");
      expect((await api.read(trx.id)).status).toBe("declined");
    } finally {
      simulator.close();
      await server.stop(true);
    }
  });

  it("lists transactions as JSON for tests", async () => {
    const api = client(run, await newAccount(run));
    const trx = await api.pay(1111);
    const { transactions } = await (await fetch(`${run.base}/_sim/transactions?status=pending`)).json();
    expect(transactions.find((t: WireTransaction) => t.id === trx.id)).toMatchObject({
      status: "pending",
      push_sent: true,
      phone_number: { number: "+22997000001", country: "bj" },
    });
  });
});

describe("close()", () => {
  it("cancels the sandbox outcomes still waiting", async () => {
    const own = startSimulator({ approveDelayMs: 100 });
    const api = client(own, await newAccount(own));
    const trx = await api.pay(100);
    own.simulator.close();
    await Bun.sleep(200);
    expect((await api.read(trx.id)).status).toBe("pending");
    await own.stop();
  });
});
